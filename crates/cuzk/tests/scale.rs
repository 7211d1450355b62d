//! A 32 GiB sector through the daemon, as a client sends it: WinningPoSt from a sparse tree
//! proved over gRPC and verified by filecoin-proofs; the timing-only PoRep C1 of the same
//! folder refused with INVALID_ARGUMENT, naming why.
//!
//! The 32 GiB inputs (`cuzk fixtures --sector-size 32GiB`, about a minute) are made once
//! under target/cuzk-test-fixtures-32g.

mod support;

use std::path::{Path, PathBuf};

use cuzk_filecoin::fixtures::{bind_fixture_dirs, Quiet};
use cuzk_filecoin::fixtures_scale::{scale_fixtures, ScaleManifest, ScaleOptions};
use cuzk_filecoin::{plan, ProofKind, SectorSize};
use cuzk_groth16::CpuBackend;
use cuzk_server::proto::{self, await_proof_response::Status as S};
use support::*;

fn fixtures_32g() -> (PathBuf, ScaleManifest) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/cuzk-test-fixtures-32g");
    let _lock = DirLock::take(dir.parent().unwrap(), ".fixtures-32g-lock");
    // filecoin-proofs reads its parameter folder once per process: bound before it is used.
    std::fs::create_dir_all(&dir).unwrap();
    bind_fixture_dirs(&dir).unwrap();
    let m = match ScaleManifest::load(&dir) {
        Ok(m) if m.timing_only.is_some() => m,
        _ => scale_fixtures(
            &dir,
            SectorSize::S32GiB,
            ScaleOptions {
                window_params: false,
                backend: &CpuBackend::new(),
            },
            &Quiet,
        )
        .expect("32 GiB fixtures"),
    };
    (dir, m)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_32_gib_winning_post_over_grpc_verifies_and_timing_only_porep_is_refused() {
    let (fx, m) = fixtures_32g();
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = write_config(tmp.path(), &fx, &format!("127.0.0.1:{port}"), "");
    let _daemon = spawn(&cfg);
    let mut c = connect(port).await;

    let req = m.request(&fx, ProofKind::WinningPoSt).unwrap();
    let r = prove(&mut c, ProofKind::WinningPoSt, &req, "winning-32g").await;
    assert_eq!(r.status, S::Completed as i32, "{}", r.error_message);
    assert_eq!(r.proof.len(), 192);
    assert!(
        plan(&req).unwrap().verify(&r.proof).unwrap(),
        "filecoin-proofs rejects the 32 GiB WinningPoSt"
    );

    let porep = m.timing_request(&fx, ProofKind::PoRep).unwrap();
    let e = c
        .prove(proto::ProveRequest {
            submit: Some(wire(ProofKind::PoRep, &porep, "porep-timing-32g")),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("timing-only"), "{}", e.message());
}
