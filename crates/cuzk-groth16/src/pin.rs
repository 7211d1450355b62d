//! Page-locked ("pinned") host memory for what a device copies each proof.
//!
//! A device copies from pinned memory at full bus speed and from pageable memory through the
//! driver's staging buffers (on a lent H100, 2026-12-07: 55.1 GB/s against 6.8 GB/s, pinning
//! 4 GiB took 0.20 s and unpinning it 0.08 s). A device backend offers a [`HostPinner`]
//! ([`crate::ProvingBackend::host_pinner`]); whoever synthesizes a partition for it has the
//! assignment's a, b and c pinned ([`crate::ProvingAssignment::pin_evaluations`]), off the
//! device's lock, and they are unpinned when the assignment is dropped, before their memory
//! is freed.

/// Pins host memory for a device's copies.
pub trait HostPinner: Send + Sync + std::fmt::Debug {
    /// Pins the `bytes` at `addr`, or `None` when they could not be pinned (copies then run
    /// from pageable memory). The caller keeps the memory allocated and in place until the
    /// returned region is dropped.
    fn pin(&self, addr: usize, bytes: usize) -> Option<Box<dyn PinnedRegion>>;
}

/// A pinned range of host memory, unpinned when dropped.
pub trait PinnedRegion: Send + Sync + std::fmt::Debug {}

/// Evaluation vectors below this many bytes stay pageable: pinning has a fixed cost per call,
/// and a small copy gains little from it.
pub const PIN_MIN_BYTES: usize = 64 << 20;
