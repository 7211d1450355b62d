//! Simulated devices for tests: CPU proving behind the device interface, with invariant
//! checks and fault injection; and [`SyntheticWork`] to load them.
//!
//! Several logical [`Device`](crate::Device)s can be configured onto one [`SimPhysical`] to
//! model a machine where two handles reach the same hardware. The physical device counts
//! concurrent entries: two at once is a violation (what happened when locks were indexed by
//! a logical number that did not match the physical device).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

mod work;

pub use work::SyntheticWork;

use cuzk_groth16::blstrs::{G1Projective, G2Projective, Scalar};
use cuzk_groth16::{
    CpuBackend, DeviceGuard, DeviceInfo, Error, G1Base, G2Base, ParameterSource, Proof,
    ProveTimings, ProvingAssignment, ProvingBackend, YieldPoint,
};

use crate::device::Device;

/// Faults a simulated device injects.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Fail the Nth proof (1-based) with a device error.
    pub fail_on_call: Option<usize>,
    /// Fail every proof.
    pub always_fail: bool,
    /// Extra time each proof takes.
    pub delay: Duration,
    /// Panic inside the Nth proof (1-based), as a bug in a backend would.
    pub panic_on_call: Option<usize>,
    /// Hang in the Nth proof (1-based) for this long, as a device that stops answering.
    pub hang_on_call: Option<(usize, Duration)>,
    /// Return a wrong proof (a valid encoding that does not verify) from the Nth proof.
    pub corrupt_on_call: Option<usize>,
    /// Answer probes as a dead device (see [`ProvingBackend::probe`]).
    pub dead: bool,
    /// Faults drawn at random per call (for soak tests).
    pub random: Option<RandomFaults>,
}

/// Per-call fault probabilities, drawn from a seeded generator (the same seed gives the
/// same faults on the same call numbers).
#[derive(Clone, Copy, Debug)]
pub struct RandomFaults {
    /// Seed.
    pub seed: u64,
    /// Probability of a device error.
    pub fail: f64,
    /// Probability of a panic.
    pub panic: f64,
    /// Probability of a wrong proof.
    pub corrupt: f64,
    /// Probability of a hang of `hang_for`.
    pub hang: f64,
    /// How long a hang lasts.
    pub hang_for: Duration,
}

/// What one call does under `f`.
enum Fault {
    None,
    Fail,
    Panic,
    Corrupt,
    Hang(Duration),
}

impl Faults {
    fn for_call(&self, call: usize) -> Fault {
        if self.always_fail || self.fail_on_call == Some(call) {
            return Fault::Fail;
        }
        if self.panic_on_call == Some(call) {
            return Fault::Panic;
        }
        if self.corrupt_on_call == Some(call) {
            return Fault::Corrupt;
        }
        if let Some((n, d)) = self.hang_on_call {
            if n == call {
                return Fault::Hang(d);
            }
        }
        let Some(r) = self.random else {
            return Fault::None;
        };
        use rand::{Rng, SeedableRng};
        let u: f64 = rand_chacha::ChaCha8Rng::seed_from_u64(
            r.seed ^ (call as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        )
        .gen();
        let mut edge = r.fail;
        if u < edge {
            return Fault::Fail;
        }
        edge += r.panic;
        if u < edge {
            return Fault::Panic;
        }
        edge += r.corrupt;
        if u < edge {
            return Fault::Corrupt;
        }
        edge += r.hang;
        if u < edge {
            return Fault::Hang(r.hang_for);
        }
        Fault::None
    }
}

/// One simulated piece of hardware.
#[derive(Debug, Default)]
pub struct SimPhysical {
    active: AtomicUsize,
    violations: AtomicUsize,
    calls: AtomicUsize,
    faults: std::sync::Mutex<Faults>,
    failing: AtomicBool,
}

impl SimPhysical {
    /// A simulated device with the given faults.
    pub fn new(faults: Faults) -> Arc<Self> {
        let s = SimPhysical::default();
        *s.faults.lock().unwrap_or_else(|e| e.into_inner()) = faults;
        Arc::new(s)
    }

    /// Times two provers were inside this device at once.
    pub fn violations(&self) -> usize {
        self.violations.load(Ordering::SeqCst)
    }

    /// Proofs attempted on this device.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Replaces the fault plan.
    pub fn set_faults(&self, f: Faults) {
        *self.faults.lock().unwrap_or_else(|e| e.into_inner()) = f;
        self.failing.store(false, Ordering::SeqCst);
    }
}

/// A backend proving on the CPU through a simulated device.
#[derive(Debug)]
pub struct SimBackend {
    physical: Arc<SimPhysical>,
    /// Computes under the simulated device's own lock.
    cpu: CpuBackend,
}

impl SimBackend {
    /// A logical device `id` with `budget` bytes of device memory, on `physical`.
    pub fn new(id: impl Into<String>, budget: u64, physical: Arc<SimPhysical>) -> Self {
        let id = id.into();
        let device = cuzk_groth16::Device::new(
            DeviceInfo {
                name: format!("simulated ({id})"),
                id,
                memory_total: budget,
                ordinal: None,
            },
            budget,
        );
        SimBackend {
            physical,
            cpu: CpuBackend::on(device),
        }
    }

    /// An engine device on a new [`SimBackend`] (see [`SimBackend::new`]).
    pub fn device(id: impl Into<String>, budget: u64, physical: Arc<SimPhysical>) -> Arc<Device> {
        Device::new(Arc::new(SimBackend::new(id, budget, physical)))
    }
}

impl SimPhysical {
    /// Counts one prover inside; a second one at the same time is a violation.
    fn enter(&self) {
        if self.active.fetch_add(1, Ordering::SeqCst) > 0 {
            self.violations.fetch_add(1, Ordering::SeqCst);
        }
    }
}

struct Entry<'a>(&'a SimPhysical);

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ProvingBackend for SimBackend {
    fn name(&self) -> String {
        self.cpu.device().info().id.clone()
    }
    fn device(&self) -> &Arc<cuzk_groth16::Device> {
        self.cpu.device()
    }
    fn compute_h(
        &self,
        g: &DeviceGuard<'_>,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
    ) -> Result<Vec<Scalar>, Error> {
        self.cpu.compute_h(g, a, b, c)
    }
    fn ntt(&self, g: &DeviceGuard<'_>, v: &mut [Scalar], inverse: bool) -> Result<(), Error> {
        self.cpu.ntt(g, v, inverse)
    }
    fn msm_g1(
        &self,
        g: &DeviceGuard<'_>,
        b: &[G1Base],
        s: &[Scalar],
    ) -> Result<G1Projective, Error> {
        self.cpu.msm_g1(g, b, s)
    }
    fn msm_g2(
        &self,
        g: &DeviceGuard<'_>,
        b: &[G2Base],
        s: &[Scalar],
    ) -> Result<G2Projective, Error> {
        self.cpu.msm_g2(g, b, s)
    }

    fn prove_yielding(
        &self,
        g: &DeviceGuard<'_>,
        params: &dyn ParameterSource,
        assignment: &ProvingAssignment,
        r: Scalar,
        s: Scalar,
        yield_point: &YieldPoint<'_>,
    ) -> Result<(Proof, ProveTimings), Error> {
        g.check(self.device())?;
        let p = &self.physical;
        p.enter();
        let _entry = Entry(p);
        let call = p.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let faults = p.faults.lock().unwrap_or_else(|e| e.into_inner()).clone();
        // A slow device spends its delay in equal slices: before the first operation and in
        // the device before each of the five yield points.
        let slice = faults.delay / 6;
        let work = || {
            if !slice.is_zero() {
                std::thread::sleep(slice);
            }
        };
        work();
        let fault = faults.for_call(call);
        match fault {
            Fault::Fail => {
                return Err(Error::Backend {
                    backend: self.name(),
                    message: format!("injected fault on call {call}"),
                })
            }
            Fault::Panic => panic!("injected panic on call {call} of {}", self.name()),
            Fault::Hang(d) => std::thread::sleep(d),
            Fault::None | Fault::Corrupt => {}
        }
        // At a yield point this proof is outside the device: whatever runs there enters it
        // alone, and this proof enters again (checked) before it goes on.
        let outside = || {
            work();
            p.active.fetch_sub(1, Ordering::SeqCst);
            let r = yield_point();
            p.enter();
            r
        };
        let (mut proof, t) =
            cuzk_groth16::prove_composed(&self.cpu, g, params, assignment, r, s, &outside)?;
        if matches!(fault, Fault::Corrupt) {
            // A well-formed proof of nothing: what a device computing garbage returns.
            std::mem::swap(&mut proof.a, &mut proof.c);
        }
        Ok((proof, t))
    }

    fn probe(&self, g: &DeviceGuard<'_>) -> Result<(), Error> {
        g.check(self.device())?;
        let faults = self
            .physical
            .faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if faults.dead || faults.always_fail {
            return Err(Error::Backend {
                backend: self.name(),
                message: "the simulated device does not answer".into(),
            });
        }
        Ok(())
    }
}
