//! The one place engine and Filecoin errors become gRPC statuses.

use cuzk_engine::EngineError;
use tonic::{Code, Status};

/// The gRPC status for an engine error.
pub fn engine_status(e: &EngineError) -> Status {
    let code = match e {
        EngineError::Invalid(_) => Code::InvalidArgument,
        EngineError::QueueFull(_) | EngineError::TooLarge(_) => Code::ResourceExhausted,
        EngineError::NotFound(_) => Code::NotFound,
        EngineError::Cancelled => Code::Cancelled,
        EngineError::ShuttingDown | EngineError::Unavailable(_) => Code::Unavailable,
        EngineError::Failed(_) => Code::Internal,
    };
    Status::new(code, e.to_string())
}

/// The gRPC status for a Filecoin-layer error: bad input is InvalidArgument, a missing
/// parameter file FailedPrecondition, anything else Internal.
pub fn filecoin_status(e: &cuzk_filecoin::Error) -> Status {
    let code = if e.is_input() {
        Code::InvalidArgument
    } else if matches!(e, cuzk_filecoin::Error::Params { .. }) {
        Code::FailedPrecondition
    } else {
        Code::Internal
    };
    Status::new(code, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_error_has_its_code() {
        let cases = [
            (EngineError::Invalid("x".into()), Code::InvalidArgument),
            (EngineError::QueueFull("x".into()), Code::ResourceExhausted),
            (EngineError::TooLarge("x".into()), Code::ResourceExhausted),
            (EngineError::NotFound("x".into()), Code::NotFound),
            (EngineError::Cancelled, Code::Cancelled),
            (EngineError::ShuttingDown, Code::Unavailable),
            (EngineError::Unavailable("x".into()), Code::Unavailable),
            (EngineError::Failed("x".into()), Code::Internal),
        ];
        for (e, code) in cases {
            assert_eq!(engine_status(&e).code(), code, "{e:?}");
        }
    }
}
