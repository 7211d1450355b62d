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

pub mod access;
pub mod config;
pub mod convert;
pub mod errors;
pub mod http;
pub mod listen;
pub mod placement;
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

/// The encoded descriptors of cuzk.v1, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("cuzk_v1_descriptor");

/// Largest request or response message by default: 256 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 << 20;

/// gRPC's status for a message over the size limit is RESOURCE_EXHAUSTED; tonic answers
/// OUT_OF_RANGE. None of our handlers returns OUT_OF_RANGE, so every such answer is the size
/// check's, and is rewritten (in the headers, where tonic puts an early error).
fn size_limit_code<B>(mut response: ::http::Response<B>) -> ::http::Response<B> {
    let h = response.headers_mut();
    if h.get("grpc-status").is_some_and(|v| v == "11") {
        h.insert("grpc-status", ::http::HeaderValue::from_static("8"));
    }
    response
}

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The transport failed (listener, connection handling).
    #[error("gRPC transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The reflection service could not be built from the descriptors.
    #[error("gRPC reflection: {0}")]
    Reflection(String),
}

/// How the service is exposed.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Largest message accepted or sent.
    pub max_message_bytes: usize,
    /// Who may call: the bearer token and the networks trusted without it.
    pub access: access::Access,
    /// TLS on a TCP listener; `None`: plaintext.
    pub tls: Option<Tls>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            access: access::Access::default(),
            tls: None,
        }
    }
}

/// TLS material for the gRPC listener, PEM-encoded.
#[derive(Clone)]
pub struct Tls {
    /// The server's certificate chain.
    pub cert: Vec<u8>,
    /// The server's private key.
    pub key: Vec<u8>,
    /// When set, clients must present a certificate signed by one of these CAs.
    pub client_ca: Option<Vec<u8>>,
}

impl std::fmt::Debug for Tls {
    // The key stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("client_certificates", &self.client_ca.is_some())
            .finish_non_exhaustive()
    }
}

impl Tls {
    fn config(&self) -> tonic::transport::ServerTlsConfig {
        let c = tonic::transport::ServerTlsConfig::new()
            .identity(tonic::transport::Identity::from_pem(&self.cert, &self.key));
        match &self.client_ca {
            Some(ca) => c.client_ca_root(tonic::transport::Certificate::from_pem(ca)),
            None => c,
        }
    }
}

/// Calls one connection may have open at once.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 256;
/// How often an idle connection is pinged.
const KEEPALIVE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a ping may go unanswered before the connection is closed.
const KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// A listener the service runs on.
#[derive(Debug)]
pub enum Listener {
    /// TCP.
    Tcp(tokio::net::TcpListener),
    /// A unix socket.
    Unix(tokio::net::UnixListener),
}

/// Serves `service` on `listener` until `shutdown` resolves, then stops accepting and lets
/// calls in progress finish. Messages larger than the limit are refused with
/// RESOURCE_EXHAUSTED before they are decoded.
pub async fn serve(
    listener: Listener,
    service: ProvingService,
    opts: ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    let svc = proto::proving_engine_server::ProvingEngineServer::new(service)
        .max_decoding_message_size(opts.max_message_bytes)
        .max_encoding_message_size(opts.max_message_bytes);
    let svc = tonic::service::interceptor::InterceptedService::new(svc, opts.access.interceptor());
    let (mut health, health_svc) = tonic_health::server::health_reporter();
    health
        .set_serving::<proto::proving_engine_server::ProvingEngineServer<ProvingService>>()
        .await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| ServeError::Reflection(e.to_string()))?;
    // Dead peers are found by HTTP/2 pings (a proof's call may wait minutes for its answer,
    // so there is no request timeout); one connection carries a bounded number of calls.
    let mut builder = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(KEEPALIVE_TIMEOUT))
        .max_concurrent_streams(Some(MAX_STREAMS_PER_CONNECTION));
    if let (Some(tls), Listener::Tcp(_)) = (&opts.tls, &listener) {
        builder = builder.tls_config(tls.config())?;
    }
    let router = builder
        .layer(tower::util::MapResponseLayer::new(size_limit_code))
        .add_service(health_svc)
        .add_service(reflection)
        .add_service(svc);
    match listener {
        Listener::Tcp(l) => {
            router
                .serve_with_incoming_shutdown(listen::Accepting::new(l), shutdown)
                .await?
        }
        Listener::Unix(l) => {
            router
                .serve_with_incoming_shutdown(listen::Accepting::new(l), shutdown)
                .await?
        }
    }
    Ok(())
}
