//! What the engine proves: work split into partitions, described by a trait so the engine
//! stays free of cryptography.

use std::any::Any;

use crate::device::DeviceGuard;

/// A partition synthesized on the CPU, waiting for a device.
pub type Synthesized = Box<dyn Any + Send + Sync>;

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
    fn synthesize(&self, k: usize) -> Result<Synthesized, String>;
    /// Proves partition `k` on the locked device. May be called again on another device
    /// with the same synthesized partition after a failure.
    fn prove(
        &self,
        k: usize,
        synthesized: &Synthesized,
        device: &DeviceGuard<'_>,
    ) -> Result<Vec<u8>, String>;
    /// Assembles the partition proofs in order and verifies the result.
    fn finish(&self, partitions: Vec<Vec<u8>>) -> Result<Vec<u8>, String>;
}
