//! Real Groth16 work on small synthetic circuits, for loading the engine in tests and
//! benchmarks without Filecoin fixtures.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use cuzk_groth16::blstrs::Scalar;
use cuzk_groth16::synthetic::SyntheticCircuit;
use cuzk_groth16::{
    generate_insecure_parameters, synthesize_witness, Parameters, Pce, PreparedVerifyingKey, Proof,
};
use ff::Field;
use rand::SeedableRng;

use crate::device::Lease;
use crate::job::Priority;
use crate::work::{ContentDigest, ProofWork, Synthesized, WorkError};

struct Shape {
    circuit: SyntheticCircuit,
    pce: Pce,
    params: Parameters,
    pvk: PreparedVerifyingKey,
    inputs: Vec<Scalar>,
}

fn shape() -> &'static Shape {
    static S: OnceLock<Shape> = OnceLock::new();
    S.get_or_init(|| {
        let circuit = SyntheticCircuit {
            constraints: 200,
            inputs: 2,
            parts: 1,
            seed: 5,
        };
        let pce = Pce::extract("synthetic-work", circuit).expect("synthetic circuits record");
        let params =
            generate_insecure_parameters(&pce, &mut rand_chacha::ChaCha8Rng::seed_from_u64(9))
                .expect("synthetic circuits have no unconstrained variables");
        let pvk = PreparedVerifyingKey::new(&params.vk);
        let inputs = pce
            .evaluate(synthesize_witness(circuit).expect("synthetic circuits are satisfiable"))
            .expect("layout matches")
            .public_inputs()
            .to_vec();
        Shape {
            circuit,
            pce,
            params,
            pvk,
            inputs,
        }
    })
}

/// Work of `parts` partitions of one small synthetic circuit; every partition is a real
/// Groth16 proof, verified at the end.
#[derive(Debug)]
pub struct SyntheticWork {
    /// Reported proof kind.
    pub kind: &'static str,
    /// Partitions.
    pub parts: usize,
    /// Host bytes claimed per partition.
    pub host_bytes: u64,
    /// Device bytes claimed per partition.
    pub device_bytes: u64,
    /// Appends `label` to the log each time a partition is proved.
    pub log: Option<(String, Arc<Mutex<Vec<String>>>)>,
    /// Extra synthesis time per partition.
    pub synth_delay: Duration,
    /// When set, each partition's synthesis waits here until the test joins it.
    pub synth_gate: Option<Arc<std::sync::Barrier>>,
    /// What the work reports as its content: by default its kind and partition count, so two
    /// works made alike are the same request.
    pub content: ContentDigest,
    /// Its priority: by default CRITICAL for "winning-post", HIGH for "window-post", else
    /// NORMAL.
    pub priority: Priority,
    /// Panic while synthesizing partition k (injected fault).
    pub panic_in_synthesis: Option<usize>,
    /// Panic while finishing (injected fault).
    pub panic_in_finish: bool,
}

impl SyntheticWork {
    /// The default content of work of `kind` with `parts` partitions, with `variant` told
    /// apart.
    pub fn content_of(kind: &str, parts: usize, variant: u64) -> ContentDigest {
        let mut d = [0u8; 32];
        for (o, b) in d.iter_mut().zip(kind.bytes()) {
            *o = b;
        }
        d[16..24].copy_from_slice(&(parts as u64).to_le_bytes());
        d[24..].copy_from_slice(&variant.to_le_bytes());
        ContentDigest(d)
    }

    /// Whether `proof` is a valid proof of this work's circuit.
    pub fn verify(&self, proof: &[u8]) -> Result<bool, WorkError> {
        let s = shape();
        let Ok(proof) = Proof::from_bytes(proof) else {
            return Ok(false);
        };
        Ok(s.pvk.verify(&proof, &s.inputs)?)
    }

    /// The same work, reporting content `variant` (another request under the same id).
    pub fn variant(self: Arc<Self>, variant: u64) -> Arc<Self> {
        let w = Arc::try_unwrap(self).unwrap_or_else(|a| SyntheticWork {
            log: a.log.clone(),
            synth_gate: a.synth_gate.clone(),
            ..*a
        });
        Arc::new(SyntheticWork {
            content: Self::content_of(w.kind, w.parts, variant),
            ..w
        })
    }
}

impl SyntheticWork {
    /// `parts` partitions reported as `kind`, 1 MiB each of host and device memory.
    pub fn new(kind: &'static str, parts: usize) -> Arc<Self> {
        Arc::new(SyntheticWork {
            kind,
            parts,
            host_bytes: 1 << 20,
            device_bytes: 1 << 20,
            log: None,
            synth_delay: Duration::ZERO,
            synth_gate: None,
            content: Self::content_of(kind, parts, 0),
            priority: match kind {
                "winning-post" => Priority::Critical,
                "window-post" => Priority::High,
                _ => Priority::Normal,
            },
            panic_in_synthesis: None,
            panic_in_finish: false,
        })
    }

    /// The same, appending `label` to `log` per proved partition.
    pub fn logged(
        kind: &'static str,
        parts: usize,
        label: &str,
        log: &Arc<Mutex<Vec<String>>>,
    ) -> Arc<Self> {
        Arc::new(SyntheticWork {
            log: Some((label.to_owned(), log.clone())),
            ..Arc::try_unwrap(Self::new(kind, parts)).expect("fresh Arc")
        })
    }
}

impl ProofWork for SyntheticWork {
    fn kind(&self) -> &str {
        self.kind
    }
    fn content(&self) -> ContentDigest {
        self.content
    }
    fn priority(&self) -> Priority {
        self.priority
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
    fn synthesize(&self, k: usize) -> Result<Synthesized, WorkError> {
        std::thread::sleep(self.synth_delay);
        if let Some(gate) = &self.synth_gate {
            gate.wait();
        }
        if self.panic_in_synthesis == Some(k) {
            panic!("injected panic in the synthesis of partition {k}");
        }
        let s = shape();
        let w = synthesize_witness(s.circuit).map_err(|e| WorkError::Input(e.to_string()))?;
        Ok(s.pce.evaluate(w)?)
    }
    fn prove(&self, _k: usize, synth: &Synthesized, dev: &Lease<'_>) -> Result<Vec<u8>, WorkError> {
        let _mem = dev.alloc("partition", self.device_bytes)?;
        let mut rng = rand::thread_rng();
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let (p, _) = dev.prove(&shape().params, synth, r, s)?;
        if let Some((label, log)) = &self.log {
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(label.clone());
        }
        Ok(p.to_bytes().to_vec())
    }
    fn verify_partition(
        &self,
        _k: usize,
        synthesized: &Synthesized,
        proof: &[u8],
    ) -> Result<bool, WorkError> {
        let Ok(proof) = Proof::from_bytes(proof) else {
            return Ok(false);
        };
        Ok(shape().pvk.verify(&proof, synthesized.public_inputs())?)
    }
    fn finish(&self, parts: Vec<Vec<u8>>) -> Result<Vec<u8>, WorkError> {
        if self.panic_in_finish {
            panic!("injected panic in finish");
        }
        for (k, p) in parts.iter().enumerate() {
            if !self.verify(p)? {
                return Err(WorkError::Internal(format!(
                    "partition {k} does not verify"
                )));
            }
        }
        Ok(parts.concat())
    }
}
