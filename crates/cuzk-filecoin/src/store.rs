//! Parameters and PCEs, loaded once per circuit and shared.
//!
//! Parameters come from the configured parameter directory under their v28 file names. PCEs
//! come from memory, else from `<cache>/pce/<identifier>.pce` when that file is intact and
//! for the same circuit, else they are extracted from storage-proofs' blank circuit and saved
//! there for the next start. A caller that must not wait for an extraction (a submit) asks
//! [`CircuitStore::pce_or_extract_in_background`]: it gets the PCE when it is in memory or on
//! disk, and otherwise starts the extraction on a background thread and proceeds without.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cuzk_engine::{MemoryBudget, Reservation};
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

/// Where a circuit's parameters are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// In host memory.
    Hot,
    /// Only on disk.
    Cold,
}

/// One circuit's parameters, for status pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SrsEntry {
    /// Short id ("porep-2k").
    pub srs_id: String,
    /// storage-proofs' identifier.
    pub identifier: String,
    /// Where they are.
    pub tier: Tier,
    /// Bytes (file size when cold).
    pub bytes: u64,
    /// Jobs holding them now.
    pub refs: usize,
    /// The loaded copy's [`ParameterSource::source_id`](cuzk_groth16::ParameterSource::source_id),
    /// which device backends key their resident copies by.
    pub source_id: Option<u64>,
}

struct Entry<T> {
    value: Arc<T>,
    srs_id: String,
    bytes: u64,
    last_used: Instant,
    _mem: Option<Reservation>,
}

/// Values kept in memory, charged to a budget, evicted least-recently-used first when
/// nothing else holds them. An entry removed while jobs still hold it keeps its reservation
/// (in `retired`) until the last holder drops it, so the budget never counts memory as free
/// that is still in use.
struct Resident<T> {
    entries: Mutex<HashMap<String, Entry<T>>>,
    retired: Mutex<Vec<Entry<T>>>,
}

impl<T> Resident<T> {
    fn new() -> Self {
        Resident {
            entries: Mutex::new(HashMap::new()),
            retired: Mutex::new(Vec::new()),
        }
    }

    /// Releases retired entries nobody holds any more; true when one was released.
    fn release_retired(&self) -> bool {
        let mut r = lock(&self.retired);
        let before = r.len();
        r.retain(|e| Arc::strong_count(&e.value) > 1);
        r.len() < before
    }

    fn contains(&self, id: &str) -> bool {
        lock(&self.entries).contains_key(id)
    }

    fn get(&self, id: &str) -> Option<Arc<T>> {
        let mut m = lock(&self.entries);
        let e = m.get_mut(id)?;
        e.last_used = Instant::now();
        Some(e.value.clone())
    }

    /// Drops the least recently used entry nobody else holds; false when there is none.
    fn evict_one(&self) -> bool {
        let mut m = lock(&self.entries);
        let victim = m
            .iter()
            .filter(|(_, e)| Arc::strong_count(&e.value) == 1)
            .min_by_key(|(_, e)| e.last_used)
            .map(|(k, _)| k.clone());
        victim.map(|k| m.remove(&k)).is_some()
    }

    /// Removes the entry; while jobs still hold it, its memory stays reserved until they
    /// drop it.
    fn remove(&self, id: &str) -> Option<u64> {
        let e = lock(&self.entries).remove(id)?;
        let bytes = e.bytes;
        if Arc::strong_count(&e.value) > 1 {
            lock(&self.retired).push(e);
        }
        Some(bytes)
    }

    fn insert(
        &self,
        id: &str,
        srs_id: String,
        value: Arc<T>,
        bytes: u64,
        mem: Option<Reservation>,
    ) {
        lock(&self.entries).insert(
            id.to_owned(),
            Entry {
                value,
                srs_id,
                bytes,
                last_used: Instant::now(),
                _mem: mem,
            },
        );
    }
}

/// Loaded parameters and PCEs, keyed by circuit identifier.
///
/// With a memory budget, every loaded entry holds a reservation of its size; when a load does
/// not fit, unreferenced entries are evicted least-recently-used first, and when that is not
/// enough the load fails (it never waits: the budget may be held by partitions that wait for
/// these very parameters).
pub struct CircuitStore {
    params_dir: PathBuf,
    pce_dir: PathBuf,
    check: PointCheck,
    budget: Option<Arc<MemoryBudget>>,
    params: Resident<Parameters>,
    pces: Resident<Pce>,
    /// Held while a PCE is extracted and saved: one extraction at a time, and never two
    /// writers of one PCE file.
    extracting: Mutex<()>,
    /// One lock per circuit whose parameters are being read: concurrent first requests of a
    /// circuit read its file once and share the copy.
    loading: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Circuits whose PCE a background thread is extracting now.
    in_background: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for CircuitStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircuitStore")
            .field("params_dir", &self.params_dir)
            .field("pce_dir", &self.pce_dir)
            .finish_non_exhaustive()
    }
}

impl CircuitStore {
    /// A store reading parameters from `params_dir` and keeping PCEs under `cache_dir/pce`.
    pub fn new(params_dir: impl Into<PathBuf>, cache_dir: &Path) -> Self {
        CircuitStore {
            params_dir: params_dir.into(),
            pce_dir: cache_dir.join("pce"),
            check: PointCheck::OnCurve,
            budget: None,
            params: Resident::new(),
            pces: Resident::new(),
            extracting: Mutex::new(()),
            loading: Mutex::new(HashMap::new()),
            in_background: Mutex::new(HashSet::new()),
        }
    }

    /// Charges what this store loads to `budget`.
    pub fn with_budget(mut self, budget: Arc<MemoryBudget>) -> Self {
        self.budget = Some(budget);
        self
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

    /// Grows `held` to at least `bytes` from the budget (nothing without a budget).
    fn reserve_to(
        &self,
        spec: &CircuitSpec,
        held: &mut Option<Reservation>,
        bytes: u64,
    ) -> Result<()> {
        let have = held.as_ref().map_or(0, Reservation::bytes);
        if bytes <= have {
            return Ok(());
        }
        match (self.reserve(spec, bytes - have)?, held) {
            (Some(more), Some(h)) => h.absorb(more).map_err(|_| Error::Params {
                circuit: spec.srs_id(),
                path: self.pce_path(spec),
                reason: "reservations of two budgets".into(),
            }),
            (more, h) => {
                *h = h.take().or(more);
                Ok(())
            }
        }
    }

    fn reserve(&self, spec: &CircuitSpec, bytes: u64) -> Result<Option<Reservation>> {
        let Some(b) = &self.budget else {
            return Ok(None);
        };
        loop {
            let got = b.try_acquire(bytes).map_err(|e| Error::Params {
                circuit: spec.srs_id(),
                path: self.params_path(spec),
                reason: e.to_string(),
            })?;
            if let Some(r) = got {
                return Ok(Some(r));
            }
            if !self.reclaim_one() {
                return Err(Error::Params {
                    circuit: spec.srs_id(),
                    path: self.params_path(spec),
                    reason: format!(
                        "{bytes} bytes do not fit the host budget now ({} of {} in use, nothing evictable)",
                        b.used(),
                        b.total()
                    ),
                });
            }
        }
    }

    /// Frees one item of host memory no job uses: a retired copy its last holder dropped,
    /// else the least recently used unreferenced parameters, else PCE. False when there is
    /// nothing to free.
    pub fn reclaim_one(&self) -> bool {
        self.params.release_retired()
            || self.pces.release_retired()
            || self.params.evict_one()
            || self.pces.evict_one()
    }

    /// [`CircuitStore::reclaim_one`] for an engine whose partitions share this store's
    /// budget (`Engine::set_reclaimer`); does nothing once the store is gone.
    pub fn reclaimer(self: &Arc<Self>) -> impl Fn() -> bool + Send + Sync + 'static {
        let store = Arc::downgrade(self);
        move || store.upgrade().is_some_and(|s| s.reclaim_one())
    }

    /// The circuit's parameters, read on first use (once, however many callers ask at the
    /// same time).
    pub fn params(&self, spec: &CircuitSpec) -> Result<Arc<Parameters>> {
        if let Some(p) = self.params.get(&spec.identifier) {
            return Ok(p);
        }
        let one = lock(&self.loading)
            .entry(spec.identifier.clone())
            .or_default()
            .clone();
        let _loading = lock(&one);
        // Another caller may have loaded them while this one waited.
        if let Some(p) = self.params.get(&spec.identifier) {
            return Ok(p);
        }
        let path = self.params_path(spec);
        let bytes = std::fs::metadata(&path)
            .map_err(|_| Error::Params {
                circuit: spec.srs_id(),
                path: path.clone(),
                reason: "parameter file not found".into(),
            })?
            .len();
        let mem = self.reserve(spec, bytes)?;
        let p = Arc::new(Parameters::read_file(&path, self.check)?);
        self.params
            .insert(&spec.identifier, spec.srs_id(), p.clone(), bytes, mem);
        Ok(p)
    }

    /// Whether the circuit's parameters are in memory.
    pub fn params_loaded(&self, spec: &CircuitSpec) -> bool {
        self.params.contains(&spec.identifier)
    }

    /// Drops the circuit's parameters from memory (jobs holding them keep their copy);
    /// returns the bytes freed, if they were loaded.
    pub fn evict_params(&self, spec: &CircuitSpec) -> Option<u64> {
        self.params.remove(&spec.identifier)
    }

    /// Loaded parameters.
    pub fn srs_status(&self) -> Vec<SrsEntry> {
        let m = lock(&self.params.entries);
        let mut v: Vec<SrsEntry> = m
            .iter()
            .map(|(id, e)| SrsEntry {
                srs_id: e.srs_id.clone(),
                identifier: id.clone(),
                tier: Tier::Hot,
                bytes: e.bytes,
                refs: Arc::strong_count(&e.value) - 1,
                source_id: cuzk_groth16::ParameterSource::source_id(e.value.as_ref()),
            })
            .collect();
        v.sort_by(|a, b| a.srs_id.cmp(&b.srs_id));
        v
    }

    /// The circuit's PCE: from memory, else from disk, else extracted (and saved).
    pub fn pce(&self, spec: &CircuitSpec) -> Result<Arc<Pce>> {
        if let Some(p) = self.stored_pce(spec)? {
            return Ok(p);
        }
        let _one = lock(&self.extracting);
        // Another caller may have finished the same extraction while this one waited.
        if let Some(p) = self.stored_pce(spec)? {
            return Ok(p);
        }
        // Under a budget the recording's memory is reserved before it is allocated, up to the
        // most it holds at once (one thread, so that all of it is asked for); what the PCE
        // keeps stays reserved, the rest is returned. Without one it records in parallel.
        let mut held: Option<Reservation> = None;
        let pce = if self.budget.is_some() {
            let mut grow = |peak: u64| -> std::result::Result<(), String> {
                self.reserve_to(spec, &mut held, peak).map_err(|e| match e {
                    Error::Params { reason, .. } => format!("PCE of {}: {reason}", spec.srs_id()),
                    e => e.to_string(),
                })
            };
            spec.extract_pce_within(&mut grow)?
        } else {
            spec.extract_pce()?
        };
        std::fs::create_dir_all(&self.pce_dir).map_err(|e| Error::io(&self.pce_dir, e))?;
        pce.save(&self.pce_path(spec))?;
        self.keep_pce(spec, pce, held)
    }

    /// The circuit's PCE when it is in memory or intact on disk. Otherwise `None`, and a
    /// background thread extracts and saves it (one per circuit at a time), so a later call
    /// finds it; a failed extraction is logged and tried again by the next call.
    pub fn pce_or_extract_in_background(self: &Arc<Self>, spec: &CircuitSpec) -> Option<Arc<Pce>> {
        match self.stored_pce(spec) {
            Ok(Some(p)) => return Some(p),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(circuit = %spec.identifier, error = %e, "PCE not loaded");
                return None;
            }
        }
        if !lock(&self.in_background).insert(spec.identifier.clone()) {
            return None;
        }
        let (store, job) = (self.clone(), spec.clone());
        let started = std::thread::Builder::new()
            .name("cuzk-pce-extract".into())
            .spawn(move || {
                let t = Instant::now();
                match store.pce(&job) {
                    Ok(_) => tracing::info!(
                        circuit = %job.identifier,
                        secs = t.elapsed().as_secs_f64(),
                        "PCE extracted in the background"
                    ),
                    Err(e) => tracing::warn!(
                        circuit = %job.identifier,
                        error = %e,
                        "background PCE extraction failed"
                    ),
                }
                lock(&store.in_background).remove(&job.identifier);
            });
        if let Err(e) = started {
            tracing::warn!(error = %e, "could not start a PCE extraction thread");
            lock(&self.in_background).remove(&spec.identifier);
        }
        None
    }

    /// Whether a background thread is extracting this circuit's PCE now.
    pub fn pce_extracting(&self, spec: &CircuitSpec) -> bool {
        lock(&self.in_background).contains(&spec.identifier)
    }

    /// The PCE from memory, else from an intact file of the same circuit (kept in memory).
    fn stored_pce(&self, spec: &CircuitSpec) -> Result<Option<Arc<Pce>>> {
        if let Some(p) = self.pces.get(&spec.identifier) {
            return Ok(Some(p));
        }
        // The header says what the body takes in memory: reserved before it is read.
        let path = self.pce_path(spec);
        let Ok(header) = Pce::read_header(&path) else {
            return Ok(None);
        };
        let mem = self.reserve(spec, header.body_bytes())?;
        match Pce::load(&path, Some(&spec.identifier)) {
            Ok(p) => self.keep_pce(spec, p, mem).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Keeps `pce` in memory under `held` (reserved for it already), shrunk or topped up to
    /// exactly the bytes it holds.
    fn keep_pce(
        &self,
        spec: &CircuitSpec,
        pce: Pce,
        held: Option<Reservation>,
    ) -> Result<Arc<Pce>> {
        let bytes = pce.stats().bytes as u64;
        let mut mem = held;
        self.reserve_to(spec, &mut mem, bytes)?;
        if let Some(m) = &mut mem {
            m.shrink_to(bytes);
        }
        let pce = Arc::new(pce);
        self.pces
            .insert(&spec.identifier, spec.srs_id(), pce.clone(), bytes, mem);
        Ok(pce)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
