//! Simulated devices for the engine tests.

#![allow(dead_code)]

use std::sync::Arc;

use cuzk_engine::sim::{Faults, SimBackend, SimPhysical};
use cuzk_engine::{Device, DeviceInfo};

/// `n` simulated devices, each on its own simulated hardware.
pub fn sim_devices(n: usize, faults: Faults) -> (Vec<Arc<Device>>, Vec<Arc<SimPhysical>>) {
    let mut devs = Vec::new();
    let mut phys = Vec::new();
    for i in 0..n {
        let p = SimPhysical::new(faults.clone());
        let info = DeviceInfo {
            id: format!("sim:{i}"),
            name: "simulated".into(),
            memory_total: 1 << 30,
            ordinal: None,
        };
        devs.push(Device::new(
            info,
            Arc::new(SimBackend::new(format!("sim:{i}"), p.clone())),
            1 << 30,
        ));
        phys.push(p);
    }
    (devs, phys)
}
