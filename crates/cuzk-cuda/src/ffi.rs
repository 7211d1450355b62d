//! The C ABI of `cuda/cuzk_cuda.h`, and the one function that turns its statuses into errors.
//!
//! Every `extern` function here takes the device explicitly and catches every C++ exception
//! on its side, returning `{code, message}`; the message is owned by us once returned and is
//! freed with `cuzk_cuda_free_message` in [`check`].

use std::ffi::{c_char, c_int, c_void, CStr};

use crate::error::CudaError;

#[repr(C)]
pub(crate) struct Status {
    code: i32,
    message: *mut c_char,
}

#[repr(C)]
pub(crate) struct DeviceInfoRaw {
    pub cuda_ordinal: i32,
    pub pci_domain: u32,
    pub pci_bus: u32,
    pub pci_device: u32,
    pub major: i32,
    pub minor: i32,
    pub sm_count: i32,
    pub total_bytes: u64,
    pub free_bytes: u64,
    pub name: [c_char; 256],
}

/// Opaque device-resident bases.
#[repr(C)]
pub(crate) struct Resident {
    _private: [u8; 0],
}

/// Opaque device memory allocated once and reused.
#[repr(C)]
pub(crate) struct Buffer {
    _private: [u8; 0],
}

/// `cuzk_timing_t`: one call's intervals on the device, in milliseconds from its first command.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Timing {
    upload_start: f32,
    upload_end: f32,
    compute_start: f32,
    compute_end: f32,
    msm_start: f32,
    msm_end: f32,
    wall: f32,
}

impl Timing {
    pub(crate) fn span(&self) -> cuzk_groth16::DeviceSpan {
        cuzk_groth16::DeviceSpan {
            upload: (self.upload_start, self.upload_end),
            compute: (self.compute_start, self.compute_end),
            msm: (self.msm_start, self.msm_end),
            wall: self.wall,
        }
    }
}

// SAFETY (for the whole block): these are the functions of cuda/cuzk_cuda.h with the same
// signatures; pointers are checked for null on the C side and sizes are passed explicitly.
extern "C" {
    pub(crate) fn cuzk_cuda_free_message(message: *mut c_char);
    pub(crate) fn cuzk_cuda_device_count(count: *mut u32) -> Status;
    pub(crate) fn cuzk_cuda_device_info(device: u32, info: *mut DeviceInfoRaw) -> Status;
    pub(crate) fn cuzk_cuda_mem_info(device: u32, free: *mut u64, total: *mut u64) -> Status;
    pub(crate) fn cuzk_cuda_trim(device: u32) -> Status;
    pub(crate) fn cuzk_cuda_host_register(ptr: *mut c_void, bytes: usize) -> Status;
    pub(crate) fn cuzk_cuda_host_unregister(ptr: *mut c_void) -> Status;
    pub(crate) fn cuzk_cuda_ntt(
        device: u32,
        inout: *mut c_void,
        lg_n: u32,
        inverse: c_int,
        gpu_ms: *mut f32,
    ) -> Status;
    pub(crate) fn cuzk_cuda_compute_h(
        device: u32,
        a: *const c_void,
        b: *const c_void,
        c: *const c_void,
        len: usize,
        lg_n: u32,
        z_inv: *const c_void,
        h: *mut c_void,
        gpu_ms: *mut f32,
    ) -> Status;
    pub(crate) fn cuzk_cuda_msm_g1(
        device: u32,
        bases: *const c_void,
        scalars: *const c_void,
        n: usize,
        out: *mut c_void,
    ) -> Status;
    pub(crate) fn cuzk_cuda_msm_g2(
        device: u32,
        bases: *const c_void,
        scalars: *const c_void,
        n: usize,
        out: *mut c_void,
    ) -> Status;
    pub(crate) fn cuzk_cuda_resident_g1(
        device: u32,
        bases: *const c_void,
        n: usize,
        out: *mut *mut Resident,
    ) -> Status;
    pub(crate) fn cuzk_cuda_resident_g2(
        device: u32,
        bases: *const c_void,
        n: usize,
        out: *mut *mut Resident,
    ) -> Status;
    pub(crate) fn cuzk_cuda_resident_msm(
        resident: *mut Resident,
        scalars: *const c_void,
        n: usize,
        out: *mut c_void,
    ) -> Status;
    pub(crate) fn cuzk_cuda_resident_msm_device_scalars(
        resident: *mut Resident,
        scalars: *const c_void,
        n: usize,
        out: *mut c_void,
        msm_ms: *mut f64,
    ) -> Status;
    pub(crate) fn cuzk_cuda_resident_free(resident: *mut Resident);
    pub(crate) fn cuzk_cuda_fixed_base_g1(
        device: u32,
        table: *const c_void,
        c: u32,
        windows: u32,
        scalars: *const c_void,
        n: usize,
        chunk: usize,
        out: *mut c_void,
    ) -> Status;
    pub(crate) fn cuzk_cuda_fixed_base_g2(
        device: u32,
        table: *const c_void,
        c: u32,
        windows: u32,
        scalars: *const c_void,
        n: usize,
        chunk: usize,
        out: *mut c_void,
    ) -> Status;
    pub(crate) fn cuzk_cuda_test_fault(device: u32) -> Status;
    pub(crate) fn cuzk_cuda_buffer_new(device: u32, bytes: usize, out: *mut *mut Buffer) -> Status;
    pub(crate) fn cuzk_cuda_buffer_free(buffer: *mut Buffer);
    pub(crate) fn cuzk_cuda_buffer_upload(
        buffer: *mut Buffer,
        host: *const c_void,
        bytes: usize,
        ms: *mut f32,
    ) -> Status;
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_cuda_h_msm_resident(
        resident: *mut Resident,
        work: *mut Buffer,
        a: *const c_void,
        b: *const c_void,
        c: *const c_void,
        len: usize,
        lg_n: u32,
        z_inv: *const c_void,
        out: *mut c_void,
        timing: *mut Timing,
    ) -> Status;
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_cuda_resident_split_msm(
        resident: *mut Resident,
        bitmap: *const u32,
        n: usize,
        tail_idx: *const u32,
        tail: *const c_void,
        ntail: usize,
        chunk: usize,
        out: *mut c_void,
        timing: *mut Timing,
    ) -> Status;
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_cuda_streamed_split_msm_g1(
        device: u32,
        bases: *const c_void,
        n: usize,
        bitmap: *const u32,
        tail_idx: *const u32,
        tail: *const c_void,
        ntail: usize,
        window: usize,
        chunk: usize,
        out: *mut c_void,
        timing: *mut Timing,
    ) -> Status;
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_cuda_streamed_split_msm_g2(
        device: u32,
        bases: *const c_void,
        n: usize,
        bitmap: *const u32,
        tail_idx: *const u32,
        tail: *const c_void,
        ntail: usize,
        window: usize,
        chunk: usize,
        out: *mut c_void,
        timing: *mut Timing,
    ) -> Status;
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_cuda_h_msm_streamed(
        device: u32,
        bases: *const c_void,
        nbases: usize,
        a: *const c_void,
        b: *const c_void,
        c: *const c_void,
        len: usize,
        lg_n: u32,
        z_inv: *const c_void,
        out: *mut c_void,
        timing: *mut Timing,
    ) -> Status;
}

const BAD_DEVICE: i32 = 1;
const BAD_ARGUMENT: i32 = 2;

/// Turns a status into a result, taking ownership of (and freeing) its message.
pub(crate) fn check(status: Status, what: &str) -> Result<(), CudaError> {
    if status.code == 0 && status.message.is_null() {
        return Ok(());
    }
    let message = if status.message.is_null() {
        String::new()
    } else {
        // SAFETY: a non-null message is a NUL-terminated string the C side strdup'd for us;
        // it is read once here and freed right after, never used again.
        unsafe {
            let s = CStr::from_ptr(status.message)
                .to_string_lossy()
                .into_owned();
            cuzk_cuda_free_message(status.message);
            s
        }
    };
    let message = format!("{what}: {message}");
    Err(match status.code {
        0 => return Ok(()),
        BAD_DEVICE => CudaError::BadDevice(message),
        BAD_ARGUMENT => CudaError::BadArgument(message),
        code => CudaError::Cuda { code, message },
    })
}
