//! The CUDA backend: H and the five MSMs of a Groth16 proof on NVIDIA GPUs.
//!
//! # What this crate owns
//!
//! - Our CUDA C++ (`cuda/*.cu`) over sppark's field, curve, NTT and Pippenger primitives,
//!   behind a small C ABI (`cuda/cuzk_cuda.h`) in which every function takes the device
//!   explicitly, makes it current on the calling thread, and returns `{code, message}`
//!   instead of letting a C++ exception out.
//! - Devices as handles ([`CudaDevice`]): enumerated once through the CUDA API, named by PCI
//!   bus id, one per GPU process-wide, each owning the GPU's one [`cuzk_groth16::Device`]
//!   (lock, VRAM ledger, health). Every operation takes that device's guard and checks it is
//!   the GPU's; device memory is reserved through it before any CUDA call, so an allocation
//!   past the budget is an error, not an out-of-memory crash.
//! - [`CudaBackend`], the [`cuzk_groth16::ProvingBackend`] implementation, which keeps a
//!   circuit's parameters resident on the device when the budget allows ([`Residency`]),
//!   and runs the fixed-base multiplications of parameter generation. Over resident
//!   parameters a proof is five device operations, each timed with CUDA events: H (a, b and
//!   c copied on three streams into a buffer allocated once with the parameters, the NTTs,
//!   then H's MSM, H never leaving the device), and the L, A and B MSMs over scalars split
//!   by value ([`cuzk_groth16::SplitScalars`]: the ones summed by batch addition, Pippenger
//!   over the rest, their bases gathered on the device). With parameters in host memory (a
//!   budget too small for them) the same five operations stream the bases: L, A and B
//!   upload a window of bases beside the sums over the window before, and H's MSM reads H
//!   where the NTTs left it; the parameters pin their host memory once
//!   ([`cuzk_groth16::ParameterSource::pin_host`]), so the uploads run at the bus's speed.
//!
//! It does no scheduling: the engine decides which device proves what. It never reads or
//! writes `CUDA_VISIBLE_DEVICES`.
//!
//! This is the only crate with `unsafe` code: the FFI calls, each with its SAFETY comment.
//! Without the `cuda` feature the crate is empty and builds without a CUDA compiler.

#![cfg_attr(not(feature = "cuda"), forbid(unsafe_code))]

#[cfg(feature = "cuda")]
mod backend;
#[cfg(feature = "cuda")]
mod buffer;
#[cfg(feature = "cuda")]
mod device;
#[cfg(feature = "cuda")]
mod error;
#[cfg(feature = "cuda")]
mod ffi;
#[cfg(feature = "cuda")]
mod fixed_base;
#[cfg(feature = "cuda")]
mod pinned;
#[cfg(feature = "cuda")]
mod resident;
#[cfg(feature = "cuda")]
mod streamed;
#[cfg(feature = "cuda")]
mod timeline;
#[cfg(feature = "cuda")]
mod vram;

// sppark's device table (select_gpu, ngpus) lives in its own static library, which is linked
// only when Rust code references the crate.
#[cfg(feature = "cuda")]
use sppark as _;

#[cfg(feature = "cuda")]
pub use backend::{CudaBackend, MsmPlacement, Residency, ResidentInfo};
#[cfg(feature = "cuda")]
pub use buffer::{upload_rates, UploadRates};
#[cfg(feature = "cuda")]
pub use device::{default_margin, devices, CudaDevice, CudaDeviceInfo, DeviceSelector};
#[cfg(feature = "cuda")]
pub use error::CudaError;
#[cfg(feature = "cuda")]
pub use pinned::{CudaPinner, Pinned};
#[cfg(feature = "cuda")]
pub use resident::{ResidentG1, ResidentG2};
