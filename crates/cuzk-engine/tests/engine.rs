//! The engine under load, faults, cancellation and admission limits, on simulated devices
//! that prove real Groth16 proofs on the CPU.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::sim_devices;
use cuzk_engine::sim::{Faults, SimBackend, SimPhysical, SyntheticWork as TestWork};
use cuzk_engine::{Device, Engine, EngineConfig, EngineError, JobStatus, Priority};
use rand::{Rng, SeedableRng};

const KINDS: [&str; 4] = ["porep", "snap", "window-post", "winning-post"];

fn cfg(workers: usize) -> EngineConfig {
    EngineConfig {
        queue_capacity: 1000,
        synthesis_threads: 2,
        urgent_synthesis_threads: 1,
        workers_per_device: workers,
        retention: Duration::from_secs(3600),
        host_budget: 64 << 20,
        pipeline: true,
        pause_for_urgent: true,
        hold_for_urgent: Duration::from_millis(100),
        ..EngineConfig::default()
    }
}

#[test]
fn mixed_load_on_1_2_4_8_devices_loses_nothing_and_breaks_no_invariant() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut total = 0;
    for (n_dev, workers, jobs) in [(1, 1, 50), (2, 2, 50), (4, 3, 50), (8, 2, 50)] {
        let (devs, phys) = sim_devices(n_dev, Faults::default());
        let engine = Engine::start(cfg(workers), devs).unwrap();
        let mut ids = Vec::new();
        for j in 0..jobs {
            let kind = KINDS[rng.gen_range(0..4)];
            let prio = [None, Some(Priority::Low), Some(Priority::High)][rng.gen_range(0..3)];
            let id = format!("{n_dev}-{j}");
            engine
                .submit(&id, TestWork::new(kind, rng.gen_range(1..=3)), prio)
                .unwrap();
            ids.push(id);
        }
        for id in &ids {
            let v = engine
                .await_job(id, Some(Duration::from_secs(300)))
                .unwrap();
            assert!(
                matches!(v.status, JobStatus::Completed(ref p) if !p.is_empty() && p.len() % 192 == 0),
                "{id}: {:?}",
                v.status
            );
        }
        total += ids.len();
        assert!(
            phys.iter().all(|p| p.violations() == 0),
            "two guards entered one device"
        );
        let st = engine.status();
        let completed: u64 = st.metrics.values().map(|m| m.completed).sum();
        assert_eq!(completed as usize, jobs);
        if n_dev > 1 {
            assert!(
                st.devices.iter().filter(|d| !d.busy.is_zero()).count() >= 2,
                "work spread over devices"
            );
        }
        assert_eq!(st.host_memory.0, 0, "host memory returned");
        engine.shutdown(Duration::from_secs(1), false);
    }
    assert!(total >= 200);
}

/// One device object per device: two engine `Device`s made over one backend schedule that
/// backend's one device object, so the second cannot be entered while the first is held, and
/// an engine refuses to be built over both.
#[test]
fn two_engine_devices_over_one_backend_share_its_one_lock() {
    let backend: Arc<dyn cuzk_groth16::ProvingBackend> = Arc::new(cuzk_groth16::CpuBackend::new());
    let one = Device::new(backend.clone());
    let twin = Device::new(backend.clone());
    assert!(Arc::ptr_eq(one.hardware(), twin.hardware()));
    let held = one.lock();
    assert!(twin.try_lock().is_none(), "the twin took a second lock");
    drop(held);
    assert!(twin.try_lock().is_some());
    let e = Engine::start(cfg(1), vec![one.clone(), twin.clone()]).unwrap_err();
    assert!(
        matches!(&e, EngineError::Invalid(m) if m.contains("listed twice")),
        "{e}"
    );
    let other = Device::new(Arc::new(cuzk_groth16::CpuBackend::new()));
    let (_a, _b) = (one.lock(), other.lock());
}

/// DESIGN section 1: locks indexed by a logical number while two logical handles reached one
/// physical GPU let two workers onto that GPU at once. The simulated device must catch it.
#[test]
fn regression_lock_by_logical_index_on_shared_physical_device_is_caught() {
    let slow = Faults {
        delay: Duration::from_millis(30),
        ..Faults::default()
    };
    let physical = SimPhysical::new(slow.clone());
    // The broken design: two handles, two locks, one piece of hardware.
    let logical: Vec<_> = (0..2)
        .map(|i| SimBackend::device(format!("logical:{i}"), 1 << 30, physical.clone()))
        .collect();
    let engine = Engine::start(cfg(1), logical).unwrap();
    for j in 0..12 {
        engine
            .submit(&format!("bug-{j}"), TestWork::new("porep", 1), None)
            .unwrap();
    }
    for j in 0..12 {
        engine.await_job(&format!("bug-{j}"), None).unwrap();
    }
    assert!(
        physical.violations() > 0,
        "the simulator must detect two guards on one device"
    );
    engine.shutdown(Duration::from_secs(1), false);

    // Our design: one device object per physical device, its own lock, two workers.
    let (devs, phys) = sim_devices(1, slow);
    let engine = Engine::start(cfg(2), devs).unwrap();
    for j in 0..12 {
        engine
            .submit(&format!("ok-{j}"), TestWork::new("porep", 1), None)
            .unwrap();
    }
    for j in 0..12 {
        assert!(matches!(
            engine.await_job(&format!("ok-{j}"), None).unwrap().status,
            JobStatus::Completed(_)
        ));
    }
    assert_eq!(phys[0].violations(), 0);
    engine.shutdown(Duration::from_secs(1), false);
}

#[test]
fn cancel_queued_and_running_jobs_and_await_timeout() {
    let (devs, _) = sim_devices(
        1,
        Faults {
            delay: Duration::from_millis(2000),
            ..Faults::default()
        },
    );
    let mut c = cfg(1);
    c.synthesis_threads = 1;
    // Room for two synthesized partitions: synthesis waits on memory, so the second job
    // stays queued behind the first (for about 4 s of device time).
    c.host_budget = 2 << 20;
    let engine = Engine::start(c, devs).unwrap();
    engine
        .submit("running", TestWork::new("porep", 4), None)
        .unwrap();
    engine
        .submit("queued", TestWork::new("porep", 1), Some(Priority::Low))
        .unwrap();
    let t = std::time::Instant::now();
    while engine
        .await_job("running", Some(Duration::ZERO))
        .unwrap()
        .status
        != JobStatus::Running
    {
        assert!(t.elapsed() < Duration::from_secs(60), "never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Await with a short timeout returns the job still in progress.
    let v = engine
        .await_job("running", Some(Duration::from_millis(10)))
        .unwrap();
    assert!(!v.status.is_terminal());
    assert!(
        !engine.cancel("queued").unwrap(),
        "queued job had not started"
    );
    assert!(engine.cancel("running").unwrap(), "running job had started");
    assert_eq!(
        engine.await_job("running", None).unwrap().status,
        JobStatus::Cancelled
    );
    assert_eq!(
        engine.await_job("queued", None).unwrap().status,
        JobStatus::Cancelled
    );
    assert!(matches!(
        engine.cancel("nope"),
        Err(EngineError::NotFound(_))
    ));
    // The partition on the device stops at its next yield point, then frees its memory.
    let t = std::time::Instant::now();
    while engine.status().host_memory.0 != 0 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "cancelled partitions never freed their memory ({} bytes held)",
            engine.status().host_memory.0
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The engine keeps serving.
    engine
        .submit("after", TestWork::new("porep", 1), None)
        .unwrap();
    assert!(matches!(
        engine.await_job("after", None).unwrap().status,
        JobStatus::Completed(_)
    ));
    engine.shutdown(Duration::from_secs(1), false);
}

#[test]
fn duplicate_request_ids_attach_and_finished_results_are_kept() {
    let (devs, _) = sim_devices(1, Faults::default());
    let engine = Engine::start(cfg(1), devs).unwrap();
    let a = engine
        .submit("same", TestWork::new("snap", 2), None)
        .unwrap();
    let b = engine
        .submit("same", TestWork::new("snap", 2), None)
        .unwrap();
    assert!(!a.attached && b.attached);
    let done = engine.await_job("same", None).unwrap();
    let again = engine
        .submit("same", TestWork::new("snap", 2), None)
        .unwrap();
    assert!(again.attached);
    assert_eq!(engine.await_job("same", None).unwrap().status, done.status);
    assert_eq!(engine.status().metrics["snap"].completed, 1, "proved once");
    engine.shutdown(Duration::from_secs(1), false);
}

#[test]
fn a_full_queue_refuses_and_a_partition_larger_than_the_budget_is_an_error() {
    let (devs, _) = sim_devices(
        1,
        Faults {
            delay: Duration::from_millis(100),
            ..Faults::default()
        },
    );
    let mut c = cfg(1);
    c.queue_capacity = 2;
    let engine = Engine::start(c, devs).unwrap();
    engine.submit("a", TestWork::new("porep", 1), None).unwrap();
    engine.submit("b", TestWork::new("porep", 1), None).unwrap();
    assert!(matches!(
        engine.submit("c", TestWork::new("porep", 1), None),
        Err(EngineError::QueueFull(_))
    ));
    let huge = Arc::new(TestWork {
        host_bytes: 1 << 40,
        ..Arc::try_unwrap(TestWork::new("porep", 1)).unwrap()
    });
    engine.await_job("a", None).unwrap();
    engine.await_job("b", None).unwrap();
    assert!(matches!(
        engine.submit("huge", huge, None),
        Err(EngineError::TooLarge(_))
    ));
    assert!(matches!(
        engine.submit("", TestWork::new("porep", 1), None),
        Err(EngineError::Invalid(_))
    ));
    engine.shutdown(Duration::from_secs(1), false);
}

#[test]
fn device_faults_are_retried_elsewhere_and_total_failure_is_reported() {
    let (devs, phys) = sim_devices(2, Faults::default());
    phys[0].set_faults(Faults {
        always_fail: true,
        ..Faults::default()
    });
    let engine = Engine::start(cfg(1), devs).unwrap();
    for j in 0..6 {
        engine
            .submit(&format!("f{j}"), TestWork::new("porep", 1), None)
            .unwrap();
    }
    for j in 0..6 {
        let v = engine.await_job(&format!("f{j}"), None).unwrap();
        assert!(
            matches!(v.status, JobStatus::Completed(_)),
            "{:?}",
            v.status
        );
    }
    assert!(engine.status().metrics["porep"].retries >= 1);
    phys[1].set_faults(Faults {
        always_fail: true,
        ..Faults::default()
    });
    engine
        .submit("doomed", TestWork::new("porep", 1), None)
        .unwrap();
    match engine.await_job("doomed", None).unwrap().status {
        JobStatus::Failed(r) => assert!(
            r.contains("injected fault") && r.contains("no other healthy device"),
            "{r}"
        ),
        s => panic!("expected failure, got {s:?}"),
    }
    // Both devices are quarantined now: new work is refused until a probe brings one back.
    assert!(matches!(
        engine.submit("refused", TestWork::new("porep", 1), None),
        Err(EngineError::Unavailable(_))
    ));
    for p in &phys {
        p.set_faults(Faults::default());
    }
    for id in ["sim:0", "sim:1"] {
        common::probe_back(&engine, id);
    }
    engine
        .submit("recovered", TestWork::new("porep", 1), None)
        .unwrap();
    assert!(matches!(
        engine.await_job("recovered", None).unwrap().status,
        JobStatus::Completed(_)
    ));
    engine.shutdown(Duration::from_secs(1), false);
}

#[test]
fn critical_work_overtakes_queued_low_priority_partitions() {
    let (devs, _) = sim_devices(
        1,
        Faults {
            delay: Duration::from_millis(50),
            ..Faults::default()
        },
    );
    let mut c = cfg(1);
    c.synthesis_threads = 1;
    let engine = Engine::start(c, devs).unwrap();
    engine
        .submit("bulk", TestWork::new("porep", 12), Some(Priority::Low))
        .unwrap();
    std::thread::sleep(Duration::from_millis(150));
    engine
        .submit("winning", TestWork::new("winning-post", 1), None)
        .unwrap();
    let w = engine.await_job("winning", None).unwrap();
    assert!(matches!(w.status, JobStatus::Completed(_)));
    let bulk = engine.await_job("bulk", Some(Duration::ZERO)).unwrap();
    assert!(
        !bulk.status.is_terminal(),
        "winning finished while the bulk job still had partitions"
    );
    engine.await_job("bulk", None).unwrap();
    engine.shutdown(Duration::from_secs(1), false);
}

/// With two workers on one device, one worker already holds the next low-priority partition
/// while waiting for the lock; critical work arriving then must still go next.
#[test]
fn critical_work_is_not_stuck_behind_a_worker_already_waiting_for_the_device() {
    let (devs, _) = sim_devices(
        1,
        Faults {
            delay: Duration::from_millis(150),
            ..Faults::default()
        },
    );
    let engine = Engine::start(cfg(2), devs).unwrap();
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    engine
        .submit(
            "bulk",
            TestWork::logged("porep", 10, "bulk", &log),
            Some(Priority::Low),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let before = log.lock().unwrap().len();
    engine
        .submit(
            "winning",
            TestWork::logged("winning-post", 1, "winning", &log),
            None,
        )
        .unwrap();
    engine.await_job("winning", None).unwrap();
    engine.await_job("bulk", None).unwrap();
    let log = log.lock().unwrap();
    let pos = log
        .iter()
        .skip(before)
        .position(|l| l == "winning")
        .unwrap();
    assert!(
        pos <= 1,
        "winning proved after {pos} more bulk partitions: {log:?}"
    );
    engine.shutdown(Duration::from_secs(1), false);
}

/// Every ordinary synthesis thread is busy with a slow low-priority partition when critical
/// work arrives: the urgent lane synthesizes it at once, so it completes while the slow
/// syntheses are still running.
#[test]
fn critical_work_is_synthesized_while_every_ordinary_synthesis_thread_is_busy() {
    let (devs, _) = sim_devices(1, Faults::default());
    let mut c = cfg(2);
    c.synthesis_threads = 1;
    let engine = Engine::start(c, devs).unwrap();
    let slow = Arc::new(TestWork {
        synth_delay: Duration::from_secs(3),
        ..Arc::try_unwrap(TestWork::new("porep", 1)).unwrap()
    });
    engine.submit("slow", slow, Some(Priority::Low)).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    engine
        .submit("winning", TestWork::new("winning-post", 1), None)
        .unwrap();
    let w = engine.await_job("winning", None).unwrap();
    assert!(matches!(w.status, JobStatus::Completed(_)));
    let s = engine.await_job("slow", Some(Duration::ZERO)).unwrap();
    assert!(
        !s.status.is_terminal(),
        "winning waited for the slow synthesis to finish"
    );
    engine.await_job("slow", None).unwrap();

    // Without the lane, the same load makes it wait: the test can fail.
    let (devs, _) = sim_devices(1, Faults::default());
    let mut c = cfg(2);
    c.synthesis_threads = 1;
    c.urgent_synthesis_threads = 0;
    let engine2 = Engine::start(c, devs).unwrap();
    let slow = Arc::new(TestWork {
        synth_delay: Duration::from_secs(3),
        ..Arc::try_unwrap(TestWork::new("porep", 1)).unwrap()
    });
    engine2.submit("slow", slow, Some(Priority::Low)).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    engine2
        .submit("winning", TestWork::new("winning-post", 1), None)
        .unwrap();
    let w2 = engine2.await_job("winning", None).unwrap();
    // It waited for the 3 s synthesis (submitted 0.2 s into it).
    assert!(
        w2.timings.total >= Duration::from_millis(2500),
        "without the lane winning took only {:?}",
        w2.timings.total
    );
    engine.shutdown(Duration::from_secs(1), false);
    engine2.shutdown(Duration::from_secs(1), false);
}

/// A critical partition arriving while a long partition of lower priority is on the only
/// device runs at that partition's next yield point (between its device operations), on the
/// same guard, instead of waiting for the whole proof; the simulated device sees one prover
/// inside at a time throughout.
#[test]
fn critical_partition_runs_at_the_next_yield_point_of_a_long_partition() {
    critical_partition_overtakes_at_a_yield_point(1);
}

/// With two workers the idle one takes the critical partition from the queue and finds the
/// device locked: the partition must still run at the running proof's next yield point, not
/// wait in that worker's hands for the whole proof.
#[test]
fn critical_partition_taken_by_an_idle_worker_still_runs_at_the_next_yield_point() {
    critical_partition_overtakes_at_a_yield_point(2);
}

/// A device at a yield point waits (`hold_for_urgent`) for a CRITICAL partition that is
/// being synthesized, so the partition starts as soon as it is ready instead of at the next
/// yield point; the wait is not charged to the proof that yielded.
#[test]
fn a_yield_point_holds_the_device_for_a_critical_partition_in_synthesis() {
    let slow = Faults {
        delay: Duration::from_millis(6000),
        ..Faults::default()
    };
    let (devs, phys) = sim_devices(1, slow);
    let mut c = cfg(1);
    c.hold_for_urgent = Duration::from_secs(10);
    // The pause would stop the PoRep's computing (in the global pool) for up to a second
    // while the winning partition synthesizes; this test is about the hold alone.
    c.pause_for_urgent = false;
    let engine = Engine::start(c, devs).unwrap();
    engine
        .submit("porep", TestWork::new("porep", 1), None)
        .unwrap();
    while engine.status().devices[0].current_job.is_none() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let gate = Arc::new(std::sync::Barrier::new(2));
    let winning = Arc::new(TestWork {
        synth_gate: Some(gate.clone()),
        ..Arc::try_unwrap(TestWork::new("winning-post", 1)).unwrap()
    });
    engine.submit("winning", winning, None).unwrap();
    // The PoRep reaches its first yield point (its first 1 s slice, a little computing,
    // its second slice) well within 3.5 s and holds the device there for the winning
    // partition, whose synthesis ends when the gate opens. (Without the hold, the gate
    // opens in the middle of a slice, about 0.5 s before the next yield point: far more
    // than a loaded machine's wake-up latency.)
    std::thread::sleep(Duration::from_millis(3500));
    gate.wait();
    let w = engine.await_job("winning", None).unwrap();
    assert!(
        matches!(w.status, JobStatus::Completed(_)),
        "{:?}",
        w.status
    );
    // Without the hold it would wait for the PoRep's next yield point (about 0.5 s).
    assert!(
        w.timings.device_wait < Duration::from_millis(250),
        "winning waited {:?} for the device",
        w.timings.device_wait
    );
    let p = engine.await_job("porep", None).unwrap();
    assert!(
        matches!(p.status, JobStatus::Completed(_)),
        "{:?}",
        p.status
    );
    // The device idled about two seconds for the winning partition; that is not the
    // PoRep's device time (both proofs take the same 6 s of simulated device time).
    assert!(
        p.timings.device < w.timings.device + Duration::from_millis(1000),
        "the hold was charged to the PoRep: porep {:?}, winning {:?}",
        p.timings.device,
        w.timings.device
    );
    assert_eq!(phys[0].violations(), 0, "two provers inside the device");
    engine.shutdown(Duration::from_secs(1), false);
}

fn critical_partition_overtakes_at_a_yield_point(workers: usize) {
    let slow = Faults {
        delay: Duration::from_millis(3000),
        ..Faults::default()
    };
    let (devs, phys) = sim_devices(1, slow);
    let engine = Engine::start(cfg(workers), devs).unwrap();
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let labelled = |label: &str, kind: &'static str| {
        Arc::new(TestWork {
            log: Some((label.to_owned(), log.clone())),
            ..Arc::try_unwrap(TestWork::new(kind, 1)).unwrap()
        })
    };
    engine
        .submit("porep", labelled("porep", "porep"), None)
        .unwrap();
    // Wait until the PoRep partition is on the device.
    while engine.status().devices[0].current_job.is_none() {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    engine
        .submit("winning", labelled("winning", "winning-post"), None)
        .unwrap();
    let w = engine.await_job("winning", None).unwrap();
    assert!(
        matches!(w.status, JobStatus::Completed(_)),
        "{:?}",
        w.status
    );
    let p = engine.await_job("porep", Some(Duration::ZERO)).unwrap();
    assert!(
        !p.status.is_terminal(),
        "winning waited for the whole PoRep proof"
    );
    let p = engine.await_job("porep", None).unwrap();
    assert!(
        matches!(p.status, JobStatus::Completed(_)),
        "{:?}",
        p.status
    );
    assert_eq!(*log.lock().unwrap(), ["winning", "porep"]);
    // It waited for one slice of the PoRep proof (a sixth of 3 s), not the rest of it.
    assert!(
        w.timings.device_wait < Duration::from_millis(1500),
        "winning waited {:?} for the device",
        w.timings.device_wait
    );
    assert_eq!(phys[0].violations(), 0, "two provers inside the device");
    // The PoRep's device time excludes the time lent to the WinningPoSt.
    assert!(
        p.timings.device < w.timings.device + Duration::from_millis(1500),
        "porep {:?}, winning {:?}",
        p.timings.device,
        w.timings.device
    );
    engine.shutdown(Duration::from_secs(1), false);
}

/// A 10-partition job under a host budget of exactly two partitions completes: synthesis
/// waits for memory instead of overrunning it, the budget's high-water mark stays at or
/// under two partitions, and everything is returned at the end.
#[test]
fn ten_partitions_complete_within_a_host_budget_of_two() {
    let (devs, _) = sim_devices(
        1,
        Faults {
            delay: Duration::from_millis(20),
            ..Faults::default()
        },
    );
    let part = 1 << 20;
    let mut c = cfg(2);
    c.host_budget = 2 * part;
    c.synthesis_threads = 4;
    let engine = Engine::start(c, devs).unwrap();
    let ten = Arc::new(TestWork {
        host_bytes: part,
        synth_delay: Duration::from_millis(10),
        ..Arc::try_unwrap(TestWork::new("porep", 10)).unwrap()
    });
    engine.submit("ten", ten, None).unwrap();
    let v = engine.await_job("ten", None).unwrap();
    assert!(
        matches!(v.status, JobStatus::Completed(_)),
        "{:?}",
        v.status
    );
    let b = engine.host_budget();
    assert!(
        (part..=2 * part).contains(&b.peak()),
        "peak {} of a budget of {}",
        b.peak(),
        2 * part
    );
    assert_eq!(b.used(), 0, "every partition's memory returned");
    // A partition larger than the whole budget is refused at submit.
    let big = Arc::new(TestWork {
        host_bytes: 2 * part + 1,
        ..Arc::try_unwrap(TestWork::new("porep", 10)).unwrap()
    });
    assert!(matches!(
        engine.submit("big", big, None),
        Err(EngineError::TooLarge(_))
    ));
    engine.shutdown(Duration::from_secs(1), false);
}

#[test]
fn request_ids_are_bounded_and_printable_and_a_refused_one_stores_nothing() {
    let (devs, _) = sim_devices(1, Faults::default());
    let engine = Engine::start(cfg(1), devs).unwrap();
    let huge = "x".repeat(1 << 20);
    let over = "y".repeat(cuzk_engine::MAX_REQUEST_ID_BYTES + 1);
    for (id, why) in [
        ("", "empty"),
        (huge.as_str(), "1048576 bytes"),
        (over.as_str(), "257 bytes"),
        ("a\nb", "'\\n'"),
        ("caf\u{e9}", "'\u{e9}'"),
    ] {
        match engine.submit(id, TestWork::new("porep", 1), None) {
            Err(EngineError::Invalid(m)) => assert!(m.contains(why), "{id:?}: {m}"),
            other => panic!("{:?} was not refused: {other:?}", &id[..id.len().min(20)]),
        }
    }
    // Nothing was stored under a refused id.
    assert!(engine.await_job("a\nb", Some(Duration::ZERO)).is_err());
    let longest = "z".repeat(cuzk_engine::MAX_REQUEST_ID_BYTES);
    for id in [longest.as_str(), "porep 1000-42 ~ok"] {
        engine.submit(id, TestWork::new("porep", 1), None).unwrap();
        let s = engine
            .await_job(id, Some(Duration::from_secs(60)))
            .unwrap()
            .status;
        assert!(matches!(s, JobStatus::Completed(_)), "{s:?}");
    }
}
