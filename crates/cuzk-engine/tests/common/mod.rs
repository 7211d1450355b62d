//! Simulated devices for the engine tests.

#![allow(dead_code)]

use std::sync::Arc;

use cuzk_engine::sim::{Faults, SimBackend, SimPhysical};
use cuzk_engine::Device;

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
