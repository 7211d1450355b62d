//! Parameters and PCEs, loaded once per circuit and shared.
//!
//! Parameters come from the configured parameter directory under their v28 file names. PCEs
//! come from memory, else from `<cache>/pce/<identifier>.pce` when that file is intact and
//! for the same circuit, else they are extracted from storage-proofs' blank circuit and saved
//! there for the next start.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cuzk_groth16::{Parameters, Pce, PointCheck};

use crate::circuit::CircuitSpec;
use crate::error::{Error, Result};

/// Where filecoin-proofs looks for parameters (and verifying keys) unless configured otherwise.
pub const DEFAULT_PARAMETER_DIR: &str = "/var/tmp/filecoin-proof-parameters";

/// Points filecoin-proofs' verifiers at `dir` (and its SDR parent cache at `parent_cache`).
///
/// filecoin-proofs reads its parameter directory once per process from
/// `FIL_PROOFS_PARAMETER_CACHE`, on first use. This sets that variable to our configured
/// directory (call it at start, before other threads exist) and checks filecoin-proofs
/// agrees; an error when it had already settled on another directory.
pub fn bind_filecoin_parameter_dir(dir: &Path, parent_cache: Option<&Path>) -> Result<()> {
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", dir);
    if let Some(p) = parent_cache {
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", p);
    }
    let settled = PathBuf::from(&storage_proofs_core::settings::SETTINGS.parameter_cache);
    let same = match (settled.canonicalize(), dir.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => settled == dir,
    };
    if !same {
        return Err(Error::Params {
            circuit: "*".into(),
            path: dir.into(),
            reason: format!(
                "filecoin-proofs already reads parameters from {} in this process",
                settled.display()
            ),
        });
    }
    Ok(())
}

/// Loaded parameters and PCEs, keyed by circuit identifier.
#[derive(Debug)]
pub struct CircuitStore {
    params_dir: PathBuf,
    pce_dir: PathBuf,
    check: PointCheck,
    params: Mutex<HashMap<String, Arc<Parameters>>>,
    pces: Mutex<HashMap<String, Arc<Pce>>>,
}

impl CircuitStore {
    /// A store reading parameters from `params_dir` and keeping PCEs under `cache_dir/pce`.
    pub fn new(params_dir: impl Into<PathBuf>, cache_dir: &Path) -> Self {
        CircuitStore {
            params_dir: params_dir.into(),
            pce_dir: cache_dir.join("pce"),
            check: PointCheck::OnCurve,
            params: Mutex::new(HashMap::new()),
            pces: Mutex::new(HashMap::new()),
        }
    }

    /// The parameter directory.
    pub fn params_dir(&self) -> &Path {
        &self.params_dir
    }

    /// Path of a circuit's `.params` file.
    pub fn params_path(&self, spec: &CircuitSpec) -> PathBuf {
        self.params_dir.join(spec.params_file_name())
    }

    /// Path of a circuit's PCE file.
    pub fn pce_path(&self, spec: &CircuitSpec) -> PathBuf {
        self.pce_dir.join(spec.pce_file_name())
    }

    /// The circuit's parameters, read on first use.
    pub fn params(&self, spec: &CircuitSpec) -> Result<Arc<Parameters>> {
        if let Some(p) = lock(&self.params).get(&spec.identifier) {
            return Ok(p.clone());
        }
        let path = self.params_path(spec);
        if !path.exists() {
            return Err(Error::Params {
                circuit: spec.srs_id(),
                path,
                reason: "parameter file not found".into(),
            });
        }
        let p = Arc::new(Parameters::read_file(&path, self.check)?);
        lock(&self.params).insert(spec.identifier.clone(), p.clone());
        Ok(p)
    }

    /// Whether the circuit's parameters are in memory.
    pub fn params_loaded(&self, spec: &CircuitSpec) -> bool {
        lock(&self.params).contains_key(&spec.identifier)
    }

    /// Drops the circuit's parameters from memory; true when they were loaded.
    pub fn evict_params(&self, spec: &CircuitSpec) -> bool {
        lock(&self.params).remove(&spec.identifier).is_some()
    }

    /// The circuit's PCE: from memory, else from disk, else extracted (and saved).
    pub fn pce(&self, spec: &CircuitSpec) -> Result<Arc<Pce>> {
        if let Some(p) = lock(&self.pces).get(&spec.identifier) {
            return Ok(p.clone());
        }
        let path = self.pce_path(spec);
        let pce = match Pce::load(&path, Some(&spec.identifier)) {
            Ok(p) => p,
            Err(_) => {
                let p = spec.extract_pce()?;
                std::fs::create_dir_all(&self.pce_dir).map_err(|e| Error::io(&self.pce_dir, e))?;
                p.save(&path)?;
                p
            }
        };
        let pce = Arc::new(pce);
        lock(&self.pces).insert(spec.identifier.clone(), pce.clone());
        Ok(pce)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
