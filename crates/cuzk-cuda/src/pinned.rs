//! Page-locked host memory: transfers from pinned memory run at full bus speed, from pageable
//! memory through a staging copy.

use std::marker::PhantomData;

use cuzk_groth16::{HostPinner, PinnedRegion};

use crate::error::CudaError;
use crate::ffi;

/// A slice pinned for as long as this value lives; it borrows the slice, so the memory can
/// neither move nor be freed while registered.
#[derive(Debug)]
pub struct Pinned<'a, T> {
    ptr: *mut std::ffi::c_void,
    _slice: PhantomData<&'a [T]>,
}

// SAFETY: the value only holds the address it must unregister; the slice it borrows is
// shared (`&[T]`), and CUDA's registration is process-wide, not tied to a thread.
unsafe impl<T: Sync> Send for Pinned<'_, T> {}
// SAFETY: as above; no method reads or writes through the pointer.
unsafe impl<T: Sync> Sync for Pinned<'_, T> {}

impl<'a, T> Pinned<'a, T> {
    /// Pins `slice` (page-locks its pages). Costs time proportional to its size: pin buffers
    /// that are reused, not per transfer.
    pub fn new(slice: &'a [T]) -> Result<Self, CudaError> {
        let bytes = size_of_val(slice);
        if bytes == 0 {
            return Err(CudaError::BadArgument("nothing to pin".into()));
        }
        let ptr = slice.as_ptr() as *mut std::ffi::c_void;
        // SAFETY: ptr/bytes describe a live allocation borrowed for 'a; CUDA only records the
        // range and locks its pages, it does not write to it.
        let status = unsafe { ffi::cuzk_cuda_host_register(ptr, bytes) };
        ffi::check(status, "pin host memory")?;
        Ok(Pinned {
            ptr,
            _slice: PhantomData,
        })
    }
}

impl<T> Drop for Pinned<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the range was registered by `new` and is unregistered once, here, while the
        // borrowed slice is still alive.
        let status = unsafe { ffi::cuzk_cuda_host_unregister(self.ptr) };
        // Unregistering a registered range does not fail short of a dead context, and a drop
        // has no one to report to.
        let _ = ffi::check(status, "unpin host memory");
    }
}

/// The CUDA backend's [`HostPinner`]: registers host memory with CUDA (portable, so every
/// device copies from it at full speed) until the region is dropped.
#[derive(Debug, Default)]
pub struct CudaPinner;

impl HostPinner for CudaPinner {
    fn pin(&self, addr: usize, bytes: usize) -> Option<Box<dyn PinnedRegion>> {
        if addr == 0 || bytes == 0 {
            return None;
        }
        // SAFETY: registration records the range and page-locks its pages; it neither reads
        // nor writes them. The caller keeps the memory allocated and in place until the
        // region is dropped (HostPinner's contract); a range that cannot be registered is an
        // error status, and the memory then stays pageable.
        let status = unsafe { ffi::cuzk_cuda_host_register(addr as *mut std::ffi::c_void, bytes) };
        ffi::check(status, "pin host memory").ok()?;
        Some(Box::new(CudaRegion { addr }))
    }
}

/// A range registered by [`CudaPinner`], unregistered on drop.
#[derive(Debug)]
struct CudaRegion {
    addr: usize,
}

impl PinnedRegion for CudaRegion {}

impl Drop for CudaRegion {
    fn drop(&mut self) {
        // SAFETY: the range was registered by CudaPinner::pin and is unregistered once, here,
        // while its memory is still allocated (its owner drops the region first).
        let status = unsafe { ffi::cuzk_cuda_host_unregister(self.addr as *mut std::ffi::c_void) };
        // As for Pinned: nothing to report to in a drop, and it fails only with a dead context.
        let _ = ffi::check(status, "unpin host memory");
    }
}
