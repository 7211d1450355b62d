//! Proof plans: one decoded, validated request, ready to be proved partition by partition.
//!
//! A [`ProofPlan`] hides the Merkle-tree shape generics of storage-proofs behind a trait
//! object: the engine asks it for partition circuits (synthesized into assignments), public
//! inputs, and for filecoin-proofs' verdict on the assembled proof bytes.

mod porep;
mod post;
mod snap;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_groth16::{Pce, ProvingAssignment};

use crate::circuit::CircuitSpec;
use crate::error::{InputError, Result};
use crate::registry::{PoStProof, ProofKind, SealProof, SectorSize, UpdateProof};
use crate::request::ProofRequest;

/// Dispatches a generic function over the Merkle tree shape of a sector size.
macro_rules! with_tree {
    ($size:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        match $size {
            $crate::registry::SectorSize::S2KiB
            | $crate::registry::SectorSize::S8MiB
            | $crate::registry::SectorSize::S512MiB => $f::<filecoin_proofs::SectorShapeBase>($($arg),*),
            $crate::registry::SectorSize::S32GiB => $f::<filecoin_proofs::SectorShape32GiB>($($arg),*),
            $crate::registry::SectorSize::S64GiB => $f::<filecoin_proofs::SectorShape64GiB>($($arg),*),
        }
    };
}
pub(crate) use with_tree;

/// A validated request, ready to prove.
pub trait ProofPlan: Send + Sync {
    /// The proof kind.
    fn kind(&self) -> ProofKind;
    /// The digest of the request this plan was made from ([`ProofRequest::content_digest`]).
    fn content(&self) -> cuzk_engine::ContentDigest;
    /// The circuit every partition of this proof uses.
    fn circuit(&self) -> &CircuitSpec;
    /// Number of partition proofs the output concatenates.
    fn partitions(&self) -> usize;
    /// Builds partition `k`'s circuit and synthesizes it: witness only plus the PCE's sparse
    /// products when `pce` is given, direct evaluation otherwise.
    fn synthesize(&self, k: usize, pce: Option<&Pce>) -> Result<Synthesized>;
    /// The public inputs of partition `k` as its verifier computes them.
    fn public_inputs(&self, k: usize) -> Result<Vec<blstrs::Scalar>>;
    /// The output proof from the partition proofs (each [`PARTITION_PROOF_BYTES`], in order):
    /// their concatenation, or for NI-PoRep their SnarkPack aggregate.
    ///
    /// [`PARTITION_PROOF_BYTES`]: crate::verify::PARTITION_PROOF_BYTES
    fn assemble(&self, partition_proofs: &[u8]) -> Result<Vec<u8>> {
        Ok(partition_proofs.to_vec())
    }
    /// Whether [`assemble`](Self::assemble) aggregates (the output is not the partition
    /// proofs side by side).
    fn aggregated(&self) -> bool {
        false
    }
    /// filecoin-proofs' verdict on the assembled proof bytes.
    fn verify(&self, proof: &[u8]) -> Result<bool>;
    /// Whether the request is a timing-only input (see [`TIMING_ONLY_MARK`]).
    fn timing_only(&self) -> bool {
        false
    }
}

/// Decodes and validates `req` into a plan. Bad input is an [`InputError`].
///
/// storage-proofs asserts on some malformed vanilla proofs instead of returning errors; such
/// a panic is caught here and reported as bad input.
pub fn plan(req: &ProofRequest) -> Result<Arc<dyn ProofPlan>> {
    let p = guard(|| plan_inner(req))?;
    if p.timing_only() {
        return Err(InputError::new(format!(
            "this {} request is a timing-only input (arbitrary values of a production shape; \
             its {} reads \"cuzk: timing only, never sealed\"): it cannot make a valid proof, \
             so only `cuzk bench scale` accepts it",
            p.kind(),
            if p.kind() == ProofKind::PoRep {
                "ticket"
            } else {
                "comm_d_new"
            }
        ))
        .into());
    }
    Ok(p)
}

/// Marks a timing-only input: a PoRep C1 output's ticket, a SnapDeals request's
/// `comm_d_new`. These inputs have a production shape and arbitrary values (their
/// challenges depend on sealed data, so real ones cannot be made without sealing); they
/// cannot verify, so only benchmarks take them, and label every figure "timing only".
/// (A valid field element: its last byte is zero.)
pub const TIMING_ONLY_MARK: [u8; 32] = *b"cuzk: timing only, never sealed\0";

/// Like [`plan`], but also accepts timing-only inputs (see [`TIMING_ONLY_MARK`]); for
/// benchmarks, which must not count such a proof as verified.
pub fn plan_for_timing(req: &ProofRequest) -> Result<Arc<dyn ProofPlan>> {
    guard(|| plan_inner(req))
}

/// Runs `f`, turning a panic inside third-party proof code into an input error.
pub(crate) fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        Err(InputError::new(format!(
            "the vanilla proofs are malformed (storage-proofs: {msg})"
        ))
        .into())
    })
}

fn plan_inner(req: &ProofRequest) -> Result<Arc<dyn ProofPlan>> {
    let kind = req
        .kind
        .ok_or_else(|| InputError::new("proof kind is missing (unspecified)"))?;
    let size_check = |size: SectorSize| -> Result<(), InputError> {
        if req.sector_size != 0 && req.sector_size != size.bytes() {
            return Err(InputError::new(format!(
                "sector size {} does not match registered proof {} ({size})",
                req.sector_size,
                req.registered_proof.map_or("?".into(), |x| x.to_string())
            )));
        }
        Ok(())
    };
    match kind {
        ProofKind::PoRep => {
            let proof = porep::resolve_registered_proof(req)?;
            size_check(proof.size)?;
            with_tree!(proof.size, porep_plan(req, proof))
        }
        ProofKind::WindowPoSt | ProofKind::WinningPoSt => {
            let id = req
                .registered_proof
                .ok_or_else(|| InputError::new("registered proof is missing"))?;
            let proof = PoStProof::from_id(id, kind)?;
            size_check(proof.size)?;
            with_tree!(proof.size, post_plan(req, proof))
        }
        ProofKind::SnapDeals => {
            let id = req
                .registered_proof
                .ok_or_else(|| InputError::new("registered proof is missing"))?;
            let proof = UpdateProof::from_id(id)?;
            size_check(proof.size)?;
            with_tree!(proof.size, snap_plan(req, proof))
        }
    }
}

fn porep_plan<Tree: 'static + filecoin_proofs::MerkleTreeTrait>(
    req: &ProofRequest,
    proof: SealProof,
) -> Result<Arc<dyn ProofPlan>> {
    Ok(Arc::new(porep::PoRepPlan::<Tree>::new(req, proof)?))
}

fn post_plan<Tree: 'static + filecoin_proofs::MerkleTreeTrait>(
    req: &ProofRequest,
    proof: PoStProof,
) -> Result<Arc<dyn ProofPlan>> {
    Ok(Arc::new(post::PoStPlan::<Tree>::new(req, proof)?))
}

fn snap_plan<Tree>(req: &ProofRequest, proof: UpdateProof) -> Result<Arc<dyn ProofPlan>>
where
    Tree: 'static + filecoin_proofs::MerkleTreeTrait<Hasher = filecoin_proofs::TreeRHasher>,
{
    Ok(Arc::new(snap::SnapPlan::<Tree>::new(req, proof)?))
}

/// One synthesized partition and where its time went.
#[derive(Debug)]
pub struct Synthesized {
    /// The assignment, ready to prove.
    pub assignment: ProvingAssignment,
    /// Building the circuit from the vanilla proof.
    pub circuit_build: Duration,
    /// Witness synthesis (all of synthesis on the direct path).
    pub witness: Duration,
    /// The PCE's sparse products (zero on the direct path).
    pub pce_eval: Duration,
}

/// Synthesizes, with `pce`, a circuit made of a header and independent units, one unit per
/// entry of `circuits` (each the header with that unit alone), in parallel: see
/// [`cuzk_groth16::synthesize_witness_units`]. Building the circuits is part of `witness`.
pub(crate) fn synthesize_units<C>(
    circuits: Vec<C>,
    pce: &Pce,
    started: Instant,
) -> Result<Synthesized>
where
    C: cuzk_groth16::bellpepper_core::Circuit<blstrs::Scalar> + Send,
{
    let circuit_build = started.elapsed();
    let t = Instant::now();
    let s = pce.stats();
    let w = cuzk_groth16::synthesize_witness_units(circuits, s.num_inputs, s.num_aux, |c| {
        cuzk_groth16::synthesize_witness(c).map_err(cuzk_groth16::Error::from)
    })?;
    let witness = t.elapsed();
    let t = Instant::now();
    let assignment = pce.evaluate(w)?;
    Ok(Synthesized {
        assignment,
        circuit_build,
        witness,
        pce_eval: t.elapsed(),
    })
}

/// Synthesizes a circuit with or without a PCE; `started` is when building the circuit began.
pub(crate) fn synthesize_circuit<C>(
    circuit: C,
    pce: Option<&Pce>,
    started: Instant,
) -> Result<Synthesized>
where
    C: cuzk_groth16::bellpepper_core::Circuit<blstrs::Scalar>,
{
    let circuit_build = started.elapsed();
    let t = Instant::now();
    Ok(match pce {
        Some(pce) => {
            let w = cuzk_groth16::synthesize_witness(circuit).map_err(cuzk_groth16::Error::from)?;
            let witness = t.elapsed();
            let t = Instant::now();
            let assignment = pce.evaluate(w)?;
            Synthesized {
                assignment,
                circuit_build,
                witness,
                pce_eval: t.elapsed(),
            }
        }
        None => {
            let assignment =
                cuzk_groth16::synthesize_direct(circuit).map_err(cuzk_groth16::Error::from)?;
            Synthesized {
                assignment,
                circuit_build,
                witness: t.elapsed(),
                pce_eval: Duration::ZERO,
            }
        }
    })
}
