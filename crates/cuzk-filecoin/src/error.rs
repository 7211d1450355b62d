//! Errors of the Filecoin layer: bad input (the caller's to fix) apart from everything else.

use std::path::PathBuf;

/// A request that cannot be proved as given. Maps to gRPC InvalidArgument and CLI exit code 2.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InputError(String);

impl InputError {
    /// An input error with the given message.
    pub fn new(msg: impl Into<String>) -> Self {
        InputError(msg.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

/// Everything that can fail while proving or verifying a Filecoin proof.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is invalid. (Not a `source`: the message already holds it, and error
    /// chains would print it twice.)
    #[error("invalid input: {0}")]
    Input(InputError),

    /// A parameter file is missing or unusable.
    #[error("parameters for {circuit}: {reason} ({path})")]
    Params {
        circuit: String,
        path: PathBuf,
        reason: String,
    },

    /// The Groth16 layer failed.
    #[error(transparent)]
    Groth16(#[from] cuzk_groth16::Error),

    /// filecoin-proofs or storage-proofs reported an error.
    #[error("filecoin-proofs: {0}")]
    Proofs(anyhow_error::AnyhowError),

    /// The assembled proof did not verify.
    #[error("proof failed verification{}", match .bad_partitions.as_slice() {
        [] => String::new(),
        p => format!(": bad partition(s) {p:?}"),
    })]
    Verification {
        /// The partitions whose proofs failed on their own (empty when none could be singled out).
        bad_partitions: Vec<usize>,
    },

    /// An I/O error.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::Input(e)
    }
}

/// filecoin-proofs' errors are `anyhow::Error`; kept behind a newtype so the public API does
/// not name anyhow.
pub mod anyhow_error {
    /// An error from filecoin-proofs, with its context chain.
    #[derive(Debug)]
    pub struct AnyhowError(pub(crate) String);

    impl std::fmt::Display for AnyhowError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }
}

impl Error {
    pub(crate) fn proofs(e: impl std::fmt::Display) -> Self {
        Error::Proofs(anyhow_error::AnyhowError(format!("{e:#}")))
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// True when the caller's input is at fault.
    pub fn is_input(&self) -> bool {
        matches!(self, Error::Input(_))
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
