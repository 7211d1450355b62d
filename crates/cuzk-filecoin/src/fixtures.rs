//! Test fixtures: a real sealed 2 KiB sector, the inputs clients would send for all four proof
//! kinds, and **insecure** parameters for their circuits.
//!
//! The parameters come from [`cuzk_groth16::generate_parameters_on`] on each circuit's
//! recorded constraint system (its fixed-base multiplications on the CPU here, on a GPU where
//! the caller passes one), with a trapdoor from a fixed seed: anyone can forge proofs
//! against them. They carry the official v28 file names (so filecoin-proofs' prover and
//! verifiers load them) and are marked test-only in the manifest; keep them away from a
//! production parameter directory.
//!
//! Layout of the output folder:
//! ```text
//! manifest.json            commitments, ids, randomness, file names (see [`Manifest`])
//! params/v28-*.params|vk   insecure test parameters (+ .blake3 sidecars)
//! params/v28-fil-inner-product-v1.srs
//!                          insecure SnarkPack SRS for NI-PoRep aggregation (+ sidecar)
//! inputs/                  porep-c1.json, porep-c1-wrapped.json, porep-ni-c1.json,
//!                          winning-0.bin, window-<i>.bin, snap-<k>.bin
//! sectors/                 staged data, replicas and caches of the sealed sectors
//! parents/                 filecoin-proofs' SDR parent cache
//! ```
//! Generation is idempotent: parameters whose sidecar digest matches are reused, and the
//! sector step is skipped when the manifest and every input it names exist.

use std::fs::{self, File, OpenOptions};
use std::io::BufWriter;
use std::path::Path;
use std::time::{Duration, Instant};

use filecoin_proofs::SectorShapeBase;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use cuzk_groth16::{generate_parameters_on, CpuBackend, ProvingBackend, Trapdoor};

use crate::circuit::CircuitSpec;
use crate::error::{Error, Result};
use crate::registry::{ProofKind, SectorSize};
use crate::request::ProofRequest;
use crate::store::{bind_filecoin_parameter_dir, CircuitStore};

pub(crate) use crate::fixtures_seal::post_randomness;
use crate::fixtures_seal::{make_sector_inputs, SectorInputs};

/// The miner id fixtures are sealed for.
pub const FIXTURE_MINER_ID: u64 = 1000;
const MANIFEST: &str = "manifest.json";
const PARAMS_SEED: u64 = 0x7e57_7e57;

/// One parameter file pair.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ParamEntry {
    /// Proof kind.
    pub kind: String,
    /// storage-proofs' identifier.
    pub identifier: String,
    /// File names under `params/`.
    pub params_file: String,
    /// Verifying key file name.
    pub vk_file: String,
    /// BLAKE3 of the `.params` file, hex.
    pub blake3: String,
    /// Constraints of the circuit.
    pub constraints: usize,
}

/// Everything needed to prove and verify the fixtures.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    /// Always true: the parameters are insecure test parameters.
    pub insecure_test_parameters: bool,
    /// A warning for humans.
    pub note: String,
    /// Sector size in bytes.
    pub sector_size: u64,
    /// Miner actor id.
    pub miner_id: u64,
    /// Parameter files.
    pub params: Vec<ParamEntry>,
    /// PoRep C2 input.
    pub porep: PoRepFixture,
    /// NI-PoRep C2 input: a third sector, sealed with the non-interactive registered proof
    /// (its C1 seed is zero: NI-PoRep ignores it).
    pub porep_ni: PoRepFixture,
    /// The inner-product SRS NI-PoRep aggregation reads, insecure like the parameters.
    pub srs: SrsFile,
    /// WinningPoSt input.
    pub winning: PoStFixture,
    /// WindowPoSt input (one partition).
    pub window: PoStFixture,
    /// SnapDeals input.
    pub snap: SnapFixture,
}

/// PoRep C2 input.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PoRepFixture {
    /// Registered seal proof.
    pub registered_proof: u64,
    /// Sector number.
    pub sector_number: u64,
    /// C1 output JSON (relative path).
    pub c1_json: String,
    /// The same, in Curio's wrapper.
    pub c1_wrapped: String,
    /// comm_r, hex.
    pub comm_r: String,
    /// comm_d, hex.
    pub comm_d: String,
}

/// The SnarkPack SRS file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SrsFile {
    /// File name under `params/`.
    pub file: String,
    /// BLAKE3 of the file, hex.
    pub blake3: String,
    /// The most proofs it can aggregate.
    pub max_proofs: usize,
}

/// PoSt input.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PoStFixture {
    /// Registered PoSt proof.
    pub registered_proof: u64,
    /// Randomness, hex.
    pub randomness: String,
    /// WindowPoSt partition index.
    pub partition_index: u32,
    /// Sector numbers, in order.
    pub sectors: Vec<u64>,
    /// One bincode vanilla proof per sector (relative paths).
    pub vanilla: Vec<String>,
}

impl PoStFixture {
    /// The request a client sends for this PoSt (`kind`: WinningPoSt or WindowPoSt), with its
    /// vanilla proofs read from `dir`.
    pub fn request(&self, dir: &Path, kind: ProofKind, miner_id: u64) -> Result<ProofRequest> {
        let vanilla_proofs = self
            .vanilla
            .iter()
            .map(|rel| fs::read(dir.join(rel)).map_err(|e| Error::io(dir.join(rel), e)))
            .collect::<Result<_>>()?;
        Ok(ProofRequest {
            kind: Some(kind),
            miner_id,
            registered_proof: Some(self.registered_proof),
            randomness: unhex(&self.randomness).unwrap_or_default(),
            partition_index: self.partition_index,
            vanilla_proofs,
            ..Default::default()
        })
    }
}

/// SnapDeals input.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SnapFixture {
    /// Registered update proof.
    pub registered_proof: u64,
    /// Sector number.
    pub sector_number: u64,
    /// comm_r_old, hex.
    pub comm_r_old: String,
    /// comm_r_new, hex.
    pub comm_r_new: String,
    /// comm_d_new, hex.
    pub comm_d_new: String,
    /// One bincode vanilla proof per partition (relative paths).
    pub vanilla: Vec<String>,
}

/// Lowercase hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Parses lowercase or uppercase hex.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Manifest {
    /// The request a client would send for the PoRep C2 of `porep` (one of this manifest's).
    pub fn porep_request(&self, dir: &Path, porep: &PoRepFixture) -> Result<ProofRequest> {
        let path = dir.join(&porep.c1_json);
        Ok(ProofRequest {
            kind: Some(ProofKind::PoRep),
            miner_id: self.miner_id,
            registered_proof: Some(porep.registered_proof),
            sector_number: porep.sector_number,
            vanilla_proof: fs::read(&path).map_err(|e| Error::io(&path, e))?,
            ..Default::default()
        })
    }

    /// Reads `dir/manifest.json`.
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(MANIFEST);
        let bytes = fs::read(&path).map_err(|e| Error::io(&path, e))?;
        serde_json::from_slice(&bytes).map_err(|e| {
            Error::io(
                &path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            )
        })
    }

    /// The request a client would send for `kind`, with its files read from `dir`.
    pub fn request(&self, dir: &Path, kind: ProofKind) -> Result<ProofRequest> {
        let read = |rel: &str| fs::read(dir.join(rel)).map_err(|e| Error::io(dir.join(rel), e));
        let h = |s: &str| unhex(s).unwrap_or_default();
        let mut req = ProofRequest {
            kind: Some(kind),
            miner_id: self.miner_id,
            ..Default::default()
        };
        match kind {
            ProofKind::PoRep => return self.porep_request(dir, &self.porep),
            ProofKind::WinningPoSt => return self.winning.request(dir, kind, self.miner_id),
            ProofKind::WindowPoSt => return self.window.request(dir, kind, self.miner_id),
            ProofKind::SnapDeals => {
                req.registered_proof = Some(self.snap.registered_proof);
                req.comm_r_old = h(&self.snap.comm_r_old);
                req.comm_r_new = h(&self.snap.comm_r_new);
                req.comm_d_new = h(&self.snap.comm_d_new);
                req.vanilla_proofs = self
                    .snap
                    .vanilla
                    .iter()
                    .map(|v| read(v))
                    .collect::<Result<_>>()?;
            }
        }
        Ok(req)
    }
}

/// Progress reporting of long steps.
pub trait Progress {
    /// A step starts.
    fn step(&self, msg: &str);
    /// The step ended after `took`.
    fn done(&self, took: Duration);
    /// A detail of the step that just ended.
    fn note(&self, _msg: &str) {}
}

/// Prints nothing.
#[derive(Debug)]
pub struct Quiet;

impl Progress for Quiet {
    fn step(&self, _: &str) {}
    fn done(&self, _: Duration) {}
}

fn blake3_file(path: &Path) -> Result<String> {
    let mut h = blake3::Hasher::new();
    h.update_reader(File::open(path).map_err(|e| Error::io(path, e))?)
        .map_err(|e| Error::io(path, e))?;
    Ok(h.finalize().to_hex().to_string())
}

pub(crate) fn write_file(
    path: &Path,
    f: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let res = (|| {
        let mut w = BufWriter::new(File::create(&tmp)?);
        f(&mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, path)
    })();
    res.map_err(|e| Error::io(path, e))
}

/// Makes (or checks) the insecure parameters of one circuit; returns its manifest entry.
pub(crate) fn ensure_params(
    spec: &CircuitSpec,
    dir: &Path,
    store: &CircuitStore,
    backend: &dyn ProvingBackend,
    progress: &dyn Progress,
) -> Result<ParamEntry> {
    let params_path = dir.join(spec.params_file_name());
    let vk_path = dir.join(spec.vk_file_name());
    let sidecar = params_path.with_extension("params.blake3");
    let t = Instant::now();
    progress.step(&format!("PCE of {}", spec.identifier));
    let pce = store.pce(spec)?;
    progress.done(t.elapsed());
    let entry = |blake3: String| ParamEntry {
        kind: spec.kind.name().into(),
        identifier: spec.identifier.clone(),
        params_file: spec.params_file_name(),
        vk_file: spec.vk_file_name(),
        blake3,
        constraints: pce.num_constraints(),
    };
    if params_path.exists() && vk_path.exists() {
        if let Ok(recorded) = fs::read_to_string(&sidecar) {
            let t = Instant::now();
            progress.step(&format!("checking {} parameters", spec.srs_id()));
            let actual = blake3_file(&params_path)?;
            progress.done(t.elapsed());
            if actual == recorded.trim() {
                return Ok(entry(actual));
            }
        }
    }
    let t = Instant::now();
    progress.step(&format!(
        "generating insecure {} parameters ({} constraints)",
        spec.srs_id(),
        pce.num_constraints()
    ));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(PARAMS_SEED ^ spec.kind as u64);
    let trapdoor = Trapdoor::random(&mut rng);
    let (params, timings) = {
        let g = backend.device().lock();
        generate_parameters_on(backend, &g, &pce, &trapdoor)?
    };
    let generated = t.elapsed();
    write_file(&params_path, |w| params.write(w))?;
    write_file(&vk_path, |w| params.vk.write(w))?;
    drop(params);
    let written = t.elapsed();
    let digest = blake3_file(&params_path)?;
    fs::write(&sidecar, &digest).map_err(|e| Error::io(&sidecar, e))?;
    progress.done(t.elapsed());
    progress.note(&format!(
        "QAP at tau {:.1} s; {} G1 points in {:.1} s and {} G2 points in {:.1} s on {}; \
         written in {:.1} s, hashed in {:.1} s",
        timings.qap.as_secs_f64(),
        timings.g1_points,
        timings.g1.as_secs_f64(),
        timings.g2_points,
        timings.g2.as_secs_f64(),
        backend.name(),
        (written - generated).as_secs_f64(),
        (t.elapsed() - written).as_secs_f64(),
    ));
    Ok(entry(digest))
}

/// Makes (or checks) the insecure inner-product SRS NI-PoRep aggregation reads.
fn ensure_srs(dir: &Path, progress: &dyn Progress) -> Result<SrsFile> {
    // Aggregates of up to 128 proofs: a 2 KiB NI-PoRep has 13 partitions, padded to 16.
    const MAX_PROOFS: usize = 128;
    let path = storage_proofs_core::parameter_cache::parameter_cache_srs_key_path("", 0);
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or("v28-fil-inner-product-v1.srs")
        .to_owned();
    let path = dir.join(&file);
    let sidecar = dir.join(format!("{file}.blake3"));
    let entry = |blake3: String| SrsFile {
        file: file.clone(),
        blake3,
        max_proofs: MAX_PROOFS,
    };
    if let (true, Ok(recorded)) = (path.exists(), fs::read_to_string(&sidecar)) {
        let actual = blake3_file(&path)?;
        if actual == recorded.trim() {
            return Ok(entry(actual));
        }
    }
    let t = Instant::now();
    progress.step("generating the insecure inner-product SRS (NI-PoRep aggregation)");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(PARAMS_SEED ^ 0x5125);
    let srs =
        bellperson::groth16::aggregate::setup_fake_srs::<blstrs::Bls12, _>(&mut rng, MAX_PROOFS);
    write_file(&path, |w| srs.write(w))?;
    let digest = blake3_file(&path)?;
    fs::write(&sidecar, &digest).map_err(|e| Error::io(&sidecar, e))?;
    progress.done(t.elapsed());
    Ok(entry(digest))
}

/// Points filecoin-proofs at a fixture folder's parameters and SDR parent cache (creating the
/// parameter folder); call once per process, before filecoin-proofs is used.
pub fn bind_fixture_dirs(out: &Path) -> Result<()> {
    let params = out.join("params");
    fs::create_dir_all(&params).map_err(|e| Error::io(&params, e))?;
    bind_filecoin_parameter_dir(&params, Some(&out.join("parents")))
}

/// The circuit store of a fixture folder: its parameters, and PCEs cached in it.
pub fn fixture_store(out: &Path) -> CircuitStore {
    CircuitStore::new(out.join("params"), &out.join("cache"))
}

/// [`ensure_fixtures`] under a lock file in `out`, so concurrent processes (test binaries)
/// wait for one another instead of generating twice. A lock left by a killed process is
/// taken over after `stale` has passed since it was made.
pub fn ensure_fixtures_locked(
    out: &Path,
    size: SectorSize,
    progress: &dyn Progress,
    stale: Duration,
) -> Result<Manifest> {
    fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let lock = out.join(".generating");
    loop {
        match OpenOptions::new().write(true).create_new(true).open(&lock) {
            Ok(_) => break,
            Err(_) => {
                let age = fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok());
                if age.is_some_and(|a| a > stale) {
                    let _ = fs::remove_file(&lock);
                    continue;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }
    let out_manifest = ensure_fixtures(out, size, progress);
    let _ = fs::remove_file(&lock);
    out_manifest
}

/// Creates or checks the fixtures for `size` in `out` (only 2 KiB is supported: it is the
/// size whose sealing and proving fit a test run).
pub fn ensure_fixtures(out: &Path, size: SectorSize, progress: &dyn Progress) -> Result<Manifest> {
    if size != SectorSize::S2KiB {
        return Err(crate::error::InputError::new(format!(
            "fixtures are generated for 2KiB sectors only, not {size}"
        ))
        .into());
    }
    let params_dir = out.join("params");
    fs::create_dir_all(&params_dir).map_err(|e| Error::io(&params_dir, e))?;
    let store = fixture_store(out);
    let cpu = CpuBackend::new();
    let mut params = Vec::new();
    for kind in ProofKind::ALL {
        params.push(ensure_params(
            &CircuitSpec::of(kind, size)?,
            &params_dir,
            &store,
            &cpu,
            progress,
        )?);
    }
    let srs = ensure_srs(&params_dir, progress)?;
    if let Ok(m) = Manifest::load(out) {
        let mut files: Vec<&String> = vec![
            &m.porep.c1_json,
            &m.porep.c1_wrapped,
            &m.porep_ni.c1_json,
            &m.porep_ni.c1_wrapped,
        ];
        files.extend(
            m.winning
                .vanilla
                .iter()
                .chain(&m.window.vanilla)
                .chain(&m.snap.vanilla),
        );
        if m.params == params && m.srs == srs && files.iter().all(|f| out.join(f).exists()) {
            return Ok(m);
        }
    }
    let SectorInputs {
        porep,
        porep_ni,
        winning,
        window,
        snap,
    } = make_sector_inputs::<SectorShapeBase>(out, size, progress)?;
    let m = Manifest {
        insecure_test_parameters: true,
        note: "INSECURE TEST PARAMETERS: generated from a fixed seed; anyone can forge proofs against them. Never use them for real sectors.".into(),
        sector_size: size.bytes(),
        miner_id: FIXTURE_MINER_ID,
        params,
        porep,
        porep_ni,
        srs,
        winning,
        window,
        snap,
    };
    let path = out.join(MANIFEST);
    write_file(&path, |w| {
        serde_json::to_writer_pretty(w, &m).map_err(std::io::Error::other)
    })?;
    Ok(m)
}
