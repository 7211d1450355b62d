//! Proving a whole plan on one backend: every partition synthesized, proved, assembled in
//! order, then verified with filecoin-proofs. The engine schedules the same steps across
//! devices; this is the single-device path the CLI uses.

use std::time::{Duration, Instant};

use cuzk_groth16::{prove_timed, ProvingBackend};
use rand::RngCore;

use crate::error::{Error, Result};
use crate::plan::ProofPlan;
use crate::store::CircuitStore;
use crate::verify::assemble_verified;

/// Where a proof's time went, summed over partitions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimings {
    /// Loading parameters (zero when already resident).
    pub params_load: Duration,
    /// Loading or extracting the PCE (zero when resident or not used).
    pub pce_load: Duration,
    /// Building circuits from vanilla proofs.
    pub circuit_build: Duration,
    /// Witness synthesis.
    pub witness: Duration,
    /// PCE sparse products.
    pub pce_eval: Duration,
    /// H by NTT (on a backend that keeps H on the device, also H's MSM).
    pub ntt: Duration,
    /// The MSMs (but H's where the backend fuses it with H).
    pub msm: Duration,
    /// Assembly (NI-PoRep: aggregation) and filecoin-proofs' verification of the output.
    pub verify: Duration,
    /// Everything.
    pub total: Duration,
    /// The device's own timeline of the proof (one partition's), where the backend
    /// measures one.
    pub device: Option<cuzk_groth16::DeviceTimeline>,
    /// How the partition's L, A and B scalars split by value (one partition's).
    pub split: Option<[cuzk_groth16::SplitCounts; 3]>,
}

impl std::fmt::Display for StageTimings {
    /// One line: every stage in seconds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stages = [
            ("params load", self.params_load),
            ("PCE load", self.pce_load),
            ("circuit build", self.circuit_build),
            ("witness", self.witness),
            ("PCE eval", self.pce_eval),
            ("NTT", self.ntt),
            ("MSM", self.msm),
            ("verify", self.verify),
            ("total", self.total),
        ];
        for (i, (name, d)) in stages.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{name} {:.3}s", d.as_secs_f64())?;
        }
        Ok(())
    }
}

/// A verified proof.
#[derive(Clone, Debug)]
pub struct ProofOutput {
    /// The proof bytes: partition proofs concatenated in order (NI-PoRep: their aggregate).
    pub proof: Vec<u8>,
    /// Stage timings.
    pub timings: StageTimings,
}

/// Options of [`prove_plan`].
#[derive(Clone, Copy, Debug)]
pub struct ProveOptions {
    /// Use the pre-compiled constraint evaluator (else evaluate linear combinations directly).
    pub use_pce: bool,
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions { use_pce: true }
    }
}

/// Proves every partition of `plan` on `backend`, assembles and verifies.
pub fn prove_plan(
    plan: &dyn ProofPlan,
    store: &CircuitStore,
    backend: &dyn ProvingBackend,
    opts: ProveOptions,
) -> Result<ProofOutput> {
    let start = Instant::now();
    let (partitions, mut t) = prove_partitions(plan, store, backend, opts)?;
    let s = Instant::now();
    let proof = assemble_verified(plan, &partitions)?;
    t.verify = s.elapsed();
    t.total = start.elapsed();
    Ok(ProofOutput { proof, timings: t })
}

/// Proves every partition of `plan` on `backend`: their proofs concatenated in order, not yet
/// assembled or verified, and the stage timings so far (`verify` and `total` zero).
pub fn prove_partitions(
    plan: &dyn ProofPlan,
    store: &CircuitStore,
    backend: &dyn ProvingBackend,
    opts: ProveOptions,
) -> Result<(Vec<u8>, StageTimings)> {
    let mut t = StageTimings::default();
    let spec = plan.circuit();
    let s = Instant::now();
    let params = store.params(spec)?;
    t.params_load = s.elapsed();
    let s = Instant::now();
    let pce = if opts.use_pce {
        Some(store.pce(spec)?)
    } else {
        None
    };
    t.pce_load = s.elapsed();
    let (proof, parts) = prove_partitions_with(plan, params.as_ref(), pce.as_deref(), backend)?;
    for pt in parts {
        t.circuit_build += pt.circuit_build;
        t.witness += pt.witness;
        t.pce_eval += pt.pce_eval;
        t.ntt += pt.ntt;
        t.msm += pt.msm;
    }
    Ok((proof, t))
}

/// Proves every partition of `plan` on `backend` against `params` (synthesized with `pce`
/// where given): their proofs concatenated in order, not assembled or verified, and each
/// partition's synthesis and proving stage times (`total`: the partition's). Benchmarks call
/// it with parameters of their own (random points for timing-only inputs); everything else
/// goes through [`prove_plan`].
pub fn prove_partitions_with(
    plan: &dyn ProofPlan,
    params: &dyn cuzk_groth16::ParameterSource,
    pce: Option<&cuzk_groth16::Pce>,
    backend: &dyn ProvingBackend,
) -> Result<(Vec<u8>, Vec<StageTimings>)> {
    prove_partition_range(plan, params, pce, backend, 0..plan.partitions())
}

/// As [`prove_partitions_with`], for the partitions in `range` only (benchmarks that time a
/// few partitions of a large proof); an error when the range is not within the plan's.
pub fn prove_partition_range(
    plan: &dyn ProofPlan,
    params: &dyn cuzk_groth16::ParameterSource,
    pce: Option<&cuzk_groth16::Pce>,
    backend: &dyn ProvingBackend,
    range: std::ops::Range<usize>,
) -> Result<(Vec<u8>, Vec<StageTimings>)> {
    if range.end > plan.partitions() || range.is_empty() {
        return Err(Error::Input(crate::InputError::new(format!(
            "partitions {range:?} of a proof of {}",
            plan.partitions()
        ))));
    }
    let mut parts = Vec::with_capacity(range.len());
    let mut proof = Vec::with_capacity(range.len() * crate::verify::PARTITION_PROOF_BYTES);
    let mut rng = rand::rngs::OsRng;
    for k in range {
        let started = Instant::now();
        let mut syn = crate::plan::guard(|| plan.synthesize(k, pce))?;
        if let Some(p) = backend.host_pinner() {
            syn.assignment.pin_evaluations(p.as_ref());
        }
        let r = random_scalar(&mut rng);
        let s_ = random_scalar(&mut rng);
        let (p, pt) = prove_timed(backend, params, &syn.assignment, r, s_)?;
        proof.extend_from_slice(&p.to_bytes());
        parts.push(StageTimings {
            circuit_build: syn.circuit_build,
            witness: syn.witness,
            pce_eval: syn.pce_eval,
            ntt: pt.ntt,
            msm: pt.msm,
            total: started.elapsed(),
            device: pt.device,
            split: syn
                .assignment
                .split()
                .ok()
                .map(|q| [q.l.counts(), q.a.counts(), q.b.counts()]),
            ..StageTimings::default()
        });
    }
    Ok((proof, parts))
}

fn random_scalar<R: RngCore>(rng: &mut R) -> blstrs::Scalar {
    <blstrs::Scalar as ff::Field>::random(rng)
}
