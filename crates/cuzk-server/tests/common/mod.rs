//! A service over real gRPC on 127.0.0.1:0 with the CPU backend and 2 KiB fixtures.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cuzk_engine::{Device, Engine, EngineConfig};
use cuzk_filecoin::fixtures::{
    bind_fixture_dirs, ensure_fixtures_locked, fixture_store, Manifest, Quiet,
};
use cuzk_filecoin::{ProofKind, ProofRequest, SectorSize};
use cuzk_groth16::CpuBackend;
use cuzk_server::proto;
use cuzk_server::proto::proving_engine_client::ProvingEngineClient;
use cuzk_server::{serve, Listener, ProvingService, ServeOptions};
use tonic::transport::Channel;

pub fn fixtures() -> (PathBuf, Manifest) {
    let dir = match std::env::var_os("CUZK_TEST_FIXTURES") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/cuzk-test-fixtures"),
    };
    bind_fixture_dirs(&dir).expect("bind fixture dirs");
    let m = ensure_fixtures_locked(&dir, SectorSize::S2KiB, &Quiet, Duration::from_secs(1800))
        .expect("fixtures");
    (dir, m)
}

pub fn wire(kind: ProofKind, r: &ProofRequest, id: &str) -> proto::SubmitProofRequest {
    cuzk_server::convert::submit_request(id, kind, r, proto::Priority::Unspecified)
}

pub struct Server {
    pub client: ProvingEngineClient<Channel>,
    pub channel: Channel,
    pub engine: Arc<Engine>,
    pub addr: std::net::SocketAddr,
    serving: Serving,
}

/// A service running on 127.0.0.1, without a client.
pub struct Serving {
    pub engine: Arc<Engine>,
    pub addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), cuzk_server::ServeError>>,
}

pub fn cpu_device() -> Arc<Device> {
    Device::new(Arc::new(CpuBackend::new()))
}

/// A service on the CPU backend, and a client of it.
pub async fn start(dir: &Path, max_message: usize) -> Server {
    start_on(dir, max_message, vec![cpu_device()]).await
}

/// A service on `devices`, and a client of it.
pub async fn start_on(dir: &Path, max_message: usize, devices: Vec<Arc<Device>>) -> Server {
    let opts = ServeOptions {
        max_message_bytes: max_message,
        ..ServeOptions::default()
    };
    let serving = serve_on(dir, devices, opts).await;
    let addr = serving.addr;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .expect("connect");
    let client = ProvingEngineClient::new(channel.clone());
    Server {
        client,
        channel,
        engine: serving.engine.clone(),
        addr,
        serving,
    }
}

/// A service on `devices` with `opts`, listening on 127.0.0.1.
pub async fn serve_on(dir: &Path, devices: Vec<Arc<Device>>, opts: ServeOptions) -> Serving {
    let store = Arc::new(fixture_store(dir));
    let engine = Engine::start(
        EngineConfig {
            synthesis_threads: 1,
            urgent_synthesis_threads: 1,
            host_budget: 8 << 30,
            ..EngineConfig::default()
        },
        devices,
    )
    .expect("engine");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let engine = Arc::new(engine);
    engine.set_reclaimer(store.reclaimer());
    let service = ProvingService::new(engine.clone(), store, true);
    let task = tokio::spawn(serve(Listener::Tcp(listener), service, opts, async {
        let _ = rx.await;
    }));
    Serving {
        engine,
        addr,
        stop: Some(tx),
        task,
    }
}

impl Serving {
    pub async fn stop(mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        self.task.await.unwrap().unwrap();
    }
}

impl Server {
    pub async fn stop(self) {
        self.serving.stop().await;
    }
}
