//! Jobs named by request id and content: reused ids with other content, retries after a
//! cancellation or a failure, and callers that give up.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::sim_devices;
use cuzk_engine::sim::{Faults, SyntheticWork as TestWork};
use cuzk_engine::{Caller, Engine, EngineConfig, JobStatus};

fn cfg() -> EngineConfig {
    EngineConfig {
        queue_capacity: 100,
        synthesis_threads: 1,
        urgent_synthesis_threads: 1,
        workers_per_device: 1,
        retention: Duration::from_secs(3600),
        host_budget: 64 << 20,
        pipeline: true,
        pause_for_urgent: false,
        hold_for_urgent: Duration::ZERO,
        ..EngineConfig::default()
    }
}

fn slow_devices(delay_ms: u64) -> Vec<Arc<cuzk_engine::Device>> {
    sim_devices(
        1,
        Faults {
            delay: Duration::from_millis(delay_ms),
            ..Faults::default()
        },
    )
    .0
}

fn completed(s: &JobStatus) -> &[u8] {
    match s {
        JobStatus::Completed(p) => p,
        s => panic!("expected a completed job, got {s:?}"),
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(f)
}

/// Curio sends every chain partition of a WindowPoSt deadline under one request id.
#[test]
fn regression_one_request_id_with_two_contents_is_two_jobs_with_their_own_proofs() {
    let engine = Engine::start(cfg(), slow_devices(0)).unwrap();
    let a = engine
        .submit(
            "wdpost-1000-0-[1 2 3]",
            TestWork::new("window-post", 1).variant(1),
            None,
        )
        .unwrap();
    let b = engine
        .submit(
            "wdpost-1000-0-[1 2 3]",
            TestWork::new("window-post", 1).variant(2),
            None,
        )
        .unwrap();
    assert!(
        !a.attached && !b.attached,
        "different content never attaches"
    );
    assert_ne!(a.job_id, b.job_id);
    assert!(
        a.job_id.starts_with("wdpost-1000-0-[1 2 3]@"),
        "{}",
        a.job_id
    );
    let va = engine.await_job(&a.job_id, None).unwrap();
    let vb = engine.await_job(&b.job_id, None).unwrap();
    assert_eq!(
        (va.id.as_str(), vb.id.as_str()),
        (a.job_id.as_str(), b.job_id.as_str())
    );
    assert_ne!(completed(&va.status), completed(&vb.status));
    assert_eq!(engine.status().metrics["window-post"].completed, 2);
    // A bare request id names the newest job under it.
    let newest = engine.await_job("wdpost-1000-0-[1 2 3]", None).unwrap();
    assert_eq!(newest.id, b.job_id);
    // Each content attaches to its own job afterwards.
    let again = engine
        .submit(
            "wdpost-1000-0-[1 2 3]",
            TestWork::new("window-post", 1).variant(1),
            None,
        )
        .unwrap();
    assert!(again.attached);
    assert_eq!(again.job_id, a.job_id);
    engine.shutdown(Duration::from_secs(1), false);
}

#[test]
fn a_retry_after_cancel_or_failure_proves_again() {
    let (devs, phys) = sim_devices(
        1,
        Faults {
            delay: Duration::from_millis(300),
            ..Faults::default()
        },
    );
    let engine = Engine::start(cfg(), devs).unwrap();
    let first = engine
        .submit("porep-1000-7", TestWork::new("porep", 2), None)
        .unwrap();
    engine.cancel(&first.job_id).unwrap();
    assert_eq!(
        engine.await_job(&first.job_id, None).unwrap().status,
        JobStatus::Cancelled
    );
    let retry = engine
        .submit("porep-1000-7", TestWork::new("porep", 2), None)
        .unwrap();
    assert!(
        !retry.attached,
        "a cancelled job is never handed to a new submission"
    );
    assert_ne!(retry.job_id, first.job_id);
    assert!(retry.job_id.ends_with(".2"), "{}", retry.job_id);
    completed(&engine.await_job(&retry.job_id, None).unwrap().status);
    // The old job still answers as what it was.
    assert_eq!(
        engine.await_job(&first.job_id, None).unwrap().status,
        JobStatus::Cancelled
    );

    phys[0].set_faults(Faults {
        always_fail: true,
        ..Faults::default()
    });
    let failed = engine
        .submit("snap-1000-9", TestWork::new("snap", 1), None)
        .unwrap();
    assert!(matches!(
        engine.await_job(&failed.job_id, None).unwrap().status,
        JobStatus::Failed(_)
    ));
    phys[0].set_faults(Faults::default());
    // The fault quarantined the only device; the operator probes it back.
    common::probe_back(&engine, "sim:0");
    let retry = engine
        .submit("snap-1000-9", TestWork::new("snap", 1), None)
        .unwrap();
    assert!(
        !retry.attached,
        "a failed job is never handed to a new submission"
    );
    completed(&engine.await_job("snap-1000-9", None).unwrap().status);
    assert_eq!(engine.status().metrics["snap"].completed, 1);
    assert_eq!(engine.status().metrics["snap"].failed, 1);
    engine.shutdown(Duration::from_secs(1), false);
}

#[test]
fn a_caller_that_gives_up_cancels_its_job_unless_someone_else_waits() {
    let engine = Engine::start(cfg(), slow_devices(400)).unwrap();
    let waits = Caller::Waits {
        cancel_if_abandoned: true,
    };
    // Alone: giving up cancels.
    let s = engine
        .submit_as(waits, "alone", TestWork::new("porep", 3), None)
        .unwrap();
    let mut w = s.waiter.expect("a waiting caller gets a waiter");
    let gave_up =
        block_on(async { tokio::time::timeout(Duration::from_millis(50), w.finished()).await });
    assert!(gave_up.is_err(), "the job is still running");
    drop(w);
    assert_eq!(
        engine.await_job(&s.job_id, None).unwrap().status,
        JobStatus::Cancelled
    );
    assert_eq!(engine.status().metrics["porep"].abandoned, 1);

    // Two callers of the same request: the first giving up leaves the second's job running.
    let a = engine
        .submit_as(waits, "shared", TestWork::new("snap", 2), None)
        .unwrap();
    let b = engine
        .submit_as(waits, "shared", TestWork::new("snap", 2), None)
        .unwrap();
    assert!(b.attached);
    drop(a.waiter);
    let mut wb = b.waiter.unwrap();
    completed(&block_on(wb.finished()).status);

    // Submitted by a caller that comes back later: nobody's giving up cancels it.
    let d = engine
        .submit("kept", TestWork::new("window-post", 2), None)
        .unwrap();
    let p = engine
        .submit_as(waits, "kept", TestWork::new("window-post", 2), None)
        .unwrap();
    assert!(p.attached);
    drop(p.waiter);
    completed(&engine.await_job(&d.job_id, None).unwrap().status);

    // With cancellation off, giving up leaves the job to finish.
    let keep = Caller::Waits {
        cancel_if_abandoned: false,
    };
    let k = engine
        .submit_as(keep, "off", TestWork::new("winning-post", 1), None)
        .unwrap();
    drop(k.waiter);
    completed(&engine.await_job(&k.job_id, None).unwrap().status);
    assert_eq!(engine.status().metrics["porep"].abandoned, 1);
    assert_eq!(
        engine.status().host_memory.0,
        0,
        "cancelled work freed its memory"
    );
    engine.shutdown(Duration::from_secs(1), false);
}

#[test]
fn attach_finds_only_jobs_of_the_same_content() {
    let engine = Engine::start(cfg(), slow_devices(0)).unwrap();
    let w = TestWork::new("porep", 1);
    let content = cuzk_engine::ProofWork::content(w.as_ref());
    assert!(engine
        .attach(Caller::Detached, "p", &content)
        .unwrap()
        .is_none());
    let s = engine.submit("p", w, None).unwrap();
    let other = TestWork::content_of("porep", 1, 5);
    assert!(engine
        .attach(Caller::Detached, "p", &other)
        .unwrap()
        .is_none());
    let a = engine
        .attach(Caller::Detached, "p", &content)
        .unwrap()
        .unwrap();
    assert!(a.attached);
    assert_eq!(a.job_id, s.job_id);
    engine.shutdown(Duration::from_secs(1), false);
}

/// A wait on a job (AwaitProof) keeps a job whose Prove caller gave up alive while it waits;
/// when it gives up too, nobody is left and the job is cancelled. A job nobody waited on
/// that way (submitted to come back for) is never cancelled by an AwaitProof leaving.
#[test]
fn the_last_waiter_of_any_kind_to_leave_a_prove_job_cancels_it() {
    let engine = Engine::start(cfg(), slow_devices(400)).unwrap();
    let waits = Caller::Waits {
        cancel_if_abandoned: true,
    };
    let s = engine
        .submit_as(waits, "pw", TestWork::new("porep", 3), None)
        .unwrap();
    let awaits = engine.waiter(&s.job_id).unwrap();
    drop(s.waiter);
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        !engine
            .await_job(&s.job_id, Some(Duration::ZERO))
            .unwrap()
            .status
            .is_terminal(),
        "a waiter is left: the job runs on"
    );
    drop(awaits);
    assert_eq!(
        engine.await_job(&s.job_id, None).unwrap().status,
        JobStatus::Cancelled
    );
    assert_eq!(engine.status().metrics["porep"].abandoned, 1);

    let d = engine
        .submit("detached", TestWork::new("snap", 2), None)
        .unwrap();
    drop(engine.waiter(&d.job_id).unwrap());
    completed(&engine.await_job(&d.job_id, None).unwrap().status);
    engine.shutdown(Duration::from_secs(1), false);
}
