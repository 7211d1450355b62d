//! A proof plan as engine work: partitions synthesized on the CPU pool, proved on whichever
//! device the engine hands over, assembled and verified with filecoin-proofs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_engine::{ContentDigest, Lease, Priority, ProofWork, Synthesized, WorkError};
use cuzk_groth16::{ParameterSource, Parameters, Pce, PreparedVerifyingKey, Proof};

use crate::error::Result;
use crate::plan::{guard, ProofPlan};
use crate::registry::ProofKind;
use crate::store::CircuitStore;
use crate::verify::assemble_verified;

/// One Filecoin proof as engine work.
pub struct FilecoinWork {
    plan: Arc<dyn ProofPlan>,
    params: Arc<Parameters>,
    pce: Option<Arc<Pce>>,
    params_load: Duration,
    pvk: PreparedVerifyingKey,
    host_bytes: u64,
    device_bytes: u64,
}

impl std::fmt::Debug for FilecoinWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilecoinWork")
            .field("kind", &self.plan.kind())
            .finish_non_exhaustive()
    }
}

impl FilecoinWork {
    /// Work for `plan`, with circuits from `store`. Parameters and PCE are loaded (or
    /// extracted, which may take minutes for a large circuit) now and held until the work is
    /// dropped, so they cannot be evicted under a running job and a missing file is an error
    /// at submit. Without `use_pce` the partitions are synthesized directly.
    pub fn new(plan: Arc<dyn ProofPlan>, store: &CircuitStore, use_pce: bool) -> Result<Self> {
        let pce = if use_pce {
            Some(store.pce(plan.circuit())?)
        } else {
            None
        };
        let t = Instant::now();
        let params = store.params(plan.circuit())?;
        Ok(Self::with(plan, params, t.elapsed(), pce))
    }

    /// Like [`FilecoinWork::new`] with the PCE, but never waits for an extraction: when the
    /// circuit's PCE is neither in memory nor on disk, it is extracted in the background for
    /// later work and this work synthesizes directly.
    pub fn without_waiting(plan: Arc<dyn ProofPlan>, store: &Arc<CircuitStore>) -> Result<Self> {
        let t = Instant::now();
        let params = store.params(plan.circuit())?;
        let params_load = t.elapsed();
        let pce = store.pce_or_extract_in_background(plan.circuit());
        Ok(Self::with(plan, params, params_load, pce))
    }

    fn with(
        plan: Arc<dyn ProofPlan>,
        params: Arc<Parameters>,
        params_load: Duration,
        pce: Option<Arc<Pce>>,
    ) -> Self {
        let (host_bytes, device_bytes) = partition_bytes(&params);
        FilecoinWork {
            host_bytes,
            device_bytes,
            pce,
            pvk: PreparedVerifyingKey::new(&params.vk),
            plan,
            params,
            params_load,
        }
    }

    /// Whether partitions are synthesized with the PCE.
    pub fn uses_pce(&self) -> bool {
        self.pce.is_some()
    }

    /// The plan.
    pub fn plan(&self) -> &Arc<dyn ProofPlan> {
        &self.plan
    }
}

impl ProofWork for FilecoinWork {
    fn kind(&self) -> &str {
        self.plan.kind().name()
    }

    fn priority(&self) -> Priority {
        match self.plan.kind() {
            ProofKind::WinningPoSt => Priority::Critical,
            ProofKind::WindowPoSt => Priority::High,
            ProofKind::PoRep | ProofKind::SnapDeals => Priority::Normal,
        }
    }

    fn content(&self) -> ContentDigest {
        self.plan.content()
    }

    fn params_load(&self) -> Duration {
        self.params_load
    }

    fn partitions(&self) -> usize {
        self.plan.partitions()
    }

    fn host_bytes_per_partition(&self) -> u64 {
        self.host_bytes
    }

    fn device_bytes_per_partition(&self) -> u64 {
        self.device_bytes
    }

    fn synthesize(&self, k: usize) -> Result<Synthesized, WorkError> {
        let syn = guard(|| self.plan.synthesize(k, self.pce.as_deref())).map_err(work_error)?;
        Ok(syn.assignment)
    }

    fn prove(
        &self,
        k: usize,
        synthesized: &Synthesized,
        device: &Lease<'_>,
    ) -> Result<Vec<u8>, WorkError> {
        let _ = k;
        prove_partition(self.params.as_ref(), synthesized, device)
    }

    fn verify_partition(
        &self,
        _k: usize,
        synthesized: &Synthesized,
        proof: &[u8],
    ) -> Result<bool, WorkError> {
        let Ok(proof) = Proof::from_bytes(proof) else {
            return Ok(false);
        };
        Ok(self.pvk.verify(&proof, synthesized.public_inputs())?)
    }

    fn finish(&self, partitions: Vec<Vec<u8>>) -> Result<Vec<u8>, WorkError> {
        assemble_verified(self.plan.as_ref(), &partitions.concat()).map_err(work_error)
    }
}

/// Proves a synthesized partition against `params` on the leased device, with fresh random
/// `r` and `s`: the proof's bytes. The backend reserves what it allocates on its device's
/// ledger; [`partition_bytes`] is the estimate for admission (a partition is placed only
/// where it fits).
pub fn prove_partition(
    params: &Parameters,
    synthesized: &Synthesized,
    device: &Lease<'_>,
) -> Result<Vec<u8>, WorkError> {
    let mut rng = rand::rngs::OsRng;
    let (r, s) = (
        <blstrs::Scalar as ff::Field>::random(&mut rng),
        <blstrs::Scalar as ff::Field>::random(&mut rng),
    );
    let (proof, _) = device.prove(params, synthesized, r, s)?;
    Ok(proof.to_bytes().to_vec())
}

/// Host and device bytes one partition of a circuit with `params` holds in flight, from the
/// parameters' sizes (the H query has one point fewer than the domain, L one per aux
/// variable, the verifying key one IC point per input): on the host a, b, c and the full
/// assignment; on the device a, b, c over the domain and the MSM scalars.
pub fn partition_bytes(params: &Parameters) -> (u64, u64) {
    let domain = (params.h().len() as u64 + 1).next_power_of_two();
    let (inputs, aux) = (params.vk.ic.len() as u64, params.l().len() as u64);
    ((3 * domain + inputs + aux) * 32, (3 * domain + aux) * 32)
}

/// A Filecoin-layer error as a work error: bad input stays bad input.
fn work_error(e: crate::Error) -> WorkError {
    if e.is_input() {
        WorkError::Input(e.to_string())
    } else {
        WorkError::Internal(e.to_string())
    }
}
