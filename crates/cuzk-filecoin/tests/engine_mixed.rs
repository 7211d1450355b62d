//! Filecoin kinds through the engine on simulated devices, mixed with priorities.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::fixtures;
use cuzk_engine::sim::{Faults, SimBackend, SimPhysical};
use cuzk_engine::{Device, DeviceInfo, Engine, EngineConfig, JobStatus};
use cuzk_filecoin::{plan, CircuitStore, FilecoinWork, ProofKind};

#[test]
fn filecoin_kinds_through_the_engine_on_two_simulated_devices() {
    let f = fixtures();
    let store = Arc::new(CircuitStore::new(f.dir.join("params"), &f.dir.join("cache")));
    let phys: Vec<_> = (0..2).map(|_| SimPhysical::new(Faults::default())).collect();
    let devices = phys
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let info = DeviceInfo { id: format!("sim:{i}"), name: "simulated".into(), memory_total: 8 << 30 };
            Device::new(info, Arc::new(SimBackend::new(format!("sim:{i}"), p.clone())), 8 << 30)
        })
        .collect();
    let cfg = EngineConfig {
        queue_capacity: 64,
        synthesis_threads: 1,
        workers_per_device: 2,
        retention: Duration::from_secs(60),
        host_budget: 4 << 30,
        pipeline: true,
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
    for id in &ids {
        let v = engine.await_job(id, None).unwrap();
        match v.status {
            JobStatus::Completed(p) => assert_eq!(p.len(), 192, "{id}"),
            s => panic!("{id}: {s:?}"),
        }
    }
    assert!(phys.iter().all(|p| p.violations() == 0));
    let st = engine.status();
    assert_eq!(st.metrics["winning-post"].completed, 2);
    assert_eq!(st.metrics["window-post"].completed, 3);
    assert_eq!(st.metrics["snap"].completed, 1);
    engine.shutdown(Duration::from_secs(5), false);
}
