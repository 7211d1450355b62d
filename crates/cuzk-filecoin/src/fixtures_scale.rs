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
//! Not generated here yet: PoRep C1 and SnapDeals inputs of these shapes (which cannot verify
//! without sealing, and will be marked timing-only) and parameters of those circuits. The
//! manifest lists what is missing.
//!
//! Layout of the output folder:
//! ```text
//! manifest.json      sizes, ids, randomness, file names (see [`ScaleManifest`])
//! inputs/            winning-0.bin, window-<i>.bin (bincode vanilla proofs, one per sector)
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
use crate::registry::{prover_id, PoStProof, ProofKind, SectorSize};
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

    /// The request for `kind`, with its inputs read from `dir`; an input error for a kind
    /// without inputs at this size, or whose parameters were not made.
    pub fn request(&self, dir: &Path, kind: ProofKind) -> Result<ProofRequest> {
        let f = match kind {
            ProofKind::WinningPoSt => &self.winning,
            ProofKind::WindowPoSt => &self.window,
            _ => {
                return Err(InputError::new(format!(
                    "{} holds no {kind} inputs (only WinningPoSt and WindowPoSt so far)",
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
    let mut missing = vec!["PoRep C1 and SnapDeals inputs of this size (timing only)".to_owned()];
    missing.push(if opts.window_params {
        "parameters of the PoRep and SnapDeals circuits of this size".into()
    } else {
        "parameters of the PoRep, SnapDeals and WindowPoSt circuits of this size".into()
    });
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
    };
    let json = serde_json::to_vec_pretty(&m).map_err(|e| Error::proofs(format!("json: {e}")))?;
    write_file(&out.join(MANIFEST), |w| w.write_all(&json))?;
    Ok(m)
}
