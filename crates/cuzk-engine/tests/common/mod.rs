//! Real Groth16 work on a small synthetic circuit, behind the engine's `ProofWork` trait.

#![allow(dead_code)]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use cuzk_engine::sim::{Faults, SimBackend, SimPhysical};
use cuzk_engine::{Device, DeviceGuard, DeviceInfo, ProofWork, Synthesized};
use cuzk_groth16::synthetic::SyntheticCircuit;
use cuzk_groth16::{
    generate_insecure_parameters, synthesize_witness, Parameters, Pce, PreparedVerifyingKey, Proof, ProvingAssignment,
};
use ff::Field;
use rand::SeedableRng;

pub struct Shape {
    pub circuit: SyntheticCircuit,
    pub pce: Pce,
    pub params: Parameters,
    pub pvk: PreparedVerifyingKey,
}

pub fn shape() -> &'static Shape {
    static S: OnceLock<Shape> = OnceLock::new();
    S.get_or_init(|| {
        let circuit = SyntheticCircuit { constraints: 200, inputs: 2, parts: 1, seed: 5 };
        let pce = Pce::extract("engine-test", circuit).unwrap();
        let params = generate_insecure_parameters(&pce, &mut rand_chacha::ChaCha8Rng::seed_from_u64(9)).unwrap();
        let pvk = PreparedVerifyingKey::new(&params.vk);
        Shape { circuit, pce, params, pvk }
    })
}

pub struct TestWork {
    pub kind: &'static str,
    pub parts: usize,
    pub host_bytes: u64,
    pub device_bytes: u64,
    pub synth_delay: Duration,
    /// Appends `label` each time a partition is proved.
    pub log: Option<(String, Arc<std::sync::Mutex<Vec<String>>>)>,
}

impl TestWork {
    pub fn new(kind: &'static str, parts: usize) -> Arc<Self> {
        Arc::new(TestWork { kind, parts, host_bytes: 1 << 20, device_bytes: 1 << 20, synth_delay: Duration::ZERO, log: None })
    }

    pub fn logged(kind: &'static str, parts: usize, label: &str, log: &Arc<std::sync::Mutex<Vec<String>>>) -> Arc<Self> {
        Arc::new(TestWork {
            kind,
            parts,
            host_bytes: 1 << 20,
            device_bytes: 1 << 20,
            synth_delay: Duration::ZERO,
            log: Some((label.to_owned(), log.clone())),
        })
    }
}

impl ProofWork for TestWork {
    fn kind(&self) -> &str {
        self.kind
    }
    fn partitions(&self) -> usize {
        self.parts
    }
    fn host_bytes_per_partition(&self) -> u64 {
        self.host_bytes
    }
    fn device_bytes_per_partition(&self) -> u64 {
        self.device_bytes
    }
    fn synthesize(&self, _k: usize) -> Result<Synthesized, String> {
        std::thread::sleep(self.synth_delay);
        let s = shape();
        let w = synthesize_witness(s.circuit).map_err(|e| e.to_string())?;
        Ok(Box::new(s.pce.evaluate(w).map_err(|e| e.to_string())?))
    }
    fn prove(&self, _k: usize, synth: &Synthesized, dev: &DeviceGuard<'_>) -> Result<Vec<u8>, String> {
        let _mem = dev.alloc("partition", self.device_bytes).map_err(|e| e.to_string())?;
        let pa = synth.downcast_ref::<ProvingAssignment>().ok_or("not an assignment")?;
        let mut rng = rand::thread_rng();
        let (r, s) = (blstrs::Scalar::random(&mut rng), blstrs::Scalar::random(&mut rng));
        let (p, _) = dev.backend().prove(&shape().params, pa, r, s).map_err(|e| e.to_string())?;
        if let Some((label, log)) = &self.log {
            log.lock().unwrap().push(label.clone());
        }
        Ok(p.to_bytes().to_vec())
    }
    fn finish(&self, parts: Vec<Vec<u8>>) -> Result<Vec<u8>, String> {
        let s = shape();
        let inputs = s.pce.evaluate(synthesize_witness(s.circuit).unwrap()).unwrap().public_inputs().to_vec();
        for (k, p) in parts.iter().enumerate() {
            let proof = Proof::from_bytes(p).map_err(|e| e.to_string())?;
            if !s.pvk.verify(&proof, &inputs).map_err(|e| e.to_string())? {
                return Err(format!("partition {k} does not verify"));
            }
        }
        Ok(parts.concat())
    }
}

/// `n` simulated devices, each on its own simulated hardware.
pub fn sim_devices(n: usize, faults: Faults) -> (Vec<Arc<Device>>, Vec<Arc<SimPhysical>>) {
    let mut devs = Vec::new();
    let mut phys = Vec::new();
    for i in 0..n {
        let p = SimPhysical::new(faults.clone());
        let info = DeviceInfo { id: format!("sim:{i}"), name: "simulated".into(), memory_total: 1 << 30 };
        devs.push(Device::new(info, Arc::new(SimBackend::new(format!("sim:{i}"), p.clone())), 1 << 30));
        phys.push(p);
    }
    (devs, phys)
}
