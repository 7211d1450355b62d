//! The service over real gRPC on 127.0.0.1:0, proving on the CPU backend with 2 KiB
//! fixtures: results verify, every method acts, bad requests get their codes.

mod common;

use common::{fixtures, start, wire};
use cuzk_filecoin::{plan, verify::verify_assembled, ProofKind};
use cuzk_server::proto::{self, await_proof_response::Status as S};
use cuzk_server::DEFAULT_MAX_MESSAGE_BYTES;
use tonic::Code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proofs_status_metrics_srs_and_cancel_over_grpc() {
    let (dir, m) = fixtures();
    let mut s = start(&dir, DEFAULT_MAX_MESSAGE_BYTES).await;
    let c = &mut s.client;

    // WinningPoSt through Prove: completed, and the bytes verify on their own.
    let req = m.request(&dir, ProofKind::WinningPoSt).unwrap();
    let r = c
        .prove(proto::ProveRequest {
            submit: Some(wire(ProofKind::WinningPoSt, &req, "w1")),
        })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    assert_eq!(r.status, S::Completed as i32, "{}", r.error_message);
    assert!(r.job_id.starts_with("w1@"), "{}", r.job_id);
    verify_assembled(plan(&req).unwrap().as_ref(), &r.proof).expect("proof verifies");
    assert!(r.total_ms >= r.synthesis_ms);

    // The same request id and content attaches to the finished job and returns the same
    // proof, by job id and by the bare request id.
    let again = c
        .submit_proof(wire(ProofKind::WinningPoSt, &req, "w1"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.job_id, r.job_id);
    let again = c
        .await_proof(proto::AwaitProofRequest {
            job_id: "w1".into(),
            timeout_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.proof, r.proof);

    // A running job: AwaitProof times out, CancelProof cancels it.
    let wreq = m.request(&dir, ProofKind::WindowPoSt).unwrap();
    c.submit_proof(wire(ProofKind::WindowPoSt, &wreq, "win1"))
        .await
        .unwrap();
    let t = c
        .await_proof(proto::AwaitProofRequest {
            job_id: "win1".into(),
            timeout_ms: 1,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(t.status, S::Timeout as i32);
    c.cancel_proof(proto::CancelProofRequest {
        job_id: "win1".into(),
    })
    .await
    .unwrap();
    let t = c
        .await_proof(proto::AwaitProofRequest {
            job_id: "win1".into(),
            timeout_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(t.status, S::Cancelled as i32);

    // Status and metrics reflect the work done.
    let st = c
        .get_status(proto::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(st.gpus.len(), 1);
    assert_eq!(st.gpus[0].name, "CPU backend");
    assert!(st.total_proofs_completed >= 1);
    assert!(st
        .loaded_srs
        .iter()
        .any(|e| e.circuit_id == "winning-2k" && e.tier == proto::srs_status::Tier::Hot as i32));
    let text = c
        .get_metrics(proto::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .prometheus_text;
    assert!(
        text.contains("cuzk_proofs_completed_total{kind=\"winning-post\"} 1"),
        "{text}"
    );
    assert!(text.contains("cuzk_proofs_cancelled_total{kind=\"window-post\"} 1"));

    // SRS: loaded, evicted, loaded again.
    let p = c
        .preload_srs(proto::PreloadSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(p.already_loaded);
    let e = c
        .evict_srs(proto::EvictSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(e.was_loaded && e.freed_bytes > 0);
    let p = c
        .preload_srs(proto::PreloadSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!p.already_loaded);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_the_right_codes_and_change_nothing() {
    let (dir, m) = fixtures();
    let mut s = start(&dir, 1 << 20).await;
    let c = &mut s.client;
    let req = m.request(&dir, ProofKind::WinningPoSt).unwrap();
    let good = wire(ProofKind::WinningPoSt, &req, "ok");

    let code = |r: Result<tonic::Response<proto::SubmitProofResponse>, tonic::Status>| {
        r.expect_err("refused").code()
    };
    let mut unknown_kind = good.clone();
    unknown_kind.proof_kind = 9;
    assert_eq!(
        code(c.submit_proof(unknown_kind).await),
        Code::InvalidArgument
    );
    let mut no_kind = good.clone();
    no_kind.proof_kind = 0;
    assert_eq!(code(c.submit_proof(no_kind).await), Code::InvalidArgument);
    let mut no_id = good.clone();
    no_id.request_id.clear();
    assert_eq!(code(c.submit_proof(no_id).await), Code::InvalidArgument);
    let mut no_vanilla = good.clone();
    no_vanilla.vanilla_proofs.clear();
    assert_eq!(
        code(c.submit_proof(no_vanilla).await),
        Code::InvalidArgument
    );
    let mut garbage = good.clone();
    garbage.vanilla_proofs = vec![vec![7u8; 100]];
    assert_eq!(code(c.submit_proof(garbage).await), Code::InvalidArgument);
    let mut bad_priority = good.clone();
    bad_priority.priority = 17;
    assert_eq!(
        code(c.submit_proof(bad_priority).await),
        Code::InvalidArgument
    );
    // Over the server's 1 MiB message limit.
    let mut huge = good.clone();
    huge.vanilla_proof = vec![0u8; 2 << 20];
    assert_eq!(code(c.submit_proof(huge).await), Code::ResourceExhausted);

    let nf = c
        .await_proof(proto::AwaitProofRequest {
            job_id: "never-submitted".into(),
            timeout_ms: 0,
        })
        .await
        .expect_err("unknown job");
    assert_eq!(nf.code(), Code::NotFound);
    let nf = c
        .cancel_proof(proto::CancelProofRequest {
            job_id: "never-submitted".into(),
        })
        .await
        .expect_err("unknown job");
    assert_eq!(nf.code(), Code::NotFound);
    let bad = c
        .preload_srs(proto::PreloadSrsRequest {
            circuit_id: "porep-3k".into(),
        })
        .await
        .expect_err("unknown circuit");
    assert_eq!(bad.code(), Code::InvalidArgument);
    let prove_without_submit = c
        .prove(proto::ProveRequest { submit: None })
        .await
        .expect_err("no submit");
    assert_eq!(prove_without_submit.code(), Code::InvalidArgument);

    // Nothing above created a job.
    let st = c
        .get_status(proto::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(st
        .queues
        .iter()
        .all(|q| q.pending == 0 && q.in_progress == 0));
    assert_eq!(st.total_proofs_completed + st.total_proofs_failed, 0);

    // And the server still proves.
    let r = c
        .prove(proto::ProveRequest { submit: Some(good) })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    assert_eq!(r.status, S::Completed as i32, "{}", r.error_message);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_serving_and_reflection_lists_the_service() {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::HealthCheckRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::ServerReflectionRequest;

    let (dir, _) = fixtures();
    let s = start(&dir, DEFAULT_MAX_MESSAGE_BYTES).await;
    let mut health = HealthClient::new(s.channel.clone());
    let r = health
        .check(HealthCheckRequest {
            service: "cuzk.v1.ProvingEngine".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.status, ServingStatus::Serving as i32);

    let mut refl = ServerReflectionClient::new(s.channel.clone());
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut stream = refl
        .server_reflection_info(tokio_stream::iter(vec![req]))
        .await
        .unwrap()
        .into_inner();
    let msg = stream.message().await.unwrap().expect("a response");
    let Some(MessageResponse::ListServicesResponse(list)) = msg.message_response else {
        panic!("unexpected reflection response");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(
        names.contains(&"cuzk.v1.ProvingEngine".to_owned()),
        "{names:?}"
    );
    assert!(
        names.contains(&"grpc.health.v1.Health".to_owned()),
        "{names:?}"
    );
    s.stop().await;
}

/// All four kinds submitted at once over gRPC: each completes, and each proof verifies with
/// filecoin-proofs on its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_four_kinds_submitted_concurrently_all_verify() {
    let (dir, m) = fixtures();
    let s = start(&dir, DEFAULT_MAX_MESSAGE_BYTES).await;
    let kinds = [
        ProofKind::PoRep,
        ProofKind::SnapDeals,
        ProofKind::WindowPoSt,
        ProofKind::WinningPoSt,
    ];
    let calls: Vec<_> = kinds
        .iter()
        .map(|&kind| {
            let req = m.request(&dir, kind).unwrap();
            let mut c = s.client.clone();
            tokio::spawn(async move {
                let r = c
                    .prove(proto::ProveRequest {
                        submit: Some(wire(kind, &req, &format!("all-{kind}"))),
                    })
                    .await
                    .unwrap()
                    .into_inner()
                    .result
                    .unwrap();
                (kind, req, r)
            })
        })
        .collect();
    for call in calls {
        let (kind, req, r) = call.await.unwrap();
        assert_eq!(r.status, S::Completed as i32, "{kind}: {}", r.error_message);
        verify_assembled(plan(&req).unwrap().as_ref(), &r.proof)
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
    s.stop().await;
}
