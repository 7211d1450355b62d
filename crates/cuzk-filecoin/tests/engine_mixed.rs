//! Filecoin kinds through the engine on simulated devices, mixed with priorities.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::fixtures;
use cuzk_engine::sim::{Faults, SimBackend, SimPhysical, SyntheticWork};
use cuzk_engine::{Engine, EngineConfig, JobStatus, Priority};
use cuzk_filecoin::{plan, CircuitStore, FilecoinWork, ProofKind};

/// At least 200 jobs: synthetic circuits and 2 KiB Filecoin kinds, mixed priorities, four
/// simulated devices with two workers each.
#[test]
fn mixed_synthetic_and_filecoin_load_on_four_simulated_devices() {
    let f = fixtures();
    let store = Arc::new(CircuitStore::new(
        f.dir.join("params"),
        &f.dir.join("cache"),
    ));
    let phys: Vec<_> = (0..4)
        .map(|_| SimPhysical::new(Faults::default()))
        .collect();
    let devices = phys
        .iter()
        .enumerate()
        .map(|(i, p)| SimBackend::device(format!("sim:{i}"), 8 << 30, p.clone()))
        .collect();
    let cfg = EngineConfig {
        queue_capacity: 512,
        synthesis_threads: 1,
        urgent_synthesis_threads: 1,
        workers_per_device: 2,
        // The jobs are awaited in submission order after the slow Filecoin ones: every result
        // must outlive the whole run, however slow the machine.
        retention: Duration::from_secs(3600),
        host_budget: 4 << 30,
        pipeline: true,
        pause_for_urgent: true,
        hold_for_urgent: Duration::from_millis(100),
        ..EngineConfig::default()
    };
    let engine = Engine::start(cfg, devices).unwrap();
    let mut ids = Vec::new();
    let kinds = [
        ProofKind::SnapDeals,
        ProofKind::WinningPoSt,
        ProofKind::WindowPoSt,
        ProofKind::WinningPoSt,
        ProofKind::WindowPoSt,
        ProofKind::WindowPoSt,
    ];
    for (i, kind) in kinds.into_iter().enumerate() {
        let p = plan(&f.manifest.request(&f.dir, kind).unwrap()).unwrap();
        let work = Arc::new(FilecoinWork::new(p, &store, true).unwrap());
        let id = format!("{kind}-{i}");
        engine.submit(&id, work, None).unwrap();
        ids.push(id);
    }
    let mut synthetic = Vec::new();
    for j in 0..200 {
        let kind = ["porep", "snap", "window-post", "winning-post"][j % 4];
        let prio = [
            None,
            Some(Priority::Low),
            Some(Priority::High),
            Some(Priority::Critical),
        ][(j / 4) % 4];
        let id = format!("synthetic-{j}");
        engine
            .submit(&id, SyntheticWork::new(kind, 1 + j % 3), prio)
            .unwrap();
        synthetic.push(id);
    }
    for id in &ids {
        let v = engine.await_job(id, None).unwrap();
        match v.status {
            JobStatus::Completed(p) => assert_eq!(p.len(), 192, "{id}"),
            s => panic!("{id}: {s:?}"),
        }
    }
    for id in &synthetic {
        let v = engine.await_job(id, None).unwrap();
        assert!(
            matches!(v.status, JobStatus::Completed(ref p) if p.len() % 192 == 0 && !p.is_empty()),
            "{id}: {:?}",
            v.status
        );
    }
    assert!(phys.iter().all(|p| p.violations() == 0));
    let st = engine.status();
    assert_eq!(st.metrics["winning-post"].completed, 2 + 50);
    assert_eq!(st.metrics["window-post"].completed, 3 + 50);
    assert_eq!(st.metrics["snap"].completed, 1 + 50);
    assert_eq!(st.metrics["porep"].completed, 50);
    assert!(
        st.devices.iter().all(|d| !d.busy.is_zero()),
        "every device worked"
    );
    assert_eq!(st.host_memory.0, 0);
    engine.shutdown(Duration::from_secs(5), false);
}

/// A submit with no PCE on disk does not wait for the extraction: the job is synthesized
/// directly and verifies, the PCE is extracted in the background and saved, and the next job
/// of the circuit uses it.
#[test]
fn a_missing_pce_is_extracted_in_the_background_while_jobs_prove_without_it() {
    let f = fixtures();
    let cache = tempfile::tempdir().unwrap();
    let store = Arc::new(CircuitStore::new(f.dir.join("params"), cache.path()));
    let phys = SimPhysical::new(Faults::default());
    let device = SimBackend::device("sim:0", 8 << 30, phys.clone());
    let engine = Engine::start(
        EngineConfig {
            host_budget: 4 << 30,
            ..EngineConfig::default()
        },
        vec![device],
    )
    .unwrap();
    let request = f.manifest.request(&f.dir, ProofKind::WinningPoSt).unwrap();
    let prove = |id: &str| -> bool {
        let p = plan(&request).unwrap();
        let work = FilecoinWork::without_waiting(p, &store).unwrap();
        let with_pce = work.uses_pce();
        engine.submit(id, Arc::new(work), None).unwrap();
        let v = engine.await_job(id, None).unwrap();
        assert!(
            matches!(v.status, JobStatus::Completed(ref p) if p.len() == 192),
            "{id}: {:?}",
            v.status
        );
        with_pce
    };
    assert!(
        !prove("first"),
        "the first job had a PCE that was never extracted"
    );
    let spec = plan(&request).unwrap().circuit().clone();
    let t = std::time::Instant::now();
    while store.pce_extracting(&spec) {
        assert!(
            t.elapsed() < Duration::from_secs(600),
            "extraction never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(store.pce_path(&spec).exists(), "the PCE was not saved");
    assert!(
        prove("second"),
        "the job after the extraction did not use the PCE"
    );
    assert_eq!(phys.violations(), 0);
    engine.shutdown(Duration::from_secs(5), false);
}

/// An extraction reserves its memory from the host budget as it grows, before allocating it:
/// under a budget too small for the recording it fails with the budget named and leaves
/// nothing reserved; under a large one the PCE it keeps holds exactly its own bytes.
#[test]
fn a_pce_extraction_reserves_before_it_allocates() {
    let f = fixtures();
    let spec = plan(&f.manifest.request(&f.dir, ProofKind::WinningPoSt).unwrap())
        .unwrap()
        .circuit()
        .clone();
    let small = cuzk_engine::MemoryBudget::new("host", 1 << 16);
    let cache = tempfile::tempdir().unwrap();
    let store = CircuitStore::new(f.dir.join("params"), cache.path()).with_budget(small.clone());
    let e = store.pce(&spec).unwrap_err().to_string();
    assert!(
        e.contains("budget") && e.contains("host memory refused"),
        "{e}"
    );
    assert_eq!(small.used(), 0, "a failed extraction left memory reserved");
    assert!(!store.pce_path(&spec).exists());

    let large = cuzk_engine::MemoryBudget::new("host", 8 << 30);
    let store = CircuitStore::new(f.dir.join("params"), cache.path()).with_budget(large.clone());
    let pce = store.pce(&spec).unwrap();
    assert_eq!(large.used(), pce.stats().bytes as u64);
    // Loaded from the file it saved: reserved from the header before reading, same bytes.
    let again = CircuitStore::new(f.dir.join("params"), cache.path()).with_budget(large.clone());
    drop(store);
    assert_eq!(large.used(), 0);
    let loaded = again.pce(&spec).unwrap();
    assert_eq!(loaded.fingerprint(), pce.fingerprint());
    assert_eq!(large.used(), loaded.stats().bytes as u64);
}
