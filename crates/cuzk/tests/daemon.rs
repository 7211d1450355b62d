//! `cuzk daemon` as a child process: serves over TCP and a unix socket (mode 0600), refuses
//! a missing config file, and on SIGTERM under load loses no accepted job and exits 0.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cuzk_filecoin::ProofKind;
use cuzk_server::proto::{self, await_proof_response::Status as S};
use support::*;

#[test]
fn a_missing_config_file_is_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["daemon", "--config", "/nonexistent/cuzk.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/cuzk.toml"));
}

fn client(sock: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["client", "--addr", &format!("unix://{}", sock.display())])
        .args(args)
        .output()
        .expect("run cuzk client")
}

#[test]
fn unix_socket_is_private_serves_the_client_and_sigterm_exits_0() {
    let (fx, m) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("run/cuzk.sock");
    let cfg = write_config(tmp.path(), &fx, &format!("unix://{}", sock.display()), "");
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

    // `cuzk client prove` over the socket: a WinningPoSt proof written to a file.
    let out = tmp.path().join("winning.proof");
    let mut args: Vec<String> = vec![
        "prove".into(),
        "--kind".into(),
        "winning-post".into(),
        "--registered-proof".into(),
        m.winning.registered_proof.to_string(),
        "--miner-id".into(),
        m.miner_id.to_string(),
        "--randomness".into(),
        m.winning.randomness.clone(),
        "--out".into(),
        out.display().to_string(),
    ];
    for v in &m.winning.vanilla {
        args.push("--input".into());
        args.push(fx.join(v).display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = client(&sock, &args);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(std::fs::read(&out).unwrap().len(), 192);
    let r = client(&sock, &["status"]);
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains("1 proofs completed") && text.contains("CPU backend"),
        "{text}"
    );
    let r = client(&sock, &["metrics"]);
    assert!(String::from_utf8_lossy(&r.stdout).contains("cuzk_proofs_completed_total"));
    // Bad input through the client: exit 2, nothing accepted.
    let r = client(&sock, &["cancel", "--job", "nope"]);
    assert_eq!(r.status.code(), Some(2));
    let r = client(&sock, &["preload", "--circuit", "porep-3k"]);
    assert_eq!(r.status.code(), Some(2));

    sigterm(&child);
    assert!(wait_exit(&mut child, Duration::from_secs(30)).success());
    assert!(!sock.exists(), "socket left behind");
}

#[test]
fn a_live_socket_is_not_taken_over_and_a_stale_one_is_replaced() {
    let (fx, _) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("cuzk.sock");
    let cfg = write_config(tmp.path(), &fx, &format!("unix://{}", sock.display()), "");
    let mut first = spawn(&cfg);
    let t = Instant::now();
    while std::os::unix::net::UnixStream::connect(&sock).is_err() {
        assert!(t.elapsed() < Duration::from_secs(60), "socket never served");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A second daemon on the same socket refuses to start and names the first.
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["daemon", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is in use") && err.contains(&format!("process {}", first.id())),
        "{err}"
    );
    let r = client(&sock, &["status"]);
    assert!(r.status.success(), "the first daemon still serves");
    // A daemon killed outright leaves its socket; the next start replaces it.
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(sock.exists(), "SIGKILL leaves the socket file");
    let mut next = spawn(&cfg);
    let t = Instant::now();
    while client(&sock, &["status"]).status.code() != Some(0) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the stale socket was not replaced"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    sigterm(&next);
    assert!(wait_exit(&mut next, Duration::from_secs(30)).success());
}

#[test]
fn sigterm_under_load_loses_no_job_and_exits_0() {
    let (fx, m) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = write_config(tmp.path(), &fx, &format!("127.0.0.1:{port}"), "");
    let mut child = spawn(&cfg);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let results = rt.block_on(async {
        let client = connect(port).await;
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

#[test]
fn beyond_loopback_a_token_is_required_and_checked() {
    let (fx, _) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    // No token: refused at start.
    let cfg = write_config(tmp.path(), &fx, &format!("0.0.0.0:{port}"), "");
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["daemon", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("auth_token"));

    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("[server]\n", "[server]\nauth_token = \"s3cret\"\n"),
    )
    .unwrap();
    let mut child = spawn(&cfg);
    let addr = format!("127.0.0.1:{port}");
    let status = |token: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cuzk"));
        c.args(["client", "--addr", &addr]);
        if let Some(t) = token {
            c.args(["--token", t]);
        }
        c.arg("status").output().unwrap()
    };
    let t = Instant::now();
    while !status(Some("s3cret")).status.success() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "daemon never answered"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    for bad in [None, Some("wrong")] {
        let r = status(bad);
        assert_eq!(r.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&r.stderr).contains("Unauthenticated"));
    }
    sigterm(&child);
    assert!(wait_exit(&mut child, Duration::from_secs(30)).success());
}

/// One HTTP/1.1 GET on 127.0.0.1, returning (status line, body).
fn http_get(port: u16, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    (
        head.lines().next().unwrap_or("").to_owned(),
        body.to_owned(),
    )
}

#[test]
fn http_serves_metrics_status_and_the_page() {
    let (fx, m) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let [grpc, http] = free_ports::<2>();
    let cfg = write_config(
        tmp.path(),
        &fx,
        &format!("127.0.0.1:{grpc}"),
        &format!("[http]\nlisten = \"127.0.0.1:{http}\"\n"),
    );
    let mut child = spawn(&cfg);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(grpc).await;
        let req = m.request(&fx, ProofKind::WinningPoSt).unwrap();
        let r = prove(&mut c, ProofKind::WinningPoSt, &req, "w").await;
        assert_eq!(r.status, S::Completed as i32);
    });
    let (status, body) = http_get(http, "/metrics");
    assert!(status.contains("200"), "{status}");
    assert!(
        body.contains("cuzk_proofs_completed_total{kind=\"winning-post\"} 1"),
        "{body}"
    );
    let (status, body) = http_get(http, "/status");
    assert!(status.contains("200"), "{status}");
    assert!(
        body.contains("\"devices\"") && body.contains("CPU backend"),
        "{body}"
    );
    assert!(body.contains("\"request_id\":\"w\""), "recent jobs: {body}");
    let (status, body) = http_get(http, "/");
    assert!(status.contains("200"), "{status}");
    assert!(body.contains("cuzk proving engine") && body.contains("fetch(\"/status\""));
    sigterm(&child);
    assert!(wait_exit(&mut child, Duration::from_secs(30)).success());
}

/// `params.preload` loads a circuit's parameters at start, before any request: the status
/// page shows them loaded, and the first proof finds them there.
#[test]
fn preloaded_circuits_are_loaded_at_start() {
    let (fx, _) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let [grpc, http] = free_ports::<2>();
    let cfg = write_config(
        tmp.path(),
        &fx,
        &format!("127.0.0.1:{grpc}"),
        &format!("[http]\nlisten = \"127.0.0.1:{http}\"\n"),
    );
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("[params]\n", "[params]\npreload = [\"winning-2k\"]\n"),
    )
    .unwrap();
    let mut child = spawn(&cfg);
    let t = Instant::now();
    loop {
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "winning-2k never showed up loaded"
        );
        std::thread::sleep(Duration::from_millis(200));
        if std::net::TcpStream::connect(("127.0.0.1", http)).is_err() {
            continue;
        }
        let (status, body) = http_get(http, "/status");
        if !status.contains("200") {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let loaded = v["srs"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["circuit_id"] == "winning-2k" && c["tier"] == "hot")
        });
        if loaded {
            break;
        }
    }
    sigterm(&child);
    assert!(wait_exit(&mut child, Duration::from_secs(30)).success());
}

/// A daemon that runs out of file descriptors (connections held open past its limit) keeps
/// its listener, and serves again once the connections close.
#[test]
fn running_out_of_file_descriptors_does_not_end_the_listener() {
    let (fx, _) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = write_config(tmp.path(), &fx, &format!("127.0.0.1:{port}"), "");
    let mut child = Daemon(
        Command::new("sh")
            .args(["-c", "ulimit -n 256 && exec \"$0\" daemon --config \"$1\""])
            .arg(env!("CARGO_BIN_EXE_cuzk"))
            .arg(&cfg)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("spawn cuzk daemon"),
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(port).await;
        c.get_status(proto::GetStatusRequest::default())
            .await
            .unwrap();
        // More connections than the daemon has descriptors for, held for a moment (the ones
        // it cannot accept wait in the listen backlog; a connect past that would block).
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let held: Vec<std::net::TcpStream> = (0..300)
            .filter_map(|_| {
                std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()
            })
            .collect();
        assert!(held.len() > 256, "only {} connections opened", held.len());
        tokio::time::sleep(Duration::from_secs(2)).await;
        drop(held);
        // Served again: a new connection and a call on it, within a few seconds.
        let t = Instant::now();
        loop {
            let ok = match tokio::time::timeout(Duration::from_secs(5), connect(port)).await {
                Ok(mut c) => c
                    .get_status(proto::GetStatusRequest::default())
                    .await
                    .is_ok(),
                Err(_) => false,
            };
            if ok {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "the daemon does not serve after its connections closed"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    assert!(child.try_wait().unwrap().is_none(), "the daemon exited");
    sigterm(&child);
    assert!(wait_exit(&mut child, Duration::from_secs(60)).success());
}
