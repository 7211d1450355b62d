//! What the engine proves: work split into partitions, described by a trait so the engine
//! stays free of cryptography.

use crate::device::Lease;
use crate::error::EngineError;
use crate::job::Priority;

/// A partition synthesized on the CPU, waiting for a device: its Groth16 assignment.
pub type Synthesized = cuzk_groth16::ProvingAssignment;

/// Why work failed, which decides what the engine does next.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkError {
    /// The request cannot be proved (a malformed input): the job fails; nothing is retried.
    #[error("bad input: {0}")]
    Input(String),
    /// The device failed (a device error, a wrong result, a hang): the partition moves to
    /// another device and this one is quarantined.
    #[error("device fault: {0}")]
    Device(String),
    /// A limit every device would hit alike (a memory budget too small, parameters that do
    /// not fit the circuit): the job fails; nothing is retried.
    #[error("{0}")]
    Limit(String),
    /// The job was cancelled while this ran.
    #[error("stopped: {0}")]
    Stopped(String),
    /// Anything else, a panic included: retried once on a device, else the job fails.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<cuzk_groth16::Error> for WorkError {
    fn from(e: cuzk_groth16::Error) -> Self {
        use cuzk_groth16::Error as E;
        match e {
            E::Backend { .. } => WorkError::Device(e.to_string()),
            E::Stopped(m) => WorkError::Stopped(m),
            E::ParamsMismatch(_) | E::TooLarge(_) => WorkError::Limit(e.to_string()),
            E::Synthesis(_) | E::LayoutMismatch(_) => WorkError::Input(e.to_string()),
            _ => WorkError::Internal(e.to_string()),
        }
    }
}

impl From<EngineError> for WorkError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::TooLarge(m) => WorkError::Limit(m),
            EngineError::Invalid(m) => WorkError::Input(m),
            EngineError::Cancelled => WorkError::Stopped("cancelled".into()),
            e => WorkError::Internal(e.to_string()),
        }
    }
}

/// A digest of everything that determines a proof (kind, registered proof, sizes, ids,
/// randomness, commitments, vanilla proofs): two requests with the same digest ask for the
/// same proof. Jobs are named by request id *and* this digest.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentDigest(pub [u8; 32]);

impl ContentDigest {
    /// The first `n` bytes in lowercase hex.
    pub fn short_hex(&self, n: usize) -> String {
        self.0[..n.min(32)]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

impl std::fmt::Debug for ContentDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ContentDigest({})", self.short_hex(32))
    }
}

impl std::fmt::Display for ContentDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.short_hex(32))
    }
}

/// One proof request's work.
pub trait ProofWork: Send + Sync {
    /// The proof kind, for queues and metrics ("porep", "winning-post", ...).
    fn kind(&self) -> &str;
    /// The priority this work runs at unless the client names one.
    fn priority(&self) -> Priority;
    /// The digest of the request this work proves (see [`ContentDigest`]).
    fn content(&self) -> ContentDigest;
    /// How long making this work waited for its parameters to load (zero when they were
    /// already in memory).
    fn params_load(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
    /// Number of partitions.
    fn partitions(&self) -> usize;
    /// Host memory one synthesized partition holds until it is proved.
    fn host_bytes_per_partition(&self) -> u64;
    /// Device memory proving one partition takes.
    fn device_bytes_per_partition(&self) -> u64;
    /// Synthesizes partition `k` (CPU).
    fn synthesize(&self, k: usize) -> Result<Synthesized, WorkError>;
    /// Proves partition `k` on the locked device. May be called again on another device
    /// with the same synthesized partition after a failure.
    fn prove(
        &self,
        k: usize,
        synthesized: &Synthesized,
        device: &Lease<'_>,
    ) -> Result<Vec<u8>, WorkError>;
    /// Whether `proof` is a valid proof of partition `k` for the public inputs its
    /// synthesis computed (checked as soon as a device returns it, so a device that computes
    /// wrong results is caught and the partition proved elsewhere; [`ProofWork::finish`]
    /// still verifies the whole proof as the chain will).
    fn verify_partition(
        &self,
        k: usize,
        synthesized: &Synthesized,
        proof: &[u8],
    ) -> Result<bool, WorkError>;
    /// Assembles the partition proofs in order and verifies the result.
    fn finish(&self, partitions: Vec<Vec<u8>>) -> Result<Vec<u8>, WorkError>;
}
