//! Request identity and callers that give up, over real gRPC with the 2 KiB fixtures, sent
//! the way Curio sends them (`Prove` only, ids reused).

mod common;

use std::time::{Duration, Instant};

use common::{fixtures, start, start_on, wire};
use cuzk_engine::sim::{Faults, SimBackend, SimPhysical};
use cuzk_engine::JobStatus;
use cuzk_filecoin::{plan, verify::verify_assembled, ProofKind};
use cuzk_server::proto::proving_engine_client::ProvingEngineClient;
use cuzk_server::proto::{self, await_proof_response::Status as S};
use cuzk_server::DEFAULT_MAX_MESSAGE_BYTES;

/// Curio's WindowPoSt id: partition index 0 and the randomness printed with Go's `%d`.
const WDPOST_ID: &str = "wdpost-1000-0-[12 200 3 77 9 1 250 0]";

async fn prove(
    c: &mut ProvingEngineClient<tonic::transport::Channel>,
    submit: proto::SubmitProofRequest,
) -> proto::AwaitProofResponse {
    c.prove(proto::ProveRequest {
        submit: Some(submit),
    })
    .await
    .unwrap()
    .into_inner()
    .result
    .unwrap()
}

/// Two chain partitions of one deadline arrive under one request id, each with its own
/// sectors: each gets its own proof, which verifies for its own sectors only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_two_window_post_partitions_under_one_id_get_their_own_proofs() {
    let (dir, m) = fixtures();
    let mut s = start(&dir, DEFAULT_MAX_MESSAGE_BYTES).await;
    let full = m.request(&dir, ProofKind::WindowPoSt).unwrap();
    assert!(
        full.vanilla_proofs.len() >= 2,
        "the fixture has two sectors"
    );
    let part = |i: usize| {
        let mut r = full.clone();
        r.vanilla_proofs = vec![full.vanilla_proofs[i].clone()];
        r.partition_index = 0;
        r
    };
    let (a, b) = (part(0), part(1));
    let (mut c1, mut c2) = (s.client.clone(), s.client.clone());
    let (wa, wb) = (
        wire(ProofKind::WindowPoSt, &a, WDPOST_ID),
        wire(ProofKind::WindowPoSt, &b, WDPOST_ID),
    );
    let (ra, rb) = tokio::join!(prove(&mut c1, wa), prove(&mut c2, wb));
    assert_eq!(ra.status, S::Completed as i32, "{}", ra.error_message);
    assert_eq!(rb.status, S::Completed as i32, "{}", rb.error_message);
    assert_ne!(ra.job_id, rb.job_id);
    assert_ne!(ra.proof, rb.proof);
    let (pa, pb) = (plan(&a).unwrap(), plan(&b).unwrap());
    verify_assembled(pa.as_ref(), &ra.proof).expect("partition A's proof verifies for A");
    verify_assembled(pb.as_ref(), &rb.proof).expect("partition B's proof verifies for B");
    assert!(
        verify_assembled(pa.as_ref(), &rb.proof).is_err(),
        "B's proof must not verify as A's"
    );
    // A retry of either (same id, same content) gets its own proof back without proving.
    let again = prove(&mut s.client, wire(ProofKind::WindowPoSt, &b, WDPOST_ID)).await;
    assert_eq!(again.proof, rb.proof);
    assert_eq!(
        s.engine.status().metrics["window-post"].completed,
        2,
        "proved once each"
    );
    s.stop().await;
}

/// SubmitProof, CancelProof, then Prove with the same request (a scheduler's retry) proves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_cancel_proves() {
    let (dir, m) = fixtures();
    let mut s = start(&dir, DEFAULT_MAX_MESSAGE_BYTES).await;
    let req = m.request(&dir, ProofKind::WinningPoSt).unwrap();
    let id = "winpost-1000-0a1b2c3d4e5f6071";
    let sub = s
        .client
        .submit_proof(wire(ProofKind::WinningPoSt, &req, id))
        .await
        .unwrap()
        .into_inner();
    s.client
        .cancel_proof(proto::CancelProofRequest {
            job_id: sub.job_id.clone(),
        })
        .await
        .unwrap();
    let r = prove(&mut s.client, wire(ProofKind::WinningPoSt, &req, id)).await;
    assert_eq!(r.status, S::Completed as i32, "{}", r.error_message);
    assert_ne!(r.job_id, sub.job_id, "a new job, not the cancelled one");
    verify_assembled(plan(&req).unwrap().as_ref(), &r.proof).expect("proof verifies");
    // The cancelled job still answers for its own id.
    let old = s
        .client
        .await_proof(proto::AwaitProofRequest {
            job_id: sub.job_id,
            timeout_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(old.status, S::Cancelled as i32);
    s.stop().await;
}

/// A retry after a failure proves again instead of returning the old failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_failure_proves() {
    let (dir, m) = fixtures();
    let phys = SimPhysical::new(Faults {
        always_fail: true,
        ..Faults::default()
    });
    let device = SimBackend::device("sim:0", 8 << 30, phys.clone());
    let mut s = start_on(&dir, DEFAULT_MAX_MESSAGE_BYTES, vec![device]).await;
    let req = m.request(&dir, ProofKind::WinningPoSt).unwrap();
    let id = "winpost-1000-ffeeddccbbaa9988";
    let first = prove(&mut s.client, wire(ProofKind::WinningPoSt, &req, id)).await;
    assert_eq!(first.status, S::Failed as i32);
    assert!(
        first.error_message.contains("injected fault"),
        "{}",
        first.error_message
    );
    phys.set_faults(Faults::default());
    // The fault quarantined the only device: new work is refused until a probe passes.
    let refused = s
        .client
        .prove(proto::ProveRequest {
            submit: Some(wire(ProofKind::WinningPoSt, &req, id)),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unavailable, "{refused:?}");
    let probe = s
        .client
        .probe_device(proto::ProbeDeviceRequest {
            device_id: "sim:0".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(probe.healthy, "{}", probe.reason);
    let r = prove(&mut s.client, wire(ProofKind::WinningPoSt, &req, id)).await;
    assert_eq!(r.status, S::Completed as i32, "{}", r.error_message);
    assert_ne!(r.job_id, first.job_id);
    verify_assembled(plan(&req).unwrap().as_ref(), &r.proof).expect("proof verifies");
    s.stop().await;
}

/// A Prove whose deadline passes, and one whose client goes away, cancel their jobs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_gives_up_cancels_its_job() {
    let (dir, m) = fixtures();
    let mut s = start(&dir, DEFAULT_MAX_MESSAGE_BYTES).await;
    // PoRep takes long enough on the CPU to give up on.
    let req = m.request(&dir, ProofKind::PoRep).unwrap();
    let mut call = tonic::Request::new(proto::ProveRequest {
        submit: Some(wire(ProofKind::PoRep, &req, "porep-1000-1")),
    });
    call.set_timeout(Duration::from_millis(1500));
    let e = s.client.prove(call).await.unwrap_err();
    assert!(
        matches!(
            e.code(),
            tonic::Code::DeadlineExceeded | tonic::Code::Cancelled
        ),
        "{e:?}"
    );
    let v = wait_terminal(&s.engine, "porep-1000-1").await;
    assert_eq!(v, JobStatus::Cancelled, "the deadline cancelled the job");

    // A client whose connection goes away mid-call (its process died).
    let (mut c, conn) = own_connection(s.addr).await;
    let w = wire(ProofKind::PoRep, &req, "porep-1000-2");
    let call = tokio::spawn(async move { c.prove(proto::ProveRequest { submit: Some(w) }).await });
    let t = Instant::now();
    while s
        .engine
        .recent_jobs(10)
        .iter()
        .all(|j| j.request_id != "porep-1000-2")
    {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the job never arrived"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    conn.shutdown(std::net::Shutdown::Both).unwrap();
    assert!(
        call.await.unwrap().is_err(),
        "the call died with its connection"
    );
    let v = wait_terminal(&s.engine, "porep-1000-2").await;
    assert_eq!(v, JobStatus::Cancelled, "the disconnect cancelled the job");
    assert_eq!(s.engine.status().metrics["porep"].abandoned, 2);
    assert_eq!(s.engine.status().metrics["porep"].completed, 0);
    s.stop().await;
}

/// The final status of the job of request `id`, once it exists (a caller may give up while
/// its submit still loads parameters: the job then appears, and ends, afterwards). It polls
/// the job table instead of taking a waiter: a waiter counts as someone waiting for the
/// result, and would keep the abandoned job alive.
async fn wait_terminal(engine: &cuzk_engine::Engine, id: &str) -> JobStatus {
    let t = Instant::now();
    loop {
        let found = engine
            .recent_jobs(usize::MAX)
            .into_iter()
            .find(|j| j.request_id == id);
        match found {
            Some(j) if j.status.is_terminal() => return j.status,
            _ => {
                assert!(
                    t.elapsed() < Duration::from_secs(180),
                    "{id}: no terminal job after {:?} ({found:?})",
                    t.elapsed()
                );
                tokio::time::sleep(Duration::from_millis(20)).await
            }
        }
    }
}

/// A client on a TCP connection of its own, and a handle that can cut that connection.
async fn own_connection(
    addr: std::net::SocketAddr,
) -> (
    ProvingEngineClient<tonic::transport::Channel>,
    std::net::TcpStream,
) {
    let tcp = std::net::TcpStream::connect(addr).unwrap();
    let handle = tcp.try_clone().unwrap();
    tcp.set_nonblocking(true).unwrap();
    let slot = std::sync::Mutex::new(Some(tcp));
    let channel = tonic::transport::Endpoint::from_static("http://own.connection")
        .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
            let tcp = slot.lock().unwrap().take();
            async move {
                let tcp = tcp.ok_or_else(|| std::io::Error::other("one connection only"))?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                    tokio::net::TcpStream::from_std(tcp)?,
                ))
            }
        }))
        .await
        .unwrap();
    (ProvingEngineClient::new(channel), handle)
}
