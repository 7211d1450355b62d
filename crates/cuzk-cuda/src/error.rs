//! The crate's error type.

/// What can go wrong on the CUDA side. None of these is a panic; every one names the device
/// or the operation.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// The CUDA runtime or a kernel failed (code is CUDA's error number, negated, or 3 for an
    /// internal failure).
    #[error("CUDA error {code}: {message}")]
    Cuda { code: i32, message: String },
    /// A device index or identifier that names no device.
    #[error("no such device: {0}")]
    BadDevice(String),
    /// Arguments the CUDA code refused (sizes, null pointers).
    #[error("bad argument: {0}")]
    BadArgument(String),
    /// An allocation that does not fit the device's VRAM budget; refused before any CUDA call.
    #[error("{device}: {what} needs {needed} bytes of device memory, {available} of the {budget}-byte budget are free")]
    Budget {
        device: String,
        what: String,
        needed: u64,
        available: u64,
        budget: u64,
    },
}

/// A budget refusal is a limit every device of that size hits alike, and a refused argument
/// a mismatch of sizes: neither is the device's fault. CUDA errors are (the engine
/// quarantines the device).
impl From<CudaError> for cuzk_groth16::Error {
    fn from(e: CudaError) -> Self {
        match e {
            CudaError::Budget { .. } => cuzk_groth16::Error::TooLarge(e.to_string()),
            CudaError::BadArgument(_) => cuzk_groth16::Error::ParamsMismatch(e.to_string()),
            CudaError::Cuda { .. } | CudaError::BadDevice(_) => cuzk_groth16::Error::Backend {
                backend: "cuda".into(),
                message: e.to_string(),
            },
        }
    }
}
