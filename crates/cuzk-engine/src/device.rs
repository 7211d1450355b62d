//! The engine's view of a device: the one [`cuzk_groth16::Device`] its backend computes on,
//! plus what the scheduler tracks there.
//!
//! A [`Device`] wraps a backend and schedules the backend's own device object: the lock,
//! the memory ledger and the health it reads and changes are that object's, so the engine
//! and the backend cannot disagree about who holds a GPU or what its memory holds. Workers
//! hold `Arc<Device>` and call [`Device::lock`]; the [`Lease`] it returns holds the device's
//! one guard, and device memory is reserved only through it ([`Lease::alloc`]), so
//! allocating before locking does not compile. There is no table of locks indexed by number
//! anywhere.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cuzk_groth16::blstrs::Scalar;
use cuzk_groth16::{
    DeviceGuard, ParameterSource, Proof, ProveTimings, ProvingAssignment, ProvingBackend,
    VramReservation,
};

use crate::error::EngineError;
use crate::job::{Job, Priority};

pub use cuzk_groth16::{DeviceInfo, Health};

/// One partition's time on a device, for timelines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Activity {
    /// The job.
    pub job_id: String,
    /// Its kind.
    pub kind: String,
    /// The partition.
    pub partition: usize,
    /// How long ago it started.
    pub started_ago: Duration,
    /// How long ago it ended; `None` while it runs.
    pub ended_ago: Option<Duration>,
}

struct Span {
    seq: u64,
    job_id: String,
    kind: String,
    partition: usize,
    start: Instant,
    end: Option<Instant>,
}

/// A partition being proved on a device now, for the watchdog.
pub(crate) struct Running {
    pub job: Arc<Job>,
    pub k: usize,
    pub synth: Arc<crate::work::Synthesized>,
    pub started: Instant,
    /// Where the partition runs under the ordinary gate: the gate's stopping time when it
    /// started. Time the gate could stop it for does not count toward the device's deadline.
    pub gate_at_start: Option<Duration>,
    /// Set once the watchdog gave the partition to another device.
    pub rescued: bool,
}

/// Why a probe did not return a device to service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeError {
    /// The device's lock stayed held (a proof running, or an operation that hangs): it was not
    /// probed, and nothing was learned about it.
    Busy(String),
    /// The probe ran and failed (or panicked): the device is faulty.
    Failed(String),
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeError::Busy(m) | ProbeError::Failed(m) => f.write_str(m),
        }
    }
}

/// How long a probe waits for the device's lock.
const PROBE_LOCK_WAIT: Duration = Duration::from_secs(1);

/// How long ended activity is kept for timelines, and how many spans at most.
const ACTIVITY_KEEP: Duration = Duration::from_secs(15 * 60);
const ACTIVITY_MAX: usize = 4096;

/// One device as the engine schedules it.
pub struct Device {
    backend: Arc<dyn ProvingBackend>,
    current_job: Mutex<Option<(String, String)>>,
    activity: Mutex<VecDeque<Span>>,
    next_span: AtomicU64,
    /// Partitions in its hands now, outermost first (yield points nest them).
    running: Mutex<Vec<Running>>,
    /// A device that takes work only while no other device is healthy (a CPU fallback).
    fallback: bool,
}

impl std::fmt::Debug for Device {
    // The backend is a trait object without Debug; the identity is what matters in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("info", self.info())
            .finish_non_exhaustive()
    }
}

/// What a lease runs at a proof's yield points: more urgent partitions, on the same lease.
pub(crate) type YieldHook<'a> = dyn Fn(&Lease<'_>) + Sync + 'a;

/// A worker's exclusive use of a device: the device's one guard, and what the scheduler
/// tracks about the partition proved under it. Device memory is reserved through it.
pub struct Lease<'a> {
    device: &'a Device,
    guard: DeviceGuard<'a>,
    hook: Option<&'a YieldHook<'a>>,
    /// Priority of the partition being proved under this lease.
    running: AtomicU8,
    /// Time spent in yield points, each nanosecond counted once however deep they nest.
    yielded_nanos: AtomicU64,
    /// The job whose partition is being proved under this lease.
    job: Mutex<Option<Arc<Job>>>,
}

impl std::fmt::Debug for Lease<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("device", &self.device.info().id)
            .finish_non_exhaustive()
    }
}

impl Device {
    /// The device `backend` computes on, scheduled by the engine.
    pub fn new(backend: Arc<dyn ProvingBackend>) -> Arc<Self> {
        Self::build(backend, false)
    }

    fn build(backend: Arc<dyn ProvingBackend>, fallback: bool) -> Arc<Self> {
        Arc::new(Device {
            backend,
            current_job: Mutex::new(None),
            activity: Mutex::new(VecDeque::new()),
            next_span: AtomicU64::new(0),
            running: Mutex::new(Vec::new()),
            fallback,
        })
    }

    /// A device that takes work only while every other device is quarantined (for a CPU
    /// that finishes the work of failed GPUs).
    pub fn fallback(backend: Arc<dyn ProvingBackend>) -> Arc<Self> {
        Self::build(backend, true)
    }

    /// Whether this is a fallback device (see [`Device::fallback`]).
    pub fn is_fallback(&self) -> bool {
        self.fallback
    }

    /// The device object the backend computes on (its lock, ledger and health).
    pub fn hardware(&self) -> &Arc<cuzk_groth16::Device> {
        self.backend.device()
    }

    /// The device's health now.
    pub fn health(&self) -> Health {
        self.hardware().health()
    }

    /// Whether the device takes work.
    pub fn is_healthy(&self) -> bool {
        self.hardware().is_healthy()
    }

    /// Device faults seen since start.
    pub fn faults(&self) -> u64 {
        self.hardware().faults()
    }

    /// Takes the device out of service after a fault; the first reason is kept. Returns
    /// whether it was healthy until now.
    pub(crate) fn quarantine(&self, reason: String) -> bool {
        self.hardware().quarantine(reason)
    }

    /// Probes the device (see [`ProvingBackend::probe`]) and returns it to service when the
    /// probe passes. A device whose lock stays held (a proof running, or an operation that
    /// hangs) is not probed: after a second the call returns [`ProbeError::Busy`].
    pub fn probe(&self) -> Result<(), ProbeError> {
        let deadline = Instant::now() + PROBE_LOCK_WAIT;
        let g = loop {
            if let Some(g) = self.hardware().try_lock() {
                break g;
            }
            if Instant::now() >= deadline {
                return Err(ProbeError::Busy(format!(
                    "{} is still busy (an operation has not returned)",
                    self.info().id
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.backend.probe(&g)));
        match res {
            Ok(Ok(())) => {
                self.hardware().restore();
                Ok(())
            }
            Ok(Err(e)) => Err(ProbeError::Failed(e.to_string())),
            Err(_) => Err(ProbeError::Failed(format!(
                "the probe of {} panicked",
                self.info().id
            ))),
        }
    }

    pub(crate) fn push_running(&self, r: Running) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(r);
    }

    /// Runs `f` on the partitions in the device's hands now.
    pub(crate) fn with_running<R>(&self, f: impl FnOnce(&mut Vec<Running>) -> R) -> R {
        f(&mut self.running.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The device's identity.
    pub fn info(&self) -> &DeviceInfo {
        self.hardware().info()
    }

    /// Takes the device's lock, waiting for other workers.
    pub fn lock(&self) -> Lease<'_> {
        self.lease(self.hardware().lock())
    }

    /// Takes the device's lock if no other worker holds it.
    pub fn try_lock(&self) -> Option<Lease<'_>> {
        self.hardware().try_lock().map(|g| self.lease(g))
    }

    fn lease<'a>(&'a self, guard: DeviceGuard<'a>) -> Lease<'a> {
        Lease {
            device: self,
            guard,
            hook: None,
            running: AtomicU8::new(Priority::Low as u8),
            yielded_nanos: AtomicU64::new(0),
            job: Mutex::new(None),
        }
    }

    /// Total time some worker held the lock, the hold in progress included.
    pub fn busy(&self) -> Duration {
        self.hardware().busy()
    }

    /// Partitions on this device in the last `window` (at most the last 15 minutes), oldest
    /// first; one still running has no end.
    pub fn activity(&self, window: Duration) -> Vec<Activity> {
        let now = Instant::now();
        self.activity
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|s| s.end.is_none_or(|e| now - e <= window))
            .map(|s| Activity {
                job_id: s.job_id.clone(),
                kind: s.kind.clone(),
                partition: s.partition,
                started_ago: now - s.start,
                ended_ago: s.end.map(|e| now - e),
            })
            .collect()
    }

    /// The fraction of the last `window` in which some partition ran on this device
    /// (overlapping partitions, as at yield points, counted once).
    pub fn busy_fraction(&self, window: Duration) -> f64 {
        if window.is_zero() {
            return 0.0;
        }
        let mut spans: Vec<(Duration, Duration)> = self
            .activity(window)
            .into_iter()
            .map(|a| {
                (
                    a.started_ago.min(window),
                    a.ended_ago.unwrap_or(Duration::ZERO),
                )
            })
            .collect();
        // (from, to) as time ago: from >= to. Merge by start, oldest first.
        spans.sort_by_key(|s| std::cmp::Reverse(s.0));
        let mut busy = Duration::ZERO;
        let mut open: Option<(Duration, Duration)> = None;
        for (from, to) in spans {
            match open {
                Some((f, t)) if from >= t => open = Some((f, t.min(to))),
                Some((f, t)) => {
                    busy += f - t;
                    open = Some((from, to));
                }
                None => open = Some((from, to)),
            }
        }
        if let Some((f, t)) = open {
            busy += f - t;
        }
        (busy.as_secs_f64() / window.as_secs_f64()).min(1.0)
    }

    /// Records partition `k` of `job` starting on this device; [`Device::end_activity`] with
    /// the returned number records its end.
    pub(crate) fn begin_activity(&self, job: &Job, k: usize) -> u64 {
        let seq = self.next_span.fetch_add(1, Ordering::Relaxed);
        let mut a = self.activity.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        while a.len() >= ACTIVITY_MAX
            || a.front()
                .is_some_and(|s| s.end.is_some_and(|e| now - e > ACTIVITY_KEEP))
        {
            a.pop_front();
        }
        a.push_back(Span {
            seq,
            job_id: job.id.clone(),
            kind: job.kind.clone(),
            partition: k,
            start: now,
            end: None,
        });
        seq
    }

    pub(crate) fn end_activity(&self, seq: u64) {
        let mut a = self.activity.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = a.iter_mut().rev().find(|s| s.seq == seq) {
            s.end = Some(Instant::now());
        }
    }

    /// Pins host memory for this device's copies (see [`ProvingBackend::host_pinner`]).
    pub fn host_pinner(&self) -> Option<Arc<dyn cuzk_groth16::HostPinner>> {
        self.backend.host_pinner()
    }

    /// Parameters resident in this device's memory (see
    /// [`ProvingBackend::resident_sources`]); reading them takes no lock.
    pub fn resident_sources(&self) -> Option<Vec<u64>> {
        self.backend.resident_sources()
    }

    /// Free and total memory as the device's driver reports them now (a GPU's
    /// `cudaMemGetInfo`); `None` for a device without memory of its own.
    pub fn memory_info(&self) -> Option<(u64, u64)> {
        self.backend.memory_info()
    }

    /// Whether its proofs compute on the host's CPU threads (see
    /// [`ProvingBackend::computes_on_host`]).
    pub fn computes_on_host(&self) -> bool {
        self.backend.computes_on_host()
    }

    /// Device memory reserved now, from the device's one ledger (a GPU's: real allocations
    /// and resident parameters).
    pub fn memory_reserved(&self) -> u64 {
        self.hardware().reserved()
    }

    /// The device's memory budget, from the same ledger as [`Device::memory_reserved`].
    pub fn memory_budget(&self) -> u64 {
        self.hardware().budget()
    }

    /// The (job id, kind) on the device now.
    pub fn current_job(&self) -> Option<(String, String)> {
        self.current_job
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl<'a> Lease<'a> {
    /// Reserves `bytes` of this device's memory under `name`; an error (before any device
    /// call) when the budget cannot hold it now.
    pub fn alloc(&self, name: &str, bytes: u64) -> Result<VramReservation, EngineError> {
        self.guard
            .alloc(name, bytes)
            .map_err(|e| EngineError::TooLarge(e.to_string()))
    }

    /// The device's guard, which every backend operation takes.
    pub fn guard(&self) -> &DeviceGuard<'a> {
        &self.guard
    }

    /// The backend to prove with while the lease is held.
    pub fn backend(&self) -> &dyn ProvingBackend {
        self.device.backend.as_ref()
    }

    /// The device.
    pub fn device(&self) -> &Device {
        self.device
    }

    /// Proves `assignment` with the device's backend. At the proof's yield points (between
    /// its operations) partitions of higher priority waiting for this device run first, under
    /// this same lease, so urgent work waits for one operation rather than a whole proof.
    pub fn prove(
        &self,
        params: &dyn ParameterSource,
        assignment: &ProvingAssignment,
        r: Scalar,
        s: Scalar,
    ) -> cuzk_groth16::Result<(Proof, ProveTimings)> {
        self.device
            .backend
            .prove_yielding(&self.guard, params, assignment, r, s, &|| {
                self.yield_point()
            })
    }

    /// Runs the waiting partitions of higher priority than the running one, if the engine
    /// gave this lease a hook; then stops the running proof (an error) if its job was
    /// cancelled meanwhile, so a cancelled job leaves the device at its next yield point.
    pub fn yield_point(&self) -> cuzk_groth16::Result<()> {
        if let Some(hook) = self.hook {
            hook(self);
        }
        match self.job() {
            Some(j) if j.is_cancelled() => Err(cuzk_groth16::Error::Stopped(format!(
                "job {} was cancelled",
                j.id
            ))),
            _ => Ok(()),
        }
    }

    pub(crate) fn set_yield_hook(&mut self, hook: &'a YieldHook<'a>) {
        self.hook = Some(hook);
    }

    pub(crate) fn running(&self) -> Priority {
        match self.running.load(Ordering::SeqCst) {
            4 => Priority::Critical,
            3 => Priority::High,
            2 => Priority::Normal,
            _ => Priority::Low,
        }
    }

    pub(crate) fn set_running(&self, p: Priority) {
        self.running.store(p as u8, Ordering::SeqCst);
    }

    pub(crate) fn yielded(&self) -> Duration {
        Duration::from_nanos(self.yielded_nanos.load(Ordering::SeqCst))
    }

    pub(crate) fn add_yielded(&self, d: Duration) {
        self.yielded_nanos
            .fetch_add(d.as_nanos() as u64, Ordering::SeqCst);
    }

    /// The job being proved under this guard.
    pub(crate) fn job(&self) -> Option<Arc<Job>> {
        self.job.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn set_job(&self, job: Option<Arc<Job>>) {
        *self
            .device
            .current_job
            .lock()
            .unwrap_or_else(|e| e.into_inner()) =
            job.as_ref().map(|j| (j.id.clone(), j.kind.clone()));
        *self.job.lock().unwrap_or_else(|e| e.into_inner()) = job;
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        self.set_job(None);
    }
}
