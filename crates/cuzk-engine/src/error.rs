//! The engine's errors, each with the gRPC-like class a server maps it to.

/// Why an engine call failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The request is invalid (bad input).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The queue is full.
    #[error("queue full: {0}")]
    QueueFull(String),
    /// A request needs more memory than a whole budget.
    #[error("request too large: {0}")]
    TooLarge(String),
    /// No such job.
    #[error("unknown job {0}")]
    NotFound(String),
    /// The job was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// No device can take work (every one is quarantined).
    #[error("no device available: {0}")]
    Unavailable(String),
    /// The engine is shutting down.
    #[error("engine is shutting down")]
    ShuttingDown,
    /// A device or the proving work failed.
    #[error("{0}")]
    Failed(String),
}
