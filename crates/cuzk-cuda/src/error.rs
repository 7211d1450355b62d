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
    /// Refused by the device object before any CUDA call: an allocation past the VRAM
    /// budget, or a guard of another device.
    #[error(transparent)]
    Device(#[from] cuzk_groth16::Error),
}

/// A budget refusal is a limit every device of that size hits alike, and a refused argument
/// a mismatch of sizes: neither is the device's fault. CUDA errors are (the engine
/// quarantines the device).
impl From<CudaError> for cuzk_groth16::Error {
    fn from(e: CudaError) -> Self {
        match e {
            CudaError::Device(e) => e,
            CudaError::BadArgument(_) => cuzk_groth16::Error::ParamsMismatch(e.to_string()),
            CudaError::Cuda { .. } | CudaError::BadDevice(_) => cuzk_groth16::Error::Backend {
                backend: "cuda".into(),
                message: e.to_string(),
            },
        }
    }
}
