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
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use filecoin_proofs::{
    add_piece, clear_cache, encode_into, generate_fallback_sector_challenges,
    generate_partition_proofs, generate_piece_commitment, generate_single_vanilla_proof,
    seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2, MerkleTreeTrait,
    PaddedBytesAmount, PrivateReplicaInfo, SectorShapeBase, SectorUpdateConfig,
    UnpaddedBytesAmount,
};
use rand::{Rng, RngCore, SeedableRng};
use serde::{Deserialize, Serialize};
use storage_proofs_core::sector::SectorId;

use cuzk_groth16::{generate_parameters_on, CpuBackend, ProvingBackend, Trapdoor};

use crate::circuit::CircuitSpec;
use crate::decode::{C1Output, C1VanillaProofs, C1Wrapper};
use crate::error::{Error, Result};
use crate::registry::{prover_id, PoStProof, ProofKind, SealProof, SectorSize, UpdateProof};
use crate::request::ProofRequest;
use crate::store::{bind_filecoin_parameter_dir, CircuitStore};

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

fn proofs_err(what: &'static str) -> impl Fn(anyhow::Error) -> Error {
    move |e| Error::proofs(format!("{what}: {e:#}"))
}

struct Sealed {
    sector_id: u64,
    sealed: PathBuf,
    cache: PathBuf,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
}

fn random_file(path: &Path, len: u64, rng: &mut impl RngCore) -> Result<()> {
    let mut data = vec![0u8; len as usize];
    rng.fill_bytes(&mut data);
    fs::write(path, &data).map_err(|e| Error::io(path, e))
}

fn stage_piece(
    dir: &Path,
    name: &str,
    size: u64,
    rng: &mut impl RngCore,
) -> Result<(PathBuf, filecoin_proofs::PieceInfo)> {
    let unpadded = UnpaddedBytesAmount::from(PaddedBytesAmount(size));
    let piece = dir.join(format!("{name}.piece"));
    random_file(&piece, unpadded.0, rng)?;
    let info = generate_piece_commitment(
        File::open(&piece).map_err(|e| Error::io(&piece, e))?,
        unpadded,
    )
    .map_err(proofs_err("piece commitment"))?;
    let staged = dir.join(format!("{name}.staged"));
    let mut out = File::create(&staged).map_err(|e| Error::io(&staged, e))?;
    add_piece(
        File::open(&piece).map_err(|e| Error::io(&piece, e))?,
        &mut out,
        unpadded,
        &[],
    )
    .map_err(proofs_err("add piece"))?;
    Ok((staged, info))
}

fn seal_sector<Tree: 'static + MerkleTreeTrait>(
    dir: &Path,
    proof: SealProof,
    sector_id: u64,
    rng: &mut impl RngCore,
    ticket: [u8; 32],
) -> Result<(Sealed, Vec<filecoin_proofs::PieceInfo>)> {
    let config = proof.porep_config();
    let (staged, info) = stage_piece(dir, &format!("sector-{sector_id}"), proof.size.bytes(), rng)?;
    let sealed = dir.join(format!("sector-{sector_id}.sealed"));
    File::create(&sealed).map_err(|e| Error::io(&sealed, e))?;
    let cache = dir.join(format!("sector-{sector_id}.cache"));
    fs::create_dir_all(&cache).map_err(|e| Error::io(&cache, e))?;
    let pieces = vec![info];
    let p1 = seal_pre_commit_phase1::<_, _, _, Tree>(
        &config,
        &cache,
        &staged,
        &sealed,
        prover_id(FIXTURE_MINER_ID),
        SectorId::from(sector_id),
        ticket,
        &pieces,
    )
    .map_err(proofs_err("seal pre-commit phase 1"))?;
    let out = seal_pre_commit_phase2(&config, p1, &cache, &sealed)
        .map_err(proofs_err("seal pre-commit phase 2"))?;
    Ok((
        Sealed {
            sector_id,
            sealed,
            cache,
            comm_r: out.comm_r,
            comm_d: out.comm_d,
        },
        pieces,
    ))
}

/// Randomness as chain randomness reaches the proofs: 32 bytes with the top two bits clear.
pub(crate) fn post_randomness(rng: &mut impl RngCore) -> [u8; 32] {
    let mut r = [0u8; 32];
    rng.fill_bytes(&mut r);
    r[31] &= 0x3f;
    r
}

struct SectorInputs {
    porep: PoRepFixture,
    porep_ni: PoRepFixture,
    winning: PoStFixture,
    window: PoStFixture,
    snap: SnapFixture,
}

/// Runs C1 for a sealed sector and writes its output as `<name>.json` (and, Curio's wrapper,
/// `<name>-wrapped.json`) under `inputs`.
fn write_c1<Tree: 'static + MerkleTreeTrait<Hasher = filecoin_proofs::TreeRHasher>>(
    inputs: &Path,
    name: &str,
    proof: SealProof,
    s: &Sealed,
    ticket: [u8; 32],
    seed: [u8; 32],
    pieces: &[filecoin_proofs::PieceInfo],
) -> Result<PoRepFixture> {
    let c1 = seal_commit_phase1::<_, Tree>(
        &proof.porep_config(),
        &s.cache,
        &s.sealed,
        prover_id(FIXTURE_MINER_ID),
        SectorId::from(s.sector_id),
        ticket,
        seed,
        filecoin_proofs::SealPreCommitOutput {
            comm_r: s.comm_r,
            comm_d: s.comm_d,
        },
        pieces,
    )
    .map_err(proofs_err("seal commit phase 1"))?;
    let json = serde_json::to_vec(&C1Output::<Tree> {
        registered_proof: proof.name(),
        vanilla_proofs: C1VanillaProofs::for_size(proof.size, c1.vanilla_proofs),
        comm_r: c1.comm_r,
        comm_d: c1.comm_d,
        replica_id: c1.replica_id,
        seed: c1.seed,
        ticket: c1.ticket,
    })
    .map_err(|e| Error::proofs(format!("encoding C1 output: {e}")))?;
    let wrapped = serde_json::to_vec(&C1Wrapper {
        sector_num: s.sector_id,
        phase1_out: base64::engine::general_purpose::STANDARD.encode(&json),
        sector_size: proof.size.bytes(),
    })
    .map_err(|e| Error::proofs(format!("encoding wrapper: {e}")))?;
    let write = |file: String, bytes: &[u8]| -> Result<String> {
        let path = inputs.join(&file);
        fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
        Ok(format!("inputs/{file}"))
    };
    Ok(PoRepFixture {
        registered_proof: proof.id,
        sector_number: s.sector_id,
        c1_json: write(format!("{name}.json"), &json)?,
        c1_wrapped: write(format!("{name}-wrapped.json"), &wrapped)?,
        comm_r: hex(&s.comm_r),
        comm_d: hex(&s.comm_d),
    })
}

fn make_sector_inputs<Tree: 'static + MerkleTreeTrait<Hasher = filecoin_proofs::TreeRHasher>>(
    out: &Path,
    size: SectorSize,
    progress: &dyn Progress,
) -> Result<SectorInputs> {
    let sectors = out.join("sectors");
    let inputs = out.join("inputs");
    // Sealing and encoding must not meet the caches of an earlier, incomplete run.
    if sectors.exists() {
        fs::remove_dir_all(&sectors).map_err(|e| Error::io(&sectors, e))?;
    }
    for d in [&sectors, &inputs] {
        fs::create_dir_all(d).map_err(|e| Error::io(d, e))?;
    }
    let mut rng = rand_chacha::ChaCha8Rng::from_entropy();
    let seal_proof = SealProof::of(size, 1);
    let prover = prover_id(FIXTURE_MINER_ID);
    let write_input = |name: &str, bytes: &[u8]| -> Result<String> {
        let path = inputs.join(name);
        fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
        Ok(format!("inputs/{name}"))
    };

    let t = Instant::now();
    progress.step(&format!("sealing three {size} sectors"));
    let (t1, t2): ([u8; 32], [u8; 32]) = (rng.gen(), rng.gen());
    let (s1, pieces1) = seal_sector::<Tree>(&sectors, seal_proof, 1, &mut rng, t1)?;
    let (s2, _) = seal_sector::<Tree>(&sectors, seal_proof, 2, &mut rng, t2)?;
    let t3: [u8; 32] = rng.gen();
    let ni_proof = SealProof::of(size, 3);
    let (s3, pieces3) = seal_sector::<Tree>(&sectors, ni_proof, 3, &mut rng, t3)?;
    progress.done(t.elapsed());

    let t = Instant::now();
    progress.step("PoRep commit phase 1 (C1), interactive and non-interactive");
    let mut seed: [u8; 32] = rng.gen();
    seed[0] |= 1;
    let porep = write_c1::<Tree>(&inputs, "porep-c1", seal_proof, &s1, t1, seed, &pieces1)?;
    let porep_ni = write_c1::<Tree>(&inputs, "porep-ni-c1", ni_proof, &s3, t3, [0; 32], &pieces3)?;
    for s in [&s1, &s2, &s3] {
        clear_cache(&s.cache).map_err(proofs_err("clearing the sealing cache"))?;
    }
    progress.done(t.elapsed());

    let t = Instant::now();
    progress.step("PoSt vanilla proofs");
    let post = |kind: ProofKind,
                sealed: &[&Sealed],
                name: &str,
                rng: &mut rand_chacha::ChaCha8Rng|
     -> Result<PoStFixture> {
        let proof = PoStProof::current(kind, size);
        let cfg = proof.post_config();
        let randomness = post_randomness(rng);
        let ids: Vec<SectorId> = sealed.iter().map(|s| SectorId::from(s.sector_id)).collect();
        let challenges =
            generate_fallback_sector_challenges::<Tree>(&cfg, &randomness, &ids, prover)
                .map_err(proofs_err("PoSt challenges"))?;
        let mut vanilla = Vec::new();
        for (i, s) in sealed.iter().enumerate() {
            let replica =
                PrivateReplicaInfo::<Tree>::new(s.sealed.clone(), s.comm_r, s.cache.clone())
                    .map_err(proofs_err("replica info"))?;
            let id = SectorId::from(s.sector_id);
            let v = generate_single_vanilla_proof::<Tree>(&cfg, id, &replica, &challenges[&id])
                .map_err(proofs_err("PoSt vanilla proof"))?;
            let bytes =
                bincode::serialize(&v).map_err(|e| Error::proofs(format!("bincode: {e}")))?;
            vanilla.push(write_input(&format!("{name}-{i}.bin"), &bytes)?);
        }
        Ok(PoStFixture {
            registered_proof: proof.id,
            randomness: hex(&randomness),
            partition_index: 0,
            sectors: sealed.iter().map(|s| s.sector_id).collect(),
            vanilla,
        })
    };
    let winning = post(ProofKind::WinningPoSt, &[&s1], "winning", &mut rng)?;
    let window = post(ProofKind::WindowPoSt, &[&s1, &s2], "window", &mut rng)?;
    progress.done(t.elapsed());

    let t = Instant::now();
    progress.step("SnapDeals encoding and vanilla proofs");
    let update = UpdateProof::of(size);
    let ucfg = SectorUpdateConfig::from_porep_config(&update.porep_config());
    let (staged, info) = stage_piece(&sectors, "sector-1-update", size.bytes(), &mut rng)?;
    let new_sealed = sectors.join("sector-1-update.sealed");
    let new_cache = sectors.join("sector-1-update.cache");
    fs::create_dir_all(&new_cache).map_err(|e| Error::io(&new_cache, e))?;
    let len = fs::metadata(&s1.sealed)
        .map_err(|e| Error::io(&s1.sealed, e))?
        .len();
    OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&new_sealed)
        .and_then(|f| f.set_len(len))
        .map_err(|e| Error::io(&new_sealed, e))?;
    let encoded = encode_into::<Tree>(
        &ucfg,
        &new_sealed,
        &new_cache,
        &s1.sealed,
        &s1.cache,
        &staged,
        &[info],
    )
    .map_err(proofs_err("SnapDeals encoding"))?;
    let partition_proofs = generate_partition_proofs::<Tree>(
        ucfg,
        s1.comm_r,
        encoded.comm_r_new,
        encoded.comm_d_new,
        &s1.sealed,
        &s1.cache,
        &new_sealed,
        &new_cache,
    )
    .map_err(proofs_err("SnapDeals vanilla proofs"))?;
    let mut vanilla = Vec::new();
    for (k, p) in partition_proofs.iter().enumerate() {
        let bytes = bincode::serialize(p).map_err(|e| Error::proofs(format!("bincode: {e}")))?;
        vanilla.push(write_input(&format!("snap-{k}.bin"), &bytes)?);
    }
    let snap = SnapFixture {
        registered_proof: update.id,
        sector_number: s1.sector_id,
        comm_r_old: hex(&s1.comm_r),
        comm_r_new: hex(&encoded.comm_r_new),
        comm_d_new: hex(&encoded.comm_d_new),
        vanilla,
    };
    progress.done(t.elapsed());
    Ok(SectorInputs {
        porep,
        porep_ni,
        winning,
        window,
        snap,
    })
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
