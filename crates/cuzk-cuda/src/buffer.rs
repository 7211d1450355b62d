//! Device memory allocated once and reused: a resident copy's working buffers, and the
//! copy-rate probe benchmarks run (pageable against pinned host memory).

use std::ptr::NonNull;
use std::time::{Duration, Instant};

use cuzk_groth16::DeviceGuard;

use crate::device::{CudaDevice, Held};
use crate::error::CudaError;
use crate::ffi;
use crate::pinned::Pinned;

/// A device allocation (cudaMalloc, outside the stream-ordered pool), freed on drop. Its
/// memory must be reserved against the device's budget by whoever makes it.
#[derive(Debug)]
pub(crate) struct DeviceBuffer {
    ptr: NonNull<ffi::Buffer>,
}

// SAFETY: the buffer is a device allocation with no thread affinity; it is only used through
// calls made under its device's guard (by the value that owns it).
unsafe impl Send for DeviceBuffer {}
// SAFETY: as above.
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    pub(crate) fn new(held: Held<'_>, bytes: u64) -> Result<Self, CudaError> {
        let mut out: *mut ffi::Buffer = std::ptr::null_mut();
        // SAFETY: `out` receives the new buffer or stays null; the device index came from
        // enumeration and is checked on the C side.
        let status = unsafe { ffi::cuzk_cuda_buffer_new(held.index(), bytes as usize, &mut out) };
        ffi::check(status, "device buffer")?;
        let ptr = NonNull::new(out).ok_or_else(|| CudaError::Cuda {
            code: 3,
            message: "allocation returned no buffer".into(),
        })?;
        Ok(DeviceBuffer { ptr })
    }

    pub(crate) fn as_ptr(&self) -> *mut ffi::Buffer {
        self.ptr.as_ptr()
    }

    /// Copies `host` to the start of the buffer (which must hold it); the copy's device time.
    fn upload<T>(&self, host: &[T]) -> Result<Duration, CudaError> {
        let mut ms = 0f32;
        // SAFETY: the buffer is live (owned by self); `host` is a live slice of the byte
        // length passed, only read; the C side checks the length against the buffer's.
        let status = unsafe {
            ffi::cuzk_cuda_buffer_upload(
                self.ptr.as_ptr(),
                host.as_ptr().cast(),
                size_of_val(host),
                &mut ms,
            )
        };
        ffi::check(status, "upload")?;
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: the pointer came from cuzk_cuda_buffer_new and is freed exactly once, here.
        unsafe { ffi::cuzk_cuda_buffer_free(self.ptr.as_ptr()) }
    }
}

/// How fast host memory reaches the device: one upload from pageable memory, the time to pin
/// that memory, the same upload from it pinned, and the time to unpin it.
#[derive(Clone, Copy, Debug)]
pub struct UploadRates {
    /// Bytes copied.
    pub bytes: u64,
    /// The upload from pageable memory (device time).
    pub pageable: Duration,
    /// Pinning the memory (cudaHostRegister, host time).
    pub pin: Duration,
    /// The upload from the pinned memory (device time).
    pub pinned: Duration,
    /// Unpinning it (cudaHostUnregister, host time).
    pub unpin: Duration,
}

/// Measures [`UploadRates`] for `host` on `device` (memory reserved through `guard`).
pub fn upload_rates<T: Sync>(
    device: &CudaDevice,
    guard: &DeviceGuard<'_>,
    host: &[T],
) -> Result<UploadRates, CudaError> {
    let held = device.held(guard)?;
    let bytes = size_of_val(host) as u64;
    let _mem = held.alloc("upload probe", bytes)?;
    let buf = DeviceBuffer::new(held, bytes)?;
    let pageable = buf.upload(host)?;
    let t = Instant::now();
    let pin = Pinned::new(host)?;
    let pin_time = t.elapsed();
    let pinned = buf.upload(host)?;
    let t = Instant::now();
    drop(pin);
    Ok(UploadRates {
        bytes,
        pageable,
        pin: pin_time,
        pinned,
        unpin: t.elapsed(),
    })
}
