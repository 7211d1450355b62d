//! What the daemon tests share: fixtures, wire requests, a daemon child process.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cuzk_filecoin::fixtures::{bind_fixture_dirs, ensure_fixtures_locked, Manifest, Quiet};
use cuzk_filecoin::{ProofKind, ProofRequest, SectorSize};
use cuzk_server::proto;
use cuzk_server::proto::proving_engine_client::ProvingEngineClient;

pub fn fixtures() -> (PathBuf, Manifest) {
    let dir = match std::env::var_os("CUZK_TEST_FIXTURES") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/cuzk-test-fixtures"),
    };
    // filecoin-proofs' verifiers in the test process read the fixture parameters.
    bind_fixture_dirs(&dir).expect("bind fixture dirs");
    let m = ensure_fixtures_locked(&dir, SectorSize::S2KiB, &Quiet, Duration::from_secs(1800))
        .expect("fixtures");
    (dir, m)
}

pub fn wire(kind: ProofKind, r: &ProofRequest, id: &str) -> proto::SubmitProofRequest {
    cuzk_server::convert::submit_request(id, kind, r, proto::Priority::Unspecified)
}

/// The result of a Prove call for `r` under request id `id` (the call itself must succeed).
pub async fn prove(
    c: &mut ProvingEngineClient<tonic::transport::Channel>,
    kind: ProofKind,
    r: &ProofRequest,
    id: &str,
) -> proto::AwaitProofResponse {
    c.prove(proto::ProveRequest {
        submit: Some(wire(kind, r, id)),
    })
    .await
    .unwrap()
    .into_inner()
    .result
    .unwrap()
}

pub fn free_port() -> u16 {
    free_ports::<1>()[0]
}

/// `N` distinct free ports: every listener is held until all are chosen, so the system
/// cannot hand out the same port twice.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<std::net::TcpListener> = (0..N)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().unwrap().port())
}

/// `cuzk daemon --config config`, killed if the test ends without stopping it.
pub fn spawn(config: &Path) -> Daemon {
    Daemon(
        Command::new(env!("CARGO_BIN_EXE_cuzk"))
            .args(["daemon", "--config"])
            .arg(config)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn cuzk daemon"),
    )
}

/// A config with the fixture parameters, `listen`, one synthesis thread, a long grace period,
/// and `extra` TOML appended.
pub fn write_config(dir: &Path, fixtures: &Path, listen: &str, extra: &str) -> PathBuf {
    let p = dir.join("cuzk.toml");
    std::fs::write(
        &p,
        format!(
            "[server]\nlisten = \"{listen}\"\n\n[params]\ndir = \"{}\"\ncache_dir = \"{}\"\n\n[engine]\nsynthesis_threads = 1\nhost_memory = \"{}\"\n\n[shutdown]\ngrace_secs = 600\n\n{extra}",
            fixtures.join("params").display(),
            fixtures.join("cache").display(),
            8u64 << 30
        ),
    )
    .unwrap();
    p
}

/// A daemon child process, killed if the test ends without stopping it.
pub struct Daemon(pub Child);

impl std::ops::Deref for Daemon {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Daemon {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

pub fn sigterm(child: &Child) {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -TERM failed");
}

pub fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("daemon did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A gRPC client of the daemon on 127.0.0.1:`port`, waiting up to a minute for it to listen.
pub async fn connect(port: u16) -> ProvingEngineClient<tonic::transport::Channel> {
    let t = Instant::now();
    loop {
        match ProvingEngineClient::connect(format!("http://127.0.0.1:{port}")).await {
            Ok(c) => return c,
            Err(_) if t.elapsed() < Duration::from_secs(60) => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(e) => panic!("daemon never listened: {e}"),
        }
    }
}

/// A lock file in `dir`, held until dropped (for one-time setup shared by test processes).
pub struct DirLock(PathBuf);

impl DirLock {
    pub fn take(dir: &Path, name: &str) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        let t = Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&p)
            {
                Ok(_) => return DirLock(p),
                Err(_) if t.elapsed() < Duration::from_secs(600) => {
                    std::thread::sleep(Duration::from_millis(200))
                }
                Err(_) => {
                    // A lock older than ten minutes was left by a killed process.
                    let _ = std::fs::remove_file(&p);
                }
            }
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Waits (up to ten minutes) until the daemon has no job queued or running, watching through
/// GetStatus, which takes no waiter on any job.
pub async fn wait_idle(c: &mut ProvingEngineClient<tonic::transport::Channel>) {
    let t = Instant::now();
    loop {
        let s = c
            .get_status(proto::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        if s.queues
            .iter()
            .all(|q| q.pending == 0 && q.in_progress == 0)
        {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(600),
            "jobs still queued or running: {:?}",
            s.queues
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
