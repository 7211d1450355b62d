//! The daemon driven from outside Rust: a Python grpcio client whose stubs are generated from
//! proto/ during the test, and the status page rendered by headless Chromium while jobs run.
//!
//! Needs python3 with venv (the test installs grpcio into target/cuzk-test-pyenv on first
//! use) and Debian's chromium at /usr/bin/chromium (or CUZK_TEST_CHROMIUM); .ci/run
//! installs both.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A python with grpcio and grpcio-tools, installed once under target/ (pinned versions).
fn python() -> PathBuf {
    let env = root().join("target/cuzk-test-pyenv");
    let py = env.join("bin/python");
    let _lock = DirLock::take(&root().join("target"), ".pyenv-lock");
    let ready = Command::new(&py)
        .args(["-c", "import grpc, grpc_tools"])
        .status()
        .is_ok_and(|s| s.success());
    if !ready {
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&env)
            .status()
            .expect("python3")
            .success();
        assert!(
            ok,
            "python3 -m venv failed (Debian: apt-get install python3-venv)"
        );
        let ok = Command::new(env.join("bin/pip"))
            .args([
                "install",
                "-q",
                "--disable-pip-version-check",
                "grpcio==1.76.0",
                "grpcio-tools==1.76.0",
            ])
            .status()
            .expect("pip")
            .success();
        assert!(ok, "pip install grpcio grpcio-tools failed");
    }
    py
}

/// Python stubs generated from proto/ under `dir`.
fn stubs(py: &Path, dir: &Path) -> PathBuf {
    let stubs = dir.join("stubs");
    std::fs::create_dir_all(&stubs).unwrap();
    let ok = Command::new(py)
        .args(["-m", "grpc_tools.protoc", "-I"])
        .arg(root().join("proto"))
        .arg(format!("--python_out={}", stubs.display()))
        .arg(format!("--grpc_python_out={}", stubs.display()))
        .arg(root().join("proto/cuzk/v1/proving.proto"))
        .status()
        .unwrap()
        .success();
    assert!(ok, "generating Python stubs from proto/ failed");
    stubs
}

#[test]
fn python_grpcio_client_proves_reads_status_and_cancels() {
    let (fx, _) = fixtures();
    let py = python();
    let tmp = tempfile::tempdir().unwrap();
    let stubs = stubs(&py, tmp.path());
    let port = free_port();
    let cfg = write_config(tmp.path(), &fx, &format!("127.0.0.1:{port}"), "");
    let mut child = spawn(&cfg);
    let out = Command::new(&py)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/client.py"))
        .arg(&stubs)
        .arg(format!("127.0.0.1:{port}"))
        .arg(&fx)
        .output()
        .unwrap();
    sigterm(&child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python client failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(v["prove_status"], "COMPLETED", "{v}");
    assert_eq!(v["prove_proof_len"], 192);
    assert_eq!(v["gpus"][0], "CPU backend");
    assert!(v["completed"].as_u64().unwrap() >= 1);
    assert_eq!(v["cancel_status"], "CANCELLED", "{v}");
    assert_eq!(v["bad_kind_code"], "INVALID_ARGUMENT");
    assert!(wait_exit(&mut child, Duration::from_secs(60)).success());
}

/// A Curio-format cuzk.toml as an operator of Curio's daemon has it (the keys of Curio's
/// example config), listening beyond loopback.
fn curio_config(fx: &Path, grpc: u16, http: u16) -> String {
    format!(
        r#"[daemon]
listen = "0.0.0.0:{grpc}"
status_listen = "127.0.0.1:{http}"

[srs]
param_cache = "{}"

[memory]
total_budget = "8GiB"
safety_margin = "5GiB"
eviction_min_idle = "5m"

[gpus]
devices = []
gpu_threads = 32
gpu_workers_per_device = 2

[scheduler]
max_batch_size = 1
max_batch_wait_ms = 10000
sort_by_type = true

[synthesis]
threads = 0

[pipeline]
enabled = true
synthesis_lookahead = 1
synthesis_concurrency = 1

[logging]
level = "info"
"#,
        fx.join("params").display()
    )
}

/// The migration end to end: `cuzk config from-curio` on a Curio config, the daemon started
/// from its output, and a client sending exactly what Curio's Go code sends. Every proof is
/// verified here; the two WindowPoSt partitions under one id get their own proofs.
#[test]
fn a_curio_shaped_client_is_served_by_a_daemon_configured_from_curios_config() {
    use cuzk_filecoin::verify::verify_assembled;
    use cuzk_filecoin::{plan, ProofKind};
    let (fx, m) = fixtures();
    let py = python();
    let tmp = tempfile::tempdir().unwrap();
    let stubs = stubs(&py, tmp.path());
    let [grpc, http] = free_ports::<2>();
    let curio = tmp.path().join("curio-cuzk.toml");
    std::fs::write(&curio, curio_config(&fx, grpc, http)).unwrap();
    let ours = tmp.path().join("cuzk.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["config", "from-curio", "--allow", "127.0.0.0/8", "--out"])
        .arg(&ours)
        .arg(&curio)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&ours).unwrap();
    assert!(
        text.contains("# Curio scheduler.max_batch_size = 1: not carried over"),
        "{text}"
    );
    // PCEs go to this test's folder instead of the default /var/cache/cuzk.
    let text = text.replace(
        "[params]\n",
        &format!("[params]\ncache_dir = \"{}\"\n", fx.join("cache").display()),
    );
    std::fs::write(&ours, text).unwrap();
    let mut child = spawn(&ours);
    let out = Command::new(&py)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/curio.py"))
        .arg(&stubs)
        .arg(format!("127.0.0.1:{grpc}"))
        .arg(&fx)
        .output()
        .unwrap();
    sigterm(&child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the Curio-shaped client failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    let proof = |name: &str| -> Vec<u8> {
        let r = &v[name];
        assert_eq!(r["status"], "COMPLETED", "{name}: {r}");
        cuzk_filecoin::fixtures::unhex(r["proof"].as_str().unwrap()).unwrap()
    };
    let window = m.request(&fx, ProofKind::WindowPoSt).unwrap();
    let part = |i: usize| {
        let mut r = window.clone();
        r.vanilla_proofs = vec![window.vanilla_proofs[i].clone()];
        r
    };
    let checks = [
        ("porep", m.request(&fx, ProofKind::PoRep).unwrap()),
        ("snap", m.request(&fx, ProofKind::SnapDeals).unwrap()),
        ("winning", m.request(&fx, ProofKind::WinningPoSt).unwrap()),
        ("window-0", part(0)),
        ("window-1", part(1)),
    ];
    for (name, req) in &checks {
        verify_assembled(plan(req).unwrap().as_ref(), &proof(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert_eq!(
        v["window-0"]["request_id"], v["window-1"]["request_id"],
        "one id"
    );
    assert_ne!(v["window-0"]["job_id"], v["window-1"]["job_id"]);
    assert!(
        verify_assembled(plan(&part(0)).unwrap().as_ref(), &proof("window-1")).is_err(),
        "partition 1's proof does not verify as partition 0's"
    );
    assert_eq!(
        proof("porep-retry"),
        proof("porep"),
        "a retry gets the same proof"
    );
    assert_eq!(proof("window-1-retry"), proof("window-1"));
    assert_eq!(v["cancelled_by_client"], "CANCELLED", "{v}");
    assert!(wait_exit(&mut child, Duration::from_secs(120)).success());
}

#[test]
fn status_page_in_headless_chromium_shows_devices_and_queues_while_jobs_run() {
    let chromium = std::env::var_os("CUZK_TEST_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        chromium.exists(),
        "{} not found (Debian: apt-get install chromium; .ci/run installs it)",
        chromium.display()
    );
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
    let mut client = rt.block_on(connect(grpc));
    // A queue of WindowPoSt jobs: one synthesis thread works through them one at a time,
    // far longer than Chromium takes to start on a loaded machine (they are cancelled at the
    // end).
    const JOBS: usize = 40;
    let req = m
        .request(&fx, cuzk_filecoin::ProofKind::WindowPoSt)
        .unwrap();
    for i in 0..JOBS {
        rt.block_on(client.submit_proof(wire(
            cuzk_filecoin::ProofKind::WindowPoSt,
            &req,
            &format!("page{i}"),
        )))
        .unwrap();
    }
    let profile = tmp.path().join("chromium-profile");
    let t = Instant::now();
    let out = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("http://127.0.0.1:{http}/"))
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout).to_string();
    let still_running = rt
        .block_on(client.get_status(cuzk_server::proto::GetStatusRequest {}))
        .unwrap()
        .into_inner()
        .queues
        .iter()
        .any(|q| q.pending + q.in_progress > 0);
    for i in 0..JOBS {
        let _ = rt.block_on(client.cancel_proof(cuzk_server::proto::CancelProofRequest {
            job_id: format!("page{i}"),
        }));
    }
    sigterm(&child);
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        still_running,
        "the jobs finished before the page was read ({:?})",
        t.elapsed()
    );
    assert!(
        dom.contains("<td>cpu</td>") && dom.contains("CPU backend"),
        "device row: {dom}"
    );
    assert!(dom.contains("<td>window-post</td>"), "queue row: {dom}");
    assert!(dom.contains("page0"), "recent jobs: {dom}");
    // The timeline shows the partitions proved on the device, as inline SVG.
    assert!(
        dom.contains("<svg class=\"timeline\" data-device=\"cpu\"") && dom.contains("<title>page"),
        "device timeline: {dom}"
    );
    // Sizes in human units, not byte counts.
    let srs_row = dom
        .split("<td>wpost-2k</td>")
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or("");
    assert!(
        ["KiB<", "MiB<", "GiB<"].iter().any(|u| srs_row.contains(u)),
        "parameter size in human units: {srs_row:?} in {dom}"
    );
    assert!(
        dom.contains("<div id=\"err\"></div>"),
        "the page reported an error: {dom}"
    );
    assert!(wait_exit(&mut child, Duration::from_secs(120)).success());
}
