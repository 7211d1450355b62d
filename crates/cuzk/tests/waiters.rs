//! The daemon under callers that give up: 2,000 Prove and AwaitProof calls that abandon one
//! job cost no thread each, leave the job to the caller still waiting, and the daemon then
//! serves WinningPoSt.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_filecoin::ProofKind;
use cuzk_server::proto::proving_engine_client::ProvingEngineClient;
use cuzk_server::proto::{self, await_proof_response::Status as S};
use support::*;
use tonic::transport::Channel;

fn threads(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

const PROVES: usize = 1000;
const AWAITS: usize = 1000;
/// Calls per connection (under h2's usual limit of concurrent streams).
const PER_CONNECTION: usize = 100;

/// A client on a TCP connection of its own, and a handle that cuts that connection.
async fn own_connection(port: u16) -> (ProvingEngineClient<Channel>, std::net::TcpStream) {
    let tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let handle = tcp.try_clone().unwrap();
    tcp.set_nonblocking(true).unwrap();
    let slot = std::sync::Mutex::new(Some(tcp));
    let ch = tonic::transport::Endpoint::from_static("http://own.connection")
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
    (ProvingEngineClient::new(ch), handle)
}

fn gave_up(e: &tonic::Status) -> bool {
    // tonic's server answers a passed grpc-timeout with CANCELLED.
    matches!(
        e.code(),
        tonic::Code::DeadlineExceeded | tonic::Code::Cancelled
    )
}

#[test]
fn two_thousand_abandoned_waiters_hold_no_threads_and_winning_post_is_served() {
    let (fx, m) = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = write_config(tmp.path(), &fx, &format!("127.0.0.1:{port}"), "");
    let daemon = spawn(&cfg);
    let pid = daemon.0.id();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let porep = m.request(&fx, ProofKind::PoRep).unwrap();
    let id = "porep-1000-1";
    rt.block_on(async {
        let mut probe = connect(port).await;
        let idle = threads(pid);
        // The caller that stays: no deadline, on a connection the test cuts at the end.
        let (mut c0, conn0) = own_connection(port).await;
        let w = wire(ProofKind::PoRep, &porep, id);
        let stayer = tokio::spawn(async move {
            c0.prove(proto::ProveRequest { submit: Some(w) })
                .await
                .map(|r| r.into_inner().result.unwrap())
        });
        let t = Instant::now();
        while probe
            .await_proof(proto::AwaitProofRequest {
                job_id: id.into(),
                timeout_ms: 1,
            })
            .await
            .is_err()
        {
            assert!(
                t.elapsed() < Duration::from_secs(120),
                "the job never appeared"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        let mut clients = Vec::new();
        for _ in 0..(PROVES + AWAITS).div_ceil(PER_CONNECTION) {
            let ch = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
                .unwrap()
                .connect()
                .await
                .unwrap();
            clients.push(ProvingEngineClient::new(ch));
        }
        let peak = Arc::new(AtomicUsize::new(0));
        let sampler = {
            let peak = peak.clone();
            tokio::spawn(async move {
                loop {
                    peak.fetch_max(threads(pid), Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
        };
        // The same PoRep request again and again (Curio's retries) and waits by request id,
        // each giving up at its deadline.
        let mut calls = Vec::new();
        for i in 0..PROVES + AWAITS {
            let mut c = clients[i / PER_CONNECTION].clone();
            let w = wire(ProofKind::PoRep, &porep, id);
            calls.push(tokio::spawn(async move {
                if i < PROVES {
                    let mut r = tonic::Request::new(proto::ProveRequest { submit: Some(w) });
                    r.set_timeout(Duration::from_secs(3));
                    c.prove(r).await.map(|r| r.into_inner().result.unwrap())
                } else {
                    let mut r = tonic::Request::new(proto::AwaitProofRequest {
                        job_id: id.into(),
                        timeout_ms: 0,
                    });
                    r.set_timeout(Duration::from_secs(3));
                    c.await_proof(r).await.map(|r| r.into_inner())
                }
            }));
        }
        let mut abandoned = 0;
        for c in calls {
            match c.await.unwrap() {
                Err(e) => {
                    assert!(gave_up(&e), "{e:?}");
                    abandoned += 1;
                }
                Ok(r) => assert_eq!(r.status, S::Completed as i32, "{}", r.error_message),
            }
        }
        sampler.abort();
        let peak = peak.load(Ordering::SeqCst);
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        // Engine threads, the runtime's workers and its capped blocking pool; a thread per
        // waiter would be thousands.
        let bound = idle + 64 + 2 * cores + 16;
        eprintln!(
            "{abandoned} of {} calls gave up; daemon threads: {idle} before, {peak} at most \
             (bound {bound})",
            PROVES + AWAITS
        );
        assert!(peak > 0, "threads were sampled");
        assert!(peak <= bound, "{peak} threads under load, bound {bound}");

        // Those who gave up cancelled nothing: one caller still waits.
        let now = probe
            .await_proof(proto::AwaitProofRequest {
                job_id: id.into(),
                timeout_ms: 1,
            })
            .await
            .unwrap()
            .into_inner();
        assert_ne!(
            now.status,
            S::Cancelled as i32,
            "cancelled while a caller waited"
        );
        // The last caller goes away: the job is cancelled unless it was done by then.
        conn0.shutdown(std::net::Shutdown::Both).unwrap();
        let stayed = stayer.await.unwrap();
        // Watched without a waiter (an AwaitProof would count as someone waiting, and keep
        // the job alive if it reached the daemon before the stayer's departure did); read
        // once nothing is queued or running.
        wait_idle(&mut probe).await;
        let last = probe
            .await_proof(proto::AwaitProofRequest {
                job_id: id.into(),
                timeout_ms: 0,
            })
            .await
            .unwrap()
            .into_inner();
        match stayed {
            Ok(r) => {
                assert_eq!(r.status, S::Completed as i32, "{}", r.error_message);
                assert_eq!(last.proof, r.proof);
            }
            Err(_) => assert_eq!(last.status, S::Cancelled as i32, "{}", last.error_message),
        }

        // The daemon serves WinningPoSt afterwards.
        let win = m.request(&fx, ProofKind::WinningPoSt).unwrap();
        let t = Instant::now();
        let r = prove(
            &mut probe,
            ProofKind::WinningPoSt,
            &win,
            "winpost-1000-0011223344556677",
        )
        .await;
        assert_eq!(r.status, S::Completed as i32, "{}", r.error_message);
        assert_eq!(r.proof.len(), 192);
        eprintln!(
            "WinningPoSt then took {:?}: queue {} ms, parameters {} ms, synthesis {} ms, \
             device {} ms, total {} ms",
            t.elapsed(),
            r.queue_wait_ms,
            r.srs_load_ms,
            r.synthesis_ms,
            r.gpu_compute_ms,
            r.total_ms
        );
    });
    let mut daemon = daemon;
    sigterm(&daemon.0);
    assert!(wait_exit(&mut daemon.0, Duration::from_secs(60)).success());
}
