//! The crate's error type: one enum, so callers can map each failure to a status or an exit code.

use std::path::PathBuf;

use bellpepper_core::SynthesisError;

/// Everything that can go wrong in this crate. Every variant carries enough context to tell an
/// operator what to fix; none of them is produced by a panic.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The circuit refused to synthesize (missing witness value, unsatisfiable gadget, ...).
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),

    /// A witness does not have the shape its pre-compiled constraint system records.
    #[error("witness layout does not match the recorded circuit: {0}")]
    LayoutMismatch(String),

    /// A circuit is too large for a format limit (index widths, domain size).
    #[error("circuit too large: {0}")]
    TooLarge(String),

    /// Parameters (SRS) whose sizes do not fit the circuit being proved.
    #[error("parameters do not match the circuit: {0}")]
    ParamsMismatch(String),

    /// A parameter or verifying-key file that cannot be parsed.
    #[error("invalid parameter file {path}: {reason}")]
    ParamsFile { path: PathBuf, reason: String },

    /// A pre-compiled constraint system file that is corrupt, truncated or for another circuit.
    #[error("invalid PCE file {path}: {reason}")]
    PceFile { path: PathBuf, reason: String },

    /// Bytes that do not decode as a proof or a verifying key.
    #[error("malformed encoding: {0}")]
    Encoding(String),

    /// The verifying key is malformed for the given public inputs.
    #[error("verification input error: {0}")]
    VerifyInput(String),

    /// A device backend reported a failure.
    #[error("backend {backend} failed: {message}")]
    Backend { backend: String, message: String },

    /// A backend operation was run under the guard of a device other than its own: a bug in
    /// the caller, refused before anything touched either device.
    #[error("an operation for device {expected} was run under the guard of {held}")]
    WrongDevice { expected: String, held: String },

    /// The caller stopped the proof at a yield point (its job was cancelled).
    #[error("stopped at a yield point: {0}")]
    Stopped(String),

    /// An I/O error with the file it happened on.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
