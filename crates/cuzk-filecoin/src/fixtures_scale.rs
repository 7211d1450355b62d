//! Inputs at production sector sizes (32 GiB, 64 GiB) without sealing a sector.
//!
//! WinningPoSt and WindowPoSt vanilla proofs come from sparse trees ([`crate::sparse_post`]):
//! they are real inputs, which filecoin-proofs' vanilla verification accepts, for sectors that
//! were never sealed. A WindowPoSt partition holds the full sector count of its registered
//! proof (2,349 at 32 GiB).
//!
//! **Insecure** parameters are made for the WinningPoSt circuit (0.37M constraints at 32 GiB,
//! quick on a CPU), so a production-size WinningPoSt proves and verifies end to end; and, when
//! asked ([`ScaleOptions::window_params`]), for the WindowPoSt circuit (125M constraints at
//! 32 GiB: about 400M G1 points, whose fixed-base multiplications belong on a GPU, which the
//! caller passes as the backend).
//!
//! PoRep C1 and SnapDeals inputs of these shapes are **timing only**
//! ([`crate::timing_inputs`]): their challenges depend on sealed data, so they carry random
//! values and cannot verify; only benchmarks accept them, with random-point parameters
//! (`cuzk_groth16::random_point_parameters`), and label every figure so. The manifest lists
//! what is not made (the PoRep and SnapDeals circuits' real parameters).
//!
//! Layout of the output folder:
//! ```text
//! manifest.json      sizes, ids, randomness, file names (see [`ScaleManifest`])
//! inputs/            winning-0.bin, window-<i>.bin (bincode vanilla proofs, one per sector);
//!                    porep-timing-only.json (C1 output), snap-timing-only-<k>.bin (partitions)
//! params/            INSECURE v28 WinningPoSt (and WindowPoSt) parameters (+ .blake3 sidecars)
//! cache/             the circuits' PCEs
//! ```

use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use cuzk_groth16::ProvingBackend;
use filecoin_proofs::MerkleTreeTrait;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use storage_proofs_core::sector::SectorId;

use crate::circuit::CircuitSpec;
use crate::error::{Error, InputError, Result};
use crate::fixtures::{
    ensure_params, fixture_store, hex, post_randomness, write_file, ParamEntry, PoStFixture,
    Progress, FIXTURE_MINER_ID,
};
use crate::plan::with_tree;
use crate::registry::{prover_id, PoStProof, ProofKind, SealProof, SectorSize, UpdateProof};
use crate::request::ProofRequest;
use crate::sparse_post::sector_proofs;

const MANIFEST: &str = "manifest.json";
const SEED: u64 = 0x5ca1_e000;
/// The first sector number of the WindowPoSt partition.
const FIRST_SECTOR: u64 = 1000;

/// What a folder of production-size inputs holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ScaleManifest {
    /// Sector size, bytes.
    pub sector_size: u64,
    /// The miner id the inputs are for.
    pub miner_id: u64,
    /// How the inputs were made.
    pub note: String,
    /// WinningPoSt: one sector.
    pub winning: PoStFixture,
    /// WindowPoSt: one full partition.
    pub window: PoStFixture,
    /// The INSECURE parameters made (WinningPoSt's, and WindowPoSt's when asked).
    pub params: Vec<ParamEntry>,
    /// Inputs and parameters of this size not generated yet.
    pub missing: Vec<String>,
    /// PoRep and SnapDeals inputs of this size with arbitrary values: timing only.
    #[serde(default)]
    pub timing_only: Option<TimingOnlyInputs>,
}

/// PoRep C1 and SnapDeals inputs of a production shape with random values, which cannot
/// verify (see [`crate::timing_inputs`]); only benchmarks take them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TimingOnlyInputs {
    /// Says what these are, for anyone reading the manifest.
    pub note: String,
    /// Registered seal proof of the PoRep input.
    pub porep_registered_proof: u64,
    /// Its sector number.
    pub porep_sector_number: u64,
    /// The C1 output JSON (relative path).
    pub porep_c1: String,
    /// Registered update proof of the SnapDeals input.
    pub snap_registered_proof: u64,
    /// comm_r_old, comm_r_new, comm_d_new (hex; comm_d_new is the timing-only mark).
    pub snap_commitments: [String; 3],
    /// One bincode partition proof per partition (relative paths).
    pub snap_vanilla: Vec<String>,
}

impl ScaleManifest {
    /// Reads `manifest.json` from `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(MANIFEST);
        let bytes = fs::read(&path).map_err(|e| Error::io(&path, e))?;
        serde_json::from_slice(&bytes).map_err(|e| {
            InputError::new(format!("{} is not a scale manifest: {e}", path.display())).into()
        })
    }

    /// The timing-only request for `kind` (PoRep or SnapDeals), with its inputs read from
    /// `dir`: only [`crate::plan_for_timing`] takes it.
    pub fn timing_request(&self, dir: &Path, kind: ProofKind) -> Result<ProofRequest> {
        let t = self.timing_only.as_ref().ok_or_else(|| {
            InputError::new(format!(
                "{} holds no timing-only inputs: remake it with this version of `cuzk fixtures`",
                dir.display()
            ))
        })?;
        let read = |rel: &String| fs::read(dir.join(rel)).map_err(|e| Error::io(dir.join(rel), e));
        match kind {
            ProofKind::PoRep => Ok(crate::timing_inputs::porep_request_of(
                t.porep_registered_proof,
                read(&t.porep_c1)?,
                t.porep_sector_number,
                self.miner_id,
            )),
            ProofKind::SnapDeals => {
                let c = |i: usize| -> Result<[u8; 32]> {
                    crate::fixtures::unhex(&t.snap_commitments[i])
                        .and_then(|b| b.try_into().ok())
                        .ok_or_else(|| {
                            InputError::new(format!(
                                "commitment {i} in the manifest is not 32 bytes of hex"
                            ))
                            .into()
                        })
                };
                let vanilla = t.snap_vanilla.iter().map(read).collect::<Result<_>>()?;
                Ok(crate::timing_inputs::snap_request_of(
                    UpdateProof::from_id(t.snap_registered_proof)?,
                    [c(0)?, c(1)?, c(2)?],
                    vanilla,
                ))
            }
            _ => Err(InputError::new(format!(
                "timing-only inputs are PoRep and SnapDeals; {kind} inputs here verify (use them)"
            ))
            .into()),
        }
    }

    /// The request for `kind`, with its inputs read from `dir`; an input error for a kind
    /// without inputs at this size, or whose parameters were not made.
    pub fn request(&self, dir: &Path, kind: ProofKind) -> Result<ProofRequest> {
        let f = match kind {
            ProofKind::WinningPoSt => &self.winning,
            ProofKind::WindowPoSt => &self.window,
            _ => {
                return Err(InputError::new(format!(
                    "{} holds only timing-only {kind} inputs, which cannot make a valid proof \
                     (see ScaleManifest::timing_request)",
                    dir.display()
                ))
                .into())
            }
        };
        if !self.params.iter().any(|p| p.kind == kind.name()) {
            return Err(InputError::new(format!(
                "{} holds no {kind} parameters: make them with `cuzk fixtures --sector-size {} \
                 --window-params --backend cuda --out {}`",
                dir.display(),
                SectorSize::from_bytes(self.sector_size)
                    .map_or_else(|_| "32GiB".into(), |s| s.to_string()),
                dir.display()
            ))
            .into());
        }
        f.request(dir, kind, self.miner_id)
    }
}

/// What [`scale_fixtures`] makes besides the PoSt inputs and the WinningPoSt parameters, and
/// where.
#[derive(Clone, Copy)]
pub struct ScaleOptions<'a> {
    /// Also the WindowPoSt circuit's insecure parameters.
    pub window_params: bool,
    /// The backend the parameters' fixed-base multiplications run on.
    pub backend: &'a dyn ProvingBackend,
}

impl std::fmt::Debug for ScaleOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScaleOptions")
            .field("window_params", &self.window_params)
            .field("backend", &self.backend.name())
            .finish()
    }
}

/// Writes the PoSt inputs of `size` (32 GiB or 64 GiB) into `out`, with the parameters
/// `opts` asks for.
pub fn scale_fixtures(
    out: &Path,
    size: SectorSize,
    opts: ScaleOptions<'_>,
    progress: &dyn Progress,
) -> Result<ScaleManifest> {
    if !matches!(size, SectorSize::S32GiB | SectorSize::S64GiB) {
        return Err(InputError::new(format!(
            "scale fixtures are for 32GiB and 64GiB sectors, not {size}"
        ))
        .into());
    }
    with_tree!(size, generate(out, size, opts, progress))
}

fn generate<Tree: 'static + MerkleTreeTrait>(
    out: &Path,
    size: SectorSize,
    opts: ScaleOptions<'_>,
    progress: &dyn Progress,
) -> Result<ScaleManifest> {
    let inputs = out.join("inputs");
    fs::create_dir_all(&inputs).map_err(|e| Error::io(&inputs, e))?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(SEED);
    let prover = prover_id(FIXTURE_MINER_ID);
    let mut post = |kind: ProofKind, name: &str, sectors: Vec<u64>| -> Result<PoStFixture> {
        let t = Instant::now();
        progress.step(&format!(
            "{kind} vanilla proofs of {} sectors",
            sectors.len()
        ));
        let proof = PoStProof::current(kind, size);
        let randomness = post_randomness(&mut rng);
        let ids: Vec<SectorId> = sectors.iter().map(|&s| SectorId::from(s)).collect();
        let proofs =
            sector_proofs::<Tree>(&proof.post_config(), &randomness, prover, &ids, &mut rng)?;
        let mut vanilla = Vec::with_capacity(proofs.len());
        for (i, p) in proofs.iter().enumerate() {
            let rel = format!("inputs/{name}-{i}.bin");
            let bytes =
                bincode::serialize(p).map_err(|e| Error::proofs(format!("bincode: {e}")))?;
            write_file(&out.join(&rel), |w| w.write_all(&bytes))?;
            vanilla.push(rel);
        }
        progress.done(t.elapsed());
        Ok(PoStFixture {
            registered_proof: proof.id,
            randomness: hex(&randomness),
            partition_index: 0,
            sectors,
            vanilla,
        })
    };
    let winning = post(ProofKind::WinningPoSt, "winning", vec![FIRST_SECTOR])?;
    let count = PoStProof::current(ProofKind::WindowPoSt, size)
        .post_config()
        .sector_count as u64;
    let window = post(
        ProofKind::WindowPoSt,
        "window",
        (FIRST_SECTOR..FIRST_SECTOR + count).collect(),
    )?;
    let timing_only = timing_only_inputs::<Tree>(out, size, progress, &mut rng)?;
    let params_dir = out.join("params");
    fs::create_dir_all(&params_dir).map_err(|e| Error::io(&params_dir, e))?;
    let store = fixture_store(out);
    let mut kinds = vec![ProofKind::WinningPoSt];
    if opts.window_params {
        kinds.push(ProofKind::WindowPoSt);
    }
    let mut params = Vec::new();
    for kind in kinds {
        let spec = CircuitSpec::of(kind, size)?;
        params.push(ensure_params(
            &spec,
            &params_dir,
            &store,
            opts.backend,
            progress,
        )?);
    }
    let missing = vec![if opts.window_params {
        "parameters of the PoRep and SnapDeals circuits of this size (benchmarks use random \
         points)"
            .to_owned()
    } else {
        "parameters of the PoRep, SnapDeals and WindowPoSt circuits of this size (benchmarks \
         use random points for PoRep and SnapDeals)"
            .to_owned()
    }];
    let m = ScaleManifest {
        sector_size: size.bytes(),
        miner_id: FIXTURE_MINER_ID,
        note: "PoSt vanilla proofs from sparse trees: unsealed sectors whose tree_r_last is \
               zero except at the challenged leaves; they verify"
            .into(),
        winning,
        window,
        params,
        missing,
        timing_only: Some(timing_only),
    };
    let json = serde_json::to_vec_pretty(&m).map_err(|e| Error::proofs(format!("json: {e}")))?;
    write_file(&out.join(MANIFEST), |w| w.write_all(&json))?;
    Ok(m)
}

/// Writes the timing-only PoRep C1 output and SnapDeals partition proofs of `size`.
fn timing_only_inputs<Tree: 'static + MerkleTreeTrait>(
    out: &Path,
    size: SectorSize,
    progress: &dyn Progress,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> Result<TimingOnlyInputs> {
    let t = Instant::now();
    progress.step("timing-only PoRep C1 output and SnapDeals partition proofs");
    let porep = SealProof::of(size, 1);
    let c1 =
        crate::timing_inputs::porep_c1_json::<Tree>(porep, FIXTURE_MINER_ID, FIRST_SECTOR, rng)?;
    let porep_c1 = "inputs/porep-timing-only.json".to_owned();
    write_file(&out.join(&porep_c1), |w| w.write_all(&c1))?;
    let update = UpdateProof::of(size);
    let (old, new, d, parts) = with_update_tree(update, rng)?;
    let mut snap_vanilla = Vec::with_capacity(parts.len());
    for (k, p) in parts.iter().enumerate() {
        let rel = format!("inputs/snap-timing-only-{k}.bin");
        write_file(&out.join(&rel), |w| w.write_all(p))?;
        snap_vanilla.push(rel);
    }
    progress.done(t.elapsed());
    Ok(TimingOnlyInputs {
        note: "TIMING ONLY: PoRep and SnapDeals inputs of the real shape with random values; \
               they cannot verify, and only benchmarks accept them"
            .into(),
        porep_registered_proof: porep.id,
        porep_sector_number: FIRST_SECTOR,
        porep_c1,
        snap_registered_proof: update.id,
        snap_commitments: [hex(&old), hex(&new), hex(&d)],
        snap_vanilla,
    })
}

/// SnapDeals' tree is tree R (Poseidon) of the size's shape.
fn with_update_tree(
    update: UpdateProof,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> Result<crate::timing_inputs::SnapInputs> {
    use crate::timing_inputs::snap_inputs;
    match update.size {
        SectorSize::S32GiB => snap_inputs::<filecoin_proofs::SectorShape32GiB>(update, rng),
        SectorSize::S64GiB => snap_inputs::<filecoin_proofs::SectorShape64GiB>(update, rng),
        s => {
            Err(InputError::new(format!("scale fixtures are for 32GiB and 64GiB, not {s}")).into())
        }
    }
}
