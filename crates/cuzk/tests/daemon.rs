//! `cuzk daemon` as a child process: serves over TCP and a unix socket (mode 0600), refuses
//! a missing config file, and on SIGTERM under load loses no accepted job and exits 0.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cuzk_filecoin::fixtures::{ensure_fixtures_locked, Manifest, Quiet};
use cuzk_filecoin::{ProofKind, ProofRequest, SectorSize};
use cuzk_server::proto::proving_engine_client::ProvingEngineClient;
use cuzk_server::proto::{self, await_proof_response::Status as S};

fn fixtures() -> (PathBuf, Manifest) {
    let dir = match std::env::var_os("CUZK_TEST_FIXTURES") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/cuzk-test-fixtures"),
    };
    let m = ensure_fixtures_locked(&dir, SectorSize::S2KiB, &Quiet, Duration::from_secs(1800))
        .expect("fixtures");
    (dir, m)
}

fn wire(kind: ProofKind, r: &ProofRequest, id: &str) -> proto::SubmitProofRequest {
    let proof_kind = match kind {
        ProofKind::PoRep => proto::ProofKind::PorepSealCommit,
        ProofKind::SnapDeals => proto::ProofKind::SnapDealsUpdate,
        ProofKind::WindowPoSt => proto::ProofKind::WindowPostPartition,
        ProofKind::WinningPoSt => proto::ProofKind::WinningPost,
    };
    proto::SubmitProofRequest {
        request_id: id.to_owned(),
        proof_kind: proof_kind as i32,
        registered_proof: r.registered_proof.unwrap_or(0),
        vanilla_proof: r.vanilla_proof.clone(),
        vanilla_proofs: r.vanilla_proofs.clone(),
        sector_number: r.sector_number,
        miner_id: r.miner_id,
        randomness: r.randomness.clone(),
        partition_index: r.partition_index,
        comm_r_old: r.comm_r_old.clone(),
        comm_r_new: r.comm_r_new.clone(),
        comm_d_new: r.comm_d_new.clone(),
        ..Default::default()
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn spawn(config: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["daemon", "--config"])
        .arg(config)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn cuzk daemon")
}

fn write_config(dir: &Path, fixtures: &Path, listen: &str) -> PathBuf {
    let p = dir.join("cuzk.toml");
    std::fs::write(
        &p,
        format!(
            "[server]\nlisten = \"{listen}\"\n\n[params]\ndir = \"{}\"\ncache_dir = \"{}\"\n\n[engine]\nsynthesis_threads = 1\nhost_memory = \"{}\"\n\n[shutdown]\ngrace_secs = 600\n",
            fixtures.join("params").display(),
            fixtures.join("cache").display(),
            8u64 << 30
        ),
    )
    .unwrap();
    p
}

fn sigterm(child: &Child) {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -TERM failed");
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
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

#[test]
fn a_missing_config_file_is_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["daemon", "--config", "/nonexistent/cuzk.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/cuzk.toml"));
}

#[test]
fn unix_socket_is_private_and_sigterm_when_idle_exits_0() {
    let (fx, _) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("run/cuzk.sock");
    let cfg = write_config(tmp.path(), &fx, &format!("unix://{}", sock.display()));
    let mut child = spawn(&cfg);
    let t = Instant::now();
    while !sock.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "socket never appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    std::os::unix::net::UnixStream::connect(&sock).expect("socket accepts connections");
    sigterm(&child);
    assert!(wait_exit(&mut child, Duration::from_secs(30)).success());
    assert!(!sock.exists(), "socket left behind");
}

#[test]
fn sigterm_under_load_loses_no_job_and_exits_0() {
    let (fx, m) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = write_config(tmp.path(), &fx, &format!("127.0.0.1:{port}"));
    let mut child = spawn(&cfg);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let results = rt.block_on(async {
        let t = Instant::now();
        let client = loop {
            match ProvingEngineClient::connect(format!("http://127.0.0.1:{port}")).await {
                Ok(c) => break c,
                Err(_) if t.elapsed() < Duration::from_secs(60) => {
                    tokio::time::sleep(Duration::from_millis(100)).await
                }
                Err(e) => panic!("daemon never listened: {e}"),
            }
        };
        let mut ids = Vec::new();
        for (i, kind) in [
            ProofKind::WindowPoSt,
            ProofKind::WinningPoSt,
            ProofKind::WindowPoSt,
        ]
        .into_iter()
        .enumerate()
        {
            let req = m.request(&fx, kind).unwrap();
            let id = format!("job{i}");
            client
                .clone()
                .submit_proof(wire(kind, &req, &id))
                .await
                .expect("accepted");
            ids.push(id);
        }
        let waits: Vec<_> = ids
            .iter()
            .map(|id| {
                let mut c = client.clone();
                let id = id.clone();
                tokio::spawn(async move {
                    c.await_proof(proto::AwaitProofRequest {
                        job_id: id,
                        timeout_ms: 0,
                    })
                    .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        sigterm(&child);
        let mut out = Vec::new();
        for w in waits {
            out.push(
                w.await
                    .unwrap()
                    .expect("every accepted job gets an answer")
                    .into_inner(),
            );
        }
        out
    });
    for r in &results {
        assert!(
            r.status == S::Completed as i32 || r.status == S::Cancelled as i32,
            "{}: status {} {}",
            r.job_id,
            r.status,
            r.error_message
        );
    }
    // With a long grace period every job finishes.
    assert!(results
        .iter()
        .all(|r| r.status == S::Completed as i32 && r.proof.len() == 192));
    assert!(wait_exit(&mut child, Duration::from_secs(120)).success());
}
