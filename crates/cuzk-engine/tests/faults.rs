//! Faults end jobs with reasons, never hangs or dead workers: panics at each stage, a device
//! that hangs, a device that returns wrong proofs, devices that die, memory held by loaded
//! parameters, and a soak of 500 jobs over four devices with random faults.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::sim_devices;
use cuzk_engine::sim::{Faults, RandomFaults, SimBackend, SimPhysical, SyntheticWork as TestWork};
use cuzk_engine::{Device, Engine, EngineConfig, Health, JobStatus, MemoryBudget};
use rand::{Rng, SeedableRng};

fn cfg() -> EngineConfig {
    EngineConfig {
        queue_capacity: 1000,
        synthesis_threads: 2,
        workers_per_device: 1,
        host_budget: 64 << 20,
        hold_for_urgent: Duration::ZERO,
        // No stall of a loaded machine reaches this; the tests of the watchdog set their own.
        device_timeout: Some(Duration::from_secs(60)),
        ..EngineConfig::default()
    }
}

fn wait(engine: &Engine, id: &str) -> JobStatus {
    engine
        .await_job(id, Some(Duration::from_secs(120)))
        .unwrap()
        .status
}

fn completed(s: &JobStatus) -> bool {
    matches!(s, JobStatus::Completed(p) if !p.is_empty())
}

fn failed_with(s: &JobStatus, what: &str) -> bool {
    matches!(s, JobStatus::Failed(r) if r.contains(what))
}

#[test]
fn a_panic_in_any_stage_fails_or_retries_and_the_workers_live_on() {
    let (devs, phys) = sim_devices(1, Faults::default());
    let engine = Engine::start(cfg(), devs).unwrap();
    // Synthesis.
    let w = Arc::new(TestWork {
        panic_in_synthesis: Some(1),
        ..Arc::try_unwrap(TestWork::new("porep", 2)).unwrap()
    });
    engine.submit("synth", w, None).unwrap();
    let s = wait(&engine, "synth");
    assert!(
        failed_with(&s, "synthesis panicked: injected panic"),
        "{s:?}"
    );
    // Proving: an internal error, retried once (here on the same, only device).
    phys[0].set_faults(Faults {
        panic_on_call: Some(phys[0].calls() + 1),
        ..Faults::default()
    });
    engine
        .submit("prove", TestWork::new("snap", 1), None)
        .unwrap();
    assert!(completed(&wait(&engine, "prove")));
    assert_eq!(engine.status().metrics["snap"].retries, 1);
    assert_eq!(
        engine.devices()[0].health(),
        Health::Healthy,
        "a panic is no device fault"
    );
    // Finishing.
    let w = Arc::new(TestWork {
        panic_in_finish: true,
        ..Arc::try_unwrap(TestWork::new("window-post", 1)).unwrap()
    });
    engine.submit("finish", w, None).unwrap();
    let s = wait(&engine, "finish");
    assert!(
        failed_with(&s, "assembling and verifying panicked"),
        "{s:?}"
    );
    // Every worker is still there.
    for i in 0..4 {
        engine
            .submit(
                &format!("after{i}"),
                TestWork::new("porep", 2).variant(i),
                None,
            )
            .unwrap();
    }
    for i in 0..4 {
        assert!(completed(&wait(&engine, &format!("after{i}"))));
    }
    engine.shutdown(Duration::from_secs(5), false);
}

#[test]
fn a_hung_device_is_quarantined_and_its_partition_proved_elsewhere() {
    let (devs, phys) = sim_devices(2, Faults::default());
    let hang = Duration::from_secs(10);
    phys[0].set_faults(Faults {
        hang_on_call: Some((1, hang)),
        ..Faults::default()
    });
    let engine = Engine::start(
        EngineConfig {
            device_timeout: Some(Duration::from_secs(1)),
            ..cfg()
        },
        devs,
    )
    .unwrap();
    let t = Instant::now();
    for i in 0..6 {
        engine
            .submit(&format!("j{i}"), TestWork::new("porep", 1).variant(i), None)
            .unwrap();
    }
    for i in 0..6 {
        let s = wait(&engine, &format!("j{i}"));
        assert!(completed(&s), "j{i}: {s:?}");
    }
    assert!(
        t.elapsed() < hang,
        "the jobs finished before the hang ended ({:?})",
        t.elapsed()
    );
    match engine.devices()[0].health() {
        Health::Quarantined { reason, .. } => {
            assert!(reason.contains("engine.device_timeout"), "{reason}")
        }
        h => panic!("the hung device is {h:?}"),
    }
    assert_eq!(engine.devices()[1].health(), Health::Healthy);
    // Once the hang is over, a probe brings the device back (until then the hung call
    // holds the device, and probes find it busy).
    phys[0].set_faults(Faults::default());
    common::probe_back(&engine, "sim:0");
    engine.shutdown(Duration::from_secs(5), false);
    assert_eq!(phys[0].violations() + phys[1].violations(), 0);
}

#[test]
fn a_wrong_proof_is_caught_and_the_partition_proved_elsewhere() {
    let (devs, phys) = sim_devices(2, Faults::default());
    phys[1].set_faults(Faults {
        corrupt_on_call: Some(1),
        ..Faults::default()
    });
    let engine = Engine::start(cfg(), devs).unwrap();
    for i in 0..8 {
        engine
            .submit(&format!("c{i}"), TestWork::new("snap", 2).variant(i), None)
            .unwrap();
    }
    let check = TestWork::new("snap", 2);
    for i in 0..8 {
        match wait(&engine, &format!("c{i}")) {
            JobStatus::Completed(p) => {
                for (k, part) in p.chunks(192).enumerate() {
                    assert!(check.verify(part).unwrap(), "c{i} partition {k}");
                }
            }
            s => panic!("c{i}: {s:?}"),
        }
    }
    assert!(
        phys[1].calls() >= 1,
        "the corrupting device proved something"
    );
    let bad = &engine.devices()[1];
    assert_eq!(bad.faults(), 1);
    assert!(
        matches!(bad.health(), Health::Quarantined { ref reason, .. } if reason.contains("does not verify")),
        "{:?}",
        bad.health()
    );
    engine.shutdown(Duration::from_secs(5), false);
}

#[test]
fn when_every_gpu_dies_a_fallback_device_finishes_the_work() {
    let gpu = SimPhysical::new(Faults {
        always_fail: true,
        ..Faults::default()
    });
    let cpu = SimPhysical::new(Faults::default());
    let devs = vec![
        SimBackend::device("sim:gpu", 1 << 30, gpu.clone()),
        Device::fallback(Arc::new(SimBackend::new("sim:cpu", 1 << 30, cpu.clone()))),
    ];
    let engine = Engine::start(cfg(), devs).unwrap();
    for i in 0..3 {
        engine
            .submit(&format!("f{i}"), TestWork::new("porep", 2).variant(i), None)
            .unwrap();
    }
    for i in 0..3 {
        let v = engine
            .await_job(&format!("f{i}"), Some(Duration::from_secs(60)))
            .unwrap();
        assert!(completed(&v.status), "f{i}: {:?}", v.status);
        assert!(v.devices.contains(&"sim:cpu".to_owned()), "{:?}", v.devices);
    }
    assert!(!engine.devices()[0].is_healthy());
    assert_eq!(cpu.violations() + gpu.violations(), 0);
    // The GPU repaired and probed: the fallback goes idle again.
    gpu.set_faults(Faults::default());
    common::probe_back(&engine, "sim:gpu");
    let before = cpu.calls();
    engine
        .submit("after", TestWork::new("porep", 1), None)
        .unwrap();
    assert!(completed(&wait(&engine, "after")));
    assert_eq!(
        cpu.calls(),
        before,
        "the fallback took work while a GPU was healthy"
    );
    engine.shutdown(Duration::from_secs(5), false);
}

#[test]
fn memory_held_by_unused_parameters_is_freed_for_partitions_and_a_hopeless_one_fails_at_once() {
    let mut c = cfg();
    c.host_budget = 4 << 20;
    let (devs, _) = sim_devices(1, Faults::default());
    let engine = Engine::start(c, devs).unwrap();
    // "Parameters" loaded earlier fill the budget; the reclaimer can drop them.
    let cached: Arc<Mutex<Vec<cuzk_engine::Reservation>>> = Arc::new(Mutex::new(
        (0..4)
            .map(|_| engine.host_budget().try_acquire(1 << 20).unwrap().unwrap())
            .collect(),
    ));
    let cache = cached.clone();
    engine.set_reclaimer(move || cache.lock().unwrap().pop().is_some());
    engine
        .submit("fits", TestWork::new("porep", 2), None)
        .unwrap();
    assert!(completed(&wait(&engine, "fits")));
    assert!(cached.lock().unwrap().len() < 4, "a loaded copy was freed");

    // Parameters in use by jobs (nothing to free) leave less than a partition: the job
    // fails at once, naming the budget, instead of waiting forever.
    let budget: &Arc<MemoryBudget> = engine.host_budget();
    let held = budget
        .try_acquire(budget.total() - budget.used() - (1 << 19))
        .unwrap()
        .unwrap();
    engine.set_reclaimer(|| false);
    let t = Instant::now();
    engine
        .submit("hopeless", TestWork::new("porep", 1), None)
        .unwrap();
    let s = wait(&engine, "hopeless");
    assert!(failed_with(&s, "host budget"), "{s:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "it did not wait");
    drop(held);
    cached.lock().unwrap().clear();
    assert_eq!(engine.status().host_memory.0, 0);
    engine.shutdown(Duration::from_secs(5), false);
}

/// 500 mixed jobs over four devices that fail, panic, return wrong proofs and hang at
/// random, with an operator probing quarantined devices back: every job ends within its
/// deadline, every returned proof verifies, and the host memory comes back.
#[test]
fn soak_500_jobs_with_random_faults_lose_nothing_and_return_no_invalid_proof() {
    let (devs, phys) = sim_devices(4, Faults::default());
    for (i, p) in phys.iter().enumerate() {
        p.set_faults(Faults {
            random: Some(RandomFaults {
                seed: 17 + i as u64,
                fail: 0.02,
                panic: 0.02,
                corrupt: 0.02,
                hang: 0.01,
                hang_for: Duration::from_secs(3),
            }),
            ..Faults::default()
        });
    }
    let mut c = cfg();
    c.workers_per_device = 2;
    c.host_budget = 256 << 20;
    c.device_timeout = Some(Duration::from_secs(1));
    let engine = Arc::new(Engine::start(c, devs).unwrap());
    let start_memory = engine.status().host_memory.0;
    // The operator: probes each quarantined device back (the faults are transient).
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let probers: Vec<_> = (0..4)
        .map(|i| {
            let (engine, stop) = (engine.clone(), stop.clone());
            std::thread::spawn(move || {
                let d = engine.devices()[i].clone();
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    if !d.is_healthy() {
                        let _ = engine.probe_device(&d.info().id);
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        })
        .collect();
    let kinds = ["porep", "snap", "window-post", "winning-post"];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut jobs = Vec::new();
    for j in 0..500u64 {
        let kind = kinds[rng.gen_range(0..4)];
        let parts = rng.gen_range(1..=3);
        let id = format!("soak{j}");
        let s = engine
            .submit(&id, TestWork::new(kind, parts).variant(j), None)
            .unwrap();
        jobs.push((s.job_id, parts));
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    let (mut ok, mut failed) = (0, 0);
    let mut reasons = std::collections::BTreeMap::<String, usize>::new();
    let check = TestWork::new("porep", 1);
    for (id, parts) in &jobs {
        let left = deadline.saturating_duration_since(Instant::now());
        match engine.await_job(id, Some(left)).unwrap().status {
            JobStatus::Completed(p) => {
                assert_eq!(p.len(), 192 * parts, "{id}");
                for part in p.chunks(192) {
                    assert!(check.verify(part).unwrap(), "{id}: invalid proof");
                }
                ok += 1;
            }
            JobStatus::Failed(reason) => {
                assert!(!reason.is_empty(), "{id} failed without a reason");
                // Counted by reason with the numbers taken out.
                let shape: String = reason.chars().filter(|c| !c.is_ascii_digit()).collect();
                *reasons.entry(shape).or_default() += 1;
                failed += 1;
            }
            s => panic!("{id} did not end within the deadline: {s:?}"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for p in probers {
        p.join().unwrap();
    }
    let faults: u64 = engine.devices().iter().map(|d| d.faults()).sum();
    eprintln!("soak: {ok} completed, {failed} failed, {faults} device faults");
    for (reason, n) in &reasons {
        eprintln!("  {n:4} x {reason}");
    }
    assert_eq!(ok + failed, 500);
    assert!(faults > 0, "the soak injected device faults");
    // Where all four devices happen to be quarantined at once (two hung, two faulted), the
    // partitions queued then fail at once, by design: how many do depends on thread timing
    // (seen: 290 to 498 completed). Every failure must come from an injected fault.
    assert!(ok > 200, "most jobs survive transient faults ({ok})");
    for reason in reasons.keys() {
        assert!(
            [
                "injected",
                "does not verify",
                "quarantined",
                "device_timeout"
            ]
            .iter()
            .any(|f| reason.contains(f)),
            "a failure not caused by an injected fault: {reason}"
        );
    }
    assert_eq!(phys.iter().map(|p| p.violations()).sum::<usize>(), 0);
    engine.shutdown(Duration::from_secs(10), false);
    assert_eq!(
        engine.status().host_memory.0,
        start_memory,
        "host memory came back"
    );
}

#[test]
fn probing_a_device_busy_with_a_proof_leaves_it_in_service() {
    let (devs, _phys) = sim_devices(1, Faults::default());
    let engine = Arc::new(Engine::start(cfg(), devs).unwrap());
    let d = engine.devices()[0].clone();
    // A proof holds the device's lock for longer than a probe waits for it.
    let (held, release) = (
        Arc::new(std::sync::Barrier::new(2)),
        Arc::new(std::sync::Barrier::new(2)),
    );
    let holder = {
        let (d, held, release) = (d.clone(), held.clone(), release.clone());
        std::thread::spawn(move || {
            let _g = d.hardware().lock();
            held.wait();
            release.wait();
        })
    };
    held.wait();
    assert_eq!(
        d.probe(),
        Err(cuzk_engine::ProbeError::Busy(format!(
            "{} is still busy (an operation has not returned)",
            d.info().id
        )))
    );
    assert_eq!(engine.probe_device(&d.info().id).unwrap(), Health::Healthy);
    assert!(d.is_healthy());
    release.wait();
    holder.join().unwrap();
    // Still in service: a job submitted now completes.
    engine
        .submit("after-probe", TestWork::new("porep", 1), None)
        .unwrap();
    assert!(completed(&wait(&engine, "after-probe")));
    // A quarantined device that is busy stays quarantined (a busy probe learns nothing), and
    // comes back once a probe can run.
    d.hardware().quarantine("test fault".into());
    let g = d.hardware().lock();
    assert_ne!(engine.probe_device(&d.info().id).unwrap(), Health::Healthy);
    assert!(!d.is_healthy());
    drop(g);
    assert_eq!(engine.probe_device(&d.info().id).unwrap(), Health::Healthy);
}
