//! The engine: admission, the partition pipeline and the job table.
//!
//! ```text
//! submit -> job table -> synthesis queue (priority) -> synthesis threads (CPU, host budget)
//!        -> device queue (priority) -> W workers per device (device lock) -> assemble, verify
//! ```
//! Synthesis threads and device workers run independently, so the next partition is
//! synthesized while the current one is proved; the host budget bounds how many synthesized
//! partitions wait. Both queues pick the highest priority first, so a higher-priority job
//! overtakes queued partitions of lower ones at the next partition boundary in each stage.
//! A partition that fails on a device is retried once, on another device when there is one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::device::Device;
use crate::error::EngineError;
use crate::job::{Job, JobStatus, JobView, Priority};
use crate::memory::MemoryBudget;
use crate::metrics::{KindMetrics, Metrics};
use crate::pause;
use crate::pipeline::{device_loop, synthesis_loop, DeviceItem, SynthItem};
use crate::queue::WorkQueue;
use crate::table::JobTable;
use crate::waiter::{Caller, Waiter};
use crate::work::{ContentDigest, ProofWork};

/// Engine settings.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Jobs queued or running at most; submit fails with [`EngineError::QueueFull`] past it.
    pub queue_capacity: usize,
    /// Threads synthesizing partitions of any priority.
    pub synthesis_threads: usize,
    /// Further threads that synthesize only CRITICAL partitions (WinningPoSt by default), so
    /// such a job never waits for a long partition of lower priority to finish synthesizing.
    pub urgent_synthesis_threads: usize,
    /// Workers per device (one prepares while another computes).
    pub workers_per_device: usize,
    /// How long a finished job's result stays available to its request id and content.
    pub retention: Duration,
    /// Finished jobs kept at most (the oldest go first past it).
    pub retention_max_jobs: usize,
    /// Bytes of finished jobs' proofs kept at most (the oldest go first past it).
    pub retention_max_bytes: u64,
    /// A device operation (one partition's proof) running longer than this is taken for a
    /// hung device: the device is quarantined and the partition proved elsewhere. `None`
    /// turns the watchdog off.
    pub device_timeout: Option<Duration>,
    /// Host memory for synthesized partitions, bytes.
    pub host_budget: u64,
    /// Overlap synthesis with proving. Off, a partition is synthesized only when no other
    /// partition is waiting for or on a device (for comparison in benchmarks).
    pub pipeline: bool,
    /// While a CRITICAL partition synthesizes, ordinary synthesis pauses (at its next
    /// allocation, block of PCE rows or task boundary; for at most a second), so the urgent
    /// lane has the CPU cores to itself. Where every device computes off the host (CUDA), the
    /// pause lasts until the partition's proof is done, so its host-side device work does
    /// not share the cores either.
    pub pause_for_urgent: bool,
    /// At a yield point (and before a proof starts), a device waits up to this long for a
    /// CRITICAL partition that is being synthesized, so that partition takes the device the
    /// moment it is ready instead of at the next yield point. Zero turns it off.
    pub hold_for_urgent: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            queue_capacity: 256,
            synthesis_threads: 1,
            urgent_synthesis_threads: 1,
            workers_per_device: 2,
            retention: Duration::from_secs(600),
            retention_max_jobs: 10_000,
            retention_max_bytes: 256 << 20,
            device_timeout: Some(Duration::from_secs(1800)),
            host_budget: crate::memory::auto_host_budget(2 << 30),
            pipeline: true,
            pause_for_urgent: true,
            hold_for_urgent: Duration::from_millis(100),
        }
    }
}

/// What submit returns.
#[derive(Debug)]
pub struct Submitted {
    /// The job id (see [`Engine::submit`]).
    pub job_id: String,
    /// Jobs ahead of this one in the queues.
    pub queue_position: usize,
    /// True when a job of the same request id and content was returned instead of a new one.
    pub attached: bool,
    /// The wait on the job, for a [`Caller::Waits`].
    pub waiter: Option<Waiter>,
}

/// A device in [`EngineStatus`].
#[derive(Clone, Debug)]
pub struct DeviceStatus {
    /// Identity.
    pub info: crate::device::DeviceInfo,
    /// Time busy so far, the work in progress included.
    pub busy: Duration,
    /// The fraction of the last minute in which a partition ran on it.
    pub busy_last_minute: f64,
    /// Partitions on it in the last 15 minutes, oldest first.
    pub activity: Vec<crate::device::Activity>,
    /// (job id, kind) on it now.
    pub current_job: Option<(String, String)>,
    /// Device memory reserved now (the engine's ledger).
    pub memory_used: u64,
    /// The device's memory budget.
    pub memory_budget: u64,
    /// Free memory as the device's driver reports it now; `None` for the CPU.
    pub memory_free: Option<u64>,
    /// Healthy, or quarantined with the reason.
    pub health: crate::device::Health,
    /// Device faults seen since start.
    pub faults: u64,
    /// Takes work only while no other device is healthy.
    pub fallback: bool,
    /// Parameters resident in the device's memory, by
    /// [`source_id`](cuzk_groth16::ParameterSource::source_id); `None` for a device that
    /// proves from host memory (the CPU).
    pub resident_sources: Option<Vec<u64>>,
}

/// A snapshot of the engine.
#[derive(Clone, Debug)]
pub struct EngineStatus {
    /// Devices.
    pub devices: Vec<DeviceStatus>,
    /// Per kind: (jobs queued, jobs running).
    pub queues: HashMap<String, (usize, usize)>,
    /// Host budget in use and total.
    pub host_memory: (u64, u64),
    /// Per-kind counters and histograms.
    pub metrics: std::collections::BTreeMap<String, KindMetrics>,
    /// Since the engine started.
    pub uptime: Duration,
}
pub(crate) struct Inner {
    pub(crate) cfg: EngineConfig,
    pub(crate) devices: Vec<Arc<Device>>,
    pub(crate) host: Arc<MemoryBudget>,
    pub(crate) jobs: Mutex<JobTable>,
    pub(crate) synth_q: WorkQueue<SynthItem>,
    pub(crate) device_q: WorkQueue<DeviceItem>,
    pub(crate) metrics: Metrics,
    pub(crate) accepting: AtomicBool,
    pub(crate) started: Instant,
    /// Partitions synthesized and not yet done on a device.
    pub(crate) in_flight: AtomicUsize,
    /// Pauses ordinary synthesis while urgent synthesis runs.
    /// The pause a CRITICAL partition keeps open after synthesis, through its proof: only
    /// where no device's proofs run in the pool the pause stops.
    pub(crate) pause_through_proof: bool,
    /// Where ordinary synthesis runs, and the gate that pauses it for urgent work.
    pub(crate) ordinary: pause::Ordinary,
    /// CRITICAL partitions being synthesized. Decremented only after the partition is in
    /// `device_q` (or has failed), so a device that sees zero under the queue's lock also
    /// sees the partition in the queue.
    pub(crate) urgent_synthesizing: AtomicUsize,
    /// Partitions holding host memory between acquiring it and their end (synthesis, queue,
    /// device): memory that will come back without anyone's help.
    pub(crate) partitions_holding: AtomicUsize,
    /// Set when the engine stops (ends the housekeeping thread).
    pub(crate) stopping: AtomicBool,
    /// Frees memory held by loaded parameters and PCEs no job uses, one item per call;
    /// false when there is nothing to free.
    pub(crate) reclaim: Mutex<Option<Box<dyn Fn() -> bool + Send + Sync>>>,
    /// Pins synthesized partitions' a, b and c for the devices' copies: the first device
    /// backend's that offers one (pinned memory serves every device).
    pub(crate) host_pinner: Option<Arc<dyn cuzk_groth16::HostPinner>>,
}

/// The proving engine.
pub struct Engine {
    inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("devices", &self.inner.devices)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Starts an engine over `devices`.
    pub fn start(cfg: EngineConfig, devices: Vec<Arc<Device>>) -> Result<Self, EngineError> {
        if devices.is_empty() {
            return Err(EngineError::Invalid(
                "an engine needs at least one device".into(),
            ));
        }
        if cfg.workers_per_device == 0 || cfg.synthesis_threads == 0 || cfg.queue_capacity == 0 {
            return Err(EngineError::Invalid(
                "workers per device, synthesis threads and queue capacity must be at least 1"
                    .into(),
            ));
        }
        // Each device is scheduled once: two workers' sets over one device object, or two
        // objects claiming one identity, would be scheduled as two devices.
        for (i, d) in devices.iter().enumerate() {
            if devices[..i]
                .iter()
                .any(|e| Arc::ptr_eq(e.hardware(), d.hardware()) || e.info().id == d.info().id)
            {
                return Err(EngineError::Invalid(format!(
                    "device {} is listed twice",
                    d.info().id
                )));
            }
        }
        let pause_through_proof = devices.iter().all(|d| !d.computes_on_host());
        // Every pool is built before any thread starts, so a failure leaves nothing running.
        // Ordinary lanes: the synthesis threads, and the workers of devices that compute on
        // the host; each urgent lane runs its partitions' parallel parts (witness units, PCE
        // products) in a pool of its own, outside the gate: in a shared pool they would queue
        // behind ordinary synthesis (and see `pause` for why one pool per lane).
        let mut ordinary = pause::Ordinary::new();
        let synth_pools = (0..cfg.synthesis_threads)
            .map(|i| ordinary.add_lane(format!("cuzk-synth-{i}")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(EngineError::Failed)?;
        let host_pools = devices
            .iter()
            .map(|d| {
                (0..cfg.workers_per_device)
                    .map(|w| {
                        d.computes_on_host()
                            .then(|| ordinary.add_lane(format!("cuzk-host-{}-{w}", d.info().id)))
                            .transpose()
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(EngineError::Failed)?;
        let urgent_pools = (0..cfg.urgent_synthesis_threads)
            .map(|i| pause::pool(format!("cuzk-urgent-{i}"), None))
            .collect::<Result<Vec<_>, _>>()
            .map_err(EngineError::Failed)?;
        let host_pinner = devices.iter().find_map(|d| d.host_pinner());
        let inner = Arc::new(Inner {
            host: MemoryBudget::new("host", cfg.host_budget),
            cfg,
            devices,
            jobs: Mutex::new(JobTable::default()),
            synth_q: WorkQueue::new(),
            device_q: WorkQueue::new(),
            metrics: Metrics::default(),
            accepting: AtomicBool::new(true),
            started: Instant::now(),
            in_flight: AtomicUsize::new(0),
            pause_through_proof,
            ordinary,
            urgent_synthesizing: AtomicUsize::new(0),
            partitions_holding: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
            reclaim: Mutex::new(None),
            host_pinner,
        });
        let mut threads = Vec::new();
        for (i, pool) in synth_pools.into_iter().enumerate() {
            let inner = inner.clone();
            threads.push(spawn(format!("cuzk-synth-{i}"), move || {
                synthesis_loop(&inner, Priority::Low, &pool)
            }));
        }
        for (i, pool) in urgent_pools.into_iter().enumerate() {
            let inner = inner.clone();
            threads.push(spawn(format!("cuzk-synth-urgent-{i}"), move || {
                synthesis_loop(&inner, Priority::Critical, &pool)
            }));
        }
        {
            let inner = inner.clone();
            threads.push(spawn("cuzk-housekeeping".into(), move || {
                crate::faults::housekeeping(&inner)
            }));
        }
        for (d, pools) in inner.devices.iter().zip(host_pools) {
            for (w, pool) in pools.into_iter().enumerate() {
                let (inner, d) = (inner.clone(), d.clone());
                threads.push(spawn(format!("cuzk-dev-{}-{w}", d.info().id), move || {
                    device_loop(&inner, &d, pool.as_deref())
                }));
            }
        }
        Ok(Engine {
            inner,
            threads: Mutex::new(threads),
        })
    }

    /// Submits work under the client's request id, for a caller that comes back for the
    /// result ([`Caller::Detached`]).
    ///
    /// A job is named by the request id *and* the work's [`content`](ProofWork::content):
    /// the same id with the same content attaches to the job that is queued, running or
    /// completed within the retention time; the same id with other content is a separate
    /// job; a failed or cancelled job is never attached to, a new one proves again. Job ids
    /// are `<request id>@<digest prefix>`, `.2`, `.3`, ... for later attempts.
    pub fn submit(
        &self,
        request_id: &str,
        work: Arc<dyn ProofWork>,
        priority: Option<Priority>,
    ) -> Result<Submitted, EngineError> {
        self.submit_as(Caller::Detached, request_id, work, priority)
    }

    /// [`Engine::submit`] for a given kind of caller; a [`Caller::Waits`] gets the
    /// [`Waiter`] in [`Submitted::waiter`].
    pub fn submit_as(
        &self,
        caller: Caller,
        request_id: &str,
        work: Arc<dyn ProofWork>,
        priority: Option<Priority>,
    ) -> Result<Submitted, EngineError> {
        let content = work.content();
        self.inner
            .admit(caller, request_id, &content, Some((work, priority)))
            .map(|s| s.expect("admitting with work always submits or attaches"))
    }

    /// Attaches to the job a submission of `content` under `request_id` would attach to (see
    /// [`Engine::submit`]), without building its work; `None` when there is none.
    pub fn attach(
        &self,
        caller: Caller,
        request_id: &str,
        content: &ContentDigest,
    ) -> Result<Option<Submitted>, EngineError> {
        self.inner.admit(caller, request_id, content, None)
    }

    /// A wait on the job `id` names (a job id, or a request id: its newest job). It keeps
    /// a job that a Prove caller waited on alive while it waits, and being the last waiter to
    /// leave such a job, cancels it (see [`Waiter`]).
    pub fn waiter(&self, id: &str) -> Result<Waiter, EngineError> {
        let jobs = self.inner.lock_jobs();
        let job = jobs
            .get(id)
            .ok_or_else(|| EngineError::NotFound(id.to_owned()))?;
        Ok(Waiter::new(job, self.inner.clone(), false))
    }

    /// Waits until the job `id` names (a job id, or a request id: its newest job) finishes
    /// or `timeout` passes (`None`: no limit); returns its view either way. Blocks the
    /// calling thread; async callers use a [`Waiter`].
    pub fn await_job(&self, id: &str, timeout: Option<Duration>) -> Result<JobView, EngineError> {
        let job = self.inner.job(id)?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = job.lock();
        while !st.status.is_terminal() {
            let wait = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(w) if !w.is_zero() => w.min(Duration::from_millis(200)),
                    _ => break,
                },
                None => Duration::from_millis(200),
            };
            st = job
                .changed
                .wait_timeout(st, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        drop(st);
        Ok(job.view())
    }

    /// Cancels the job `id` names (a job id, or a request id: its newest job): queued
    /// partitions are dropped with their memory, running ones finish and are discarded.
    /// Returns whether the job had started.
    pub fn cancel(&self, id: &str) -> Result<bool, EngineError> {
        let job = self.inner.job(id)?;
        Ok(self.inner.cancel_job(&job))
    }

    /// Up to `limit` jobs the engine knows (queued, running, or finished within the
    /// retention time), newest first, for status pages.
    pub fn recent_jobs(&self, limit: usize) -> Vec<JobView> {
        let mut jobs: Vec<Arc<Job>> = self.inner.lock_jobs().jobs().cloned().collect();
        jobs.sort_by_key(|j| std::cmp::Reverse(j.submitted));
        jobs.into_iter().take(limit).map(|j| j.view()).collect()
    }

    /// A snapshot for status pages and metrics.
    pub fn status(&self) -> EngineStatus {
        let inner = &self.inner;
        let mut queues: HashMap<String, (usize, usize)> = HashMap::new();
        for j in inner.lock_jobs().jobs() {
            let st = j.lock();
            let e = queues.entry(j.kind.clone()).or_default();
            match st.status {
                JobStatus::Queued => e.0 += 1,
                JobStatus::Running => e.1 += 1,
                _ => {}
            }
        }
        EngineStatus {
            devices: inner
                .devices
                .iter()
                .map(|d| DeviceStatus {
                    info: d.info().clone(),
                    busy: d.busy(),
                    busy_last_minute: d.busy_fraction(Duration::from_secs(60)),
                    activity: d.activity(Duration::from_secs(15 * 60)),
                    current_job: d.current_job(),
                    memory_used: d.memory_reserved(),
                    memory_budget: d.memory_budget(),
                    memory_free: d.memory_info().map(|(free, _)| free),
                    resident_sources: d.resident_sources(),
                    health: d.health(),
                    faults: d.faults(),
                    fallback: d.is_fallback(),
                })
                .collect(),
            queues,
            host_memory: (inner.host.used(), inner.host.total()),
            metrics: inner.metrics.snapshot(),
            uptime: inner.started.elapsed(),
        }
    }

    /// Stops accepting work; lets running and queued jobs finish within `grace` (or cancels
    /// them at once when `cancel`), cancels what is left, and stops the threads.
    pub fn shutdown(&self, grace: Duration, cancel: bool) {
        let inner = &self.inner;
        inner.accepting.store(false, Ordering::SeqCst);
        let deadline = Instant::now() + if cancel { Duration::ZERO } else { grace };
        loop {
            let pending: Vec<Arc<Job>> = inner
                .lock_jobs()
                .jobs()
                .filter(|j| !j.lock().status.is_terminal())
                .cloned()
                .collect();
            if pending.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                for j in pending {
                    inner.cancel_job(&j);
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        inner.stopping.store(true, Ordering::SeqCst);
        inner.synth_q.close();
        inner.device_q.close();
        // A thread inside an operation that hangs never returns: after a while it is left
        // behind (the process may exit) instead of hanging the shutdown.
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        let give_up = Instant::now() + Duration::from_secs(10);
        for t in threads {
            while !t.is_finished() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(10));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }

    /// The host budget.
    pub fn host_budget(&self) -> &Arc<MemoryBudget> {
        &self.inner.host
    }

    /// The devices the engine schedules.
    pub fn devices(&self) -> &[Arc<Device>] {
        &self.inner.devices
    }

    /// Sets what frees host memory held by loaded parameters and PCEs that no job uses (one
    /// item per call, false when nothing is left): called when a partition's memory does
    /// not fit the host budget, before the partition waits or fails.
    pub fn set_reclaimer(&self, f: impl Fn() -> bool + Send + Sync + 'static) {
        *self.inner.reclaim.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(f));
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.inner.stopping.store(true, Ordering::SeqCst);
        self.inner.synth_q.close();
        self.inner.device_q.close();
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .expect("spawning an engine thread")
}

impl Inner {
    fn lock_jobs(&self) -> std::sync::MutexGuard<'_, JobTable> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn job(&self, id: &str) -> Result<Arc<Job>, EngineError> {
        self.lock_jobs()
            .get(id)
            .ok_or_else(|| EngineError::NotFound(id.to_owned()))
    }

    /// Attaches `caller` to the job of `content` under `request_id`, or, given work,
    /// submits a new one (see [`Engine::submit`]). `None`: nothing to attach to and no work.
    fn admit(
        self: &Arc<Self>,
        caller: Caller,
        request_id: &str,
        content: &ContentDigest,
        work: Option<(Arc<dyn ProofWork>, Option<Priority>)>,
    ) -> Result<Option<Submitted>, EngineError> {
        if !self.accepting.load(Ordering::SeqCst) {
            return Err(EngineError::ShuttingDown);
        }
        check_request_id(request_id)?;
        let mut jobs = self.lock_jobs();
        let waiter = |job: &Arc<Job>| match caller {
            Caller::Detached => {
                job.detached.store(true, Ordering::SeqCst);
                None
            }
            Caller::Waits {
                cancel_if_abandoned,
            } => Some(Waiter::new(job.clone(), self.clone(), cancel_if_abandoned)),
        };
        if let Some(j) = jobs.attachable(request_id, content) {
            return Ok(Some(Submitted {
                job_id: j.id.clone(),
                queue_position: 0,
                attached: true,
                waiter: waiter(&j),
            }));
        }
        let Some((work, priority)) = work else {
            return Ok(None);
        };
        if work.partitions() == 0 {
            return Err(EngineError::Invalid("work has no partitions".into()));
        }
        if !self.any_device_available() {
            return Err(EngineError::Unavailable(self.no_device_reason()));
        }
        self.host.check_fits(work.host_bytes_per_partition())?;
        let need = work.device_bytes_per_partition();
        if !self.devices.iter().any(|d| d.memory_budget() >= need) {
            return Err(EngineError::TooLarge(format!(
                "a partition needs {need} bytes of device memory; no device budget is that large"
            )));
        }
        let active = jobs
            .jobs()
            .filter(|j| !j.lock().status.is_terminal())
            .count();
        if active >= self.cfg.queue_capacity {
            return Err(EngineError::QueueFull(format!(
                "{active} jobs queued or running (capacity {})",
                self.cfg.queue_capacity
            )));
        }
        let priority = priority.unwrap_or_else(|| work.priority());
        let partitions = work.partitions();
        let id = jobs.new_id(request_id, content);
        let job = Job::new(id, request_id.to_owned(), work, priority);
        jobs.insert(job.clone());
        let waiter = waiter(&job);
        drop(jobs);
        let position = self
            .synth_q
            .count(|i| i.job.priority >= priority && i.k == 0);
        for k in 0..partitions {
            self.synth_q.push(
                priority,
                SynthItem {
                    job: job.clone(),
                    k,
                },
            );
        }
        Ok(Some(Submitted {
            job_id: job.id.clone(),
            queue_position: position,
            attached: false,
            waiter,
        }))
    }

    /// Drops finished jobs past the retention time, then the oldest finished ones past the
    /// count and byte limits.
    pub(crate) fn purge_finished(&self) {
        self.lock_jobs().purge(
            self.cfg.retention,
            self.cfg.retention_max_jobs,
            self.cfg.retention_max_bytes,
        );
    }

    /// Reserves a partition's host memory for `job`, freeing unused parameters and PCEs when
    /// the budget is full. `Ok(None)`: the job was cancelled meanwhile. An error when the
    /// memory can never come: nothing can be freed and no partition holds any (what is left
    /// is held by parameters and PCEs in use).
    pub(crate) fn acquire_host(
        self: &Arc<Self>,
        job: &Job,
        bytes: u64,
    ) -> Result<Option<crate::pipeline::PartitionMemory>, String> {
        self.host.check_fits(bytes).map_err(|e| e.to_string())?;
        loop {
            if job.is_cancelled() {
                return Ok(None);
            }
            if let Some(r) = self.host.try_acquire(bytes).map_err(|e| e.to_string())? {
                return Ok(Some(crate::pipeline::PartitionMemory::new(self, r)));
            }
            let freed = self
                .reclaim
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .is_some_and(|f| f());
            if freed {
                continue;
            }
            if self.partitions_holding.load(Ordering::SeqCst) == 0 {
                return Err(format!(
                    "needs {bytes} bytes of the host budget, but {} of its {} bytes are held by \
                     parameters and PCEs in use and nothing can be freed; raise \
                     engine.host_memory",
                    self.host.used(),
                    self.host.total()
                ));
            }
            self.host.wait_for_release(Duration::from_millis(50));
        }
    }

    /// Cancels `job` (see [`Engine::cancel`]); returns whether it had started.
    fn cancel_job(&self, job: &Arc<Job>) -> bool {
        let was_running = job.lock().started;
        job.cancelled.store(true, Ordering::SeqCst);
        self.synth_q.retain(|i| !Arc::ptr_eq(&i.job, job));
        self.device_q.retain(|i| !Arc::ptr_eq(&i.job, job));
        job.terminate(JobStatus::Cancelled, |_| {
            self.metrics.with(&job.kind, |m| m.cancelled += 1)
        });
        was_running
    }

    /// A waiter of `job` is gone: when it was the last, a cancelling caller waited on the
    /// job and no caller submitted it to come back for it, the job is cancelled (see
    /// [`Waiter`]).
    pub(crate) fn release_waiter(&self, job: &Arc<Job>) {
        let _jobs = self.lock_jobs();
        let left = job.waiters.fetch_sub(1, Ordering::SeqCst) - 1;
        if left == 0
            && job.cancel_when_abandoned.load(Ordering::SeqCst)
            && !job.detached.load(Ordering::SeqCst)
            && !job.lock().status.is_terminal()
        {
            self.metrics.with(&job.kind, |m| m.abandoned += 1);
            self.cancel_job(job);
        }
    }

    pub(crate) fn fail(&self, job: &Job, reason: String) {
        job.terminate(JobStatus::Failed(reason), |_| {
            self.metrics.with(&job.kind, |m| m.failed += 1)
        });
        self.synth_q.retain(|i| !std::ptr::eq(i.job.as_ref(), job));
        self.device_q.retain(|i| !std::ptr::eq(i.job.as_ref(), job));
    }

    /// The best queued partition above `than` that `accept` takes. When there is none but a
    /// CRITICAL partition (above `than`) is being synthesized, waits for it up to
    /// `cfg.hold_for_urgent`: the device idles briefly instead of starting an operation the
    /// urgent partition would then wait for.
    pub(crate) fn pop_more_urgent(
        &self,
        than: Priority,
        accept: impl Fn(&DeviceItem) -> bool,
    ) -> Option<DeviceItem> {
        let hold = self.cfg.hold_for_urgent;
        if than >= Priority::Critical || hold.is_zero() {
            return self.device_q.pop_higher(than, accept);
        }
        self.device_q.pop_higher_waiting(
            than,
            accept,
            || self.urgent_synthesizing.load(Ordering::SeqCst) > 0,
            hold,
        )
    }
}

/// The longest request id accepted, in bytes.
pub const MAX_REQUEST_ID_BYTES: usize = 256;

/// A request id is 1 to [`MAX_REQUEST_ID_BYTES`] printable ASCII characters (space
/// included): ids are kept with every job and shown in logs and status.
pub fn check_request_id(id: &str) -> Result<(), EngineError> {
    if id.is_empty() {
        return Err(EngineError::Invalid("request id is empty".into()));
    }
    if id.len() > MAX_REQUEST_ID_BYTES {
        return Err(EngineError::Invalid(format!(
            "request id of {} bytes: at most {MAX_REQUEST_ID_BYTES}",
            id.len()
        )));
    }
    if let Some(c) = id.chars().find(|c| !(' '..='~').contains(c)) {
        return Err(EngineError::Invalid(format!(
            "request id holds {c:?}: only printable ASCII characters are accepted"
        )));
    }
    Ok(())
}
