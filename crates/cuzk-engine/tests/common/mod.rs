//! Simulated devices for the engine tests.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_engine::sim::{Faults, SimBackend, SimPhysical};
use cuzk_engine::{Device, Engine, Health};

/// `n` simulated devices, each on its own simulated hardware.
pub fn sim_devices(n: usize, faults: Faults) -> (Vec<Arc<Device>>, Vec<Arc<SimPhysical>>) {
    let mut devs = Vec::new();
    let mut phys = Vec::new();
    for i in 0..n {
        let p = SimPhysical::new(faults.clone());
        devs.push(SimBackend::device(format!("sim:{i}"), 1 << 30, p.clone()));
        phys.push(p);
    }
    (devs, phys)
}

/// Probes device `id` until it is healthy again, as an operator would: a worker may hold
/// the device for a moment after failing its last job (or for the rest of a hung
/// operation), and a probe that cannot get the device leaves it quarantined.
pub fn probe_back(engine: &Engine, id: &str) {
    let t = Instant::now();
    while engine.probe_device(id).unwrap() != Health::Healthy {
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "{id} never came back"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
