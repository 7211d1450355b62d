//! What the engine proves: work split into partitions, described by a trait so the engine
//! stays free of cryptography.

use std::any::Any;

use crate::device::DeviceGuard;

/// A partition synthesized on the CPU, waiting for a device.
pub type Synthesized = Box<dyn Any + Send + Sync>;

/// One proof request's work.
pub trait ProofWork: Send + Sync {
    /// The proof kind, for queues and metrics ("porep", "winning-post", ...).
    fn kind(&self) -> &str;
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
