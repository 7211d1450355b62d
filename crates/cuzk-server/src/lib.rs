//! cuzk's gRPC service: the `cuzk.v1.ProvingEngine` wire contract (proto/cuzk/v1) over the
//! proving engine.
//!
//! # What this crate owns
//!
//! - The generated wire types, server and client ([`proto`]).
//! - [`ProvingService`]: each method validated, then carried out on the
//!   [`cuzk_engine::Engine`] and the [`cuzk_filecoin::CircuitStore`].
//! - The mapping of every engine and Filecoin error to a gRPC status, in one module
//!   ([`errors`]).
//! - Prometheus text for the engine's metrics ([`prometheus`]).
//! - [`serve`]: the service on a listener the caller bound (tests bind `127.0.0.1:0`), until
//!   a shutdown future resolves.
//!
//! It does no proving itself and decides nothing about scheduling.

// tonic's Status is the error type of every gRPC handler; boxing it would only add
// conversions at each call.
#![allow(clippy::result_large_err)]

pub mod convert;
pub mod errors;
pub mod prometheus;
mod service;

pub use service::ProvingService;

/// The generated cuzk.v1 types, server and client.
pub mod proto {
    #![allow(
        missing_docs,
        unused_qualifications,
        clippy::all,
        missing_debug_implementations
    )]
    tonic::include_proto!("cuzk.v1");
}

/// Largest request or response message by default: 256 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 << 20;

/// gRPC's status for a message over the size limit is RESOURCE_EXHAUSTED; tonic answers
/// OUT_OF_RANGE. None of our handlers returns OUT_OF_RANGE, so every such answer is the size
/// check's, and is rewritten (in the headers, where tonic puts an early error).
fn size_limit_code<B>(mut response: http::Response<B>) -> http::Response<B> {
    let h = response.headers_mut();
    if h.get("grpc-status").is_some_and(|v| v == "11") {
        h.insert("grpc-status", http::HeaderValue::from_static("8"));
    }
    response
}

/// Serves `service` on `listener` until `shutdown` resolves, then stops accepting and lets
/// calls in progress finish. Messages larger than `max_message_bytes` are refused with
/// ResourceExhausted before they are decoded.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: ProvingService,
    max_message_bytes: usize,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let svc = proto::proving_engine_server::ProvingEngineServer::new(service)
        .max_decoding_message_size(max_message_bytes)
        .max_encoding_message_size(max_message_bytes);
    tonic::transport::Server::builder()
        .layer(tower::util::MapResponseLayer::new(size_limit_code))
        .add_service(svc)
        .serve_with_incoming_shutdown(
            tokio_stream::wrappers::TcpListenerStream::new(listener),
            shutdown,
        )
        .await
}
