//! Jobs and their lifecycle: queued, running, then completed, failed or cancelled.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::work::{ContentDigest, ProofWork};

/// Scheduling priority; higher runs first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// Background work.
    Low = 1,
    /// PoRep and SnapDeals by default.
    Normal = 2,
    /// WindowPoSt by default.
    High = 3,
    /// WinningPoSt by default: it has seconds, not minutes.
    Critical = 4,
}

/// Where a job stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobStatus {
    /// Waiting for a synthesis slot.
    Queued,
    /// At least one partition started.
    Running,
    /// Done; the proof verified.
    Completed(Vec<u8>),
    /// Failed with a reason.
    Failed(String),
    /// Cancelled by a client.
    Cancelled,
}

impl JobStatus {
    /// True once the job can change no more.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            JobStatus::Completed(_) | JobStatus::Failed(_) | JobStatus::Cancelled
        )
    }
}

/// Per-job timings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobTimings {
    /// Waiting for the parameters to load, before submit (see [`ProofWork::params_load`]).
    pub params_load: Duration,
    /// From submit to the first partition starting synthesis.
    pub queue_wait: Duration,
    /// Synthesis, summed over partitions.
    pub synthesis: Duration,
    /// From the end of a partition's synthesis to the start of its proof on a device (the
    /// device busy with other work, or running work of the same priority), summed over
    /// partitions.
    pub device_wait: Duration,
    /// Device time, summed over partitions.
    pub device: Duration,
    /// Assembly and verification.
    pub verify: Duration,
    /// From submit to the end.
    pub total: Duration,
}

/// What `await` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobView {
    /// The job id: the request id, a digest of the content, and an attempt number after the
    /// first (see [`Engine::submit`](crate::Engine::submit)).
    pub id: String,
    /// The client's request id.
    pub request_id: String,
    /// The kind.
    pub kind: String,
    /// The status now.
    pub status: JobStatus,
    /// Timings so far.
    pub timings: JobTimings,
    /// Devices that proved partitions, by id.
    pub devices: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct JobState {
    pub status: JobStatus,
    pub timings: JobTimings,
    pub parts: Vec<Option<Vec<u8>>>,
    pub remaining: usize,
    pub started: bool,
    pub finished_at: Option<Instant>,
    pub devices: Vec<String>,
}

pub(crate) struct Job {
    pub id: String,
    pub request_id: String,
    pub content: ContentDigest,
    /// The work's kind, kept after the work is released.
    pub kind: String,
    /// Device memory one partition needs.
    pub device_bytes: u64,
    /// The work, until the job ends: a finished job keeps its result, not its parameters.
    work: Mutex<Option<Arc<dyn ProofWork>>>,
    pub priority: Priority,
    pub submitted: Instant,
    pub cancelled: AtomicBool,
    /// Calls waiting for the result now (see [`crate::Waiter`]).
    pub waiters: AtomicUsize,
    /// Set once a caller submitted it without waiting (it will come back for the result),
    /// so the job is never cancelled for lack of waiters.
    pub detached: AtomicBool,
    /// Set once a caller waited on it that cancels when it gives up (see [`crate::Waiter`]):
    /// then the last waiter of any kind to leave cancels the job, unless it is detached.
    pub cancel_when_abandoned: AtomicBool,
    pub state: Mutex<JobState>,
    pub changed: Condvar,
    /// True once the status is terminal; async waiters watch it.
    pub done: tokio::sync::watch::Sender<bool>,
}

impl Job {
    pub fn new(
        id: String,
        request_id: String,
        work: Arc<dyn ProofWork>,
        priority: Priority,
    ) -> Arc<Self> {
        let n = work.partitions();
        let params_load = work.params_load();
        Arc::new(Job {
            id,
            request_id,
            content: work.content(),
            kind: work.kind().to_owned(),
            device_bytes: work.device_bytes_per_partition(),
            work: Mutex::new(Some(work)),
            priority,
            submitted: Instant::now(),
            cancelled: AtomicBool::new(false),
            waiters: AtomicUsize::new(0),
            detached: AtomicBool::new(false),
            cancel_when_abandoned: AtomicBool::new(false),
            done: tokio::sync::watch::Sender::new(false),
            state: Mutex::new(JobState {
                status: JobStatus::Queued,
                timings: JobTimings {
                    params_load,
                    ..JobTimings::default()
                },
                parts: vec![None; n],
                remaining: n,
                started: false,
                finished_at: None,
                devices: Vec::new(),
            }),
            changed: Condvar::new(),
        })
    }

    /// The work, while the job has not ended.
    pub fn work(&self) -> Option<Arc<dyn ProofWork>> {
        self.work.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, JobState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a new submission of the same content may take this job's result: not when
    /// it failed or was cancelled (the new submission proves again).
    pub fn reusable(&self) -> bool {
        !matches!(
            self.lock().status,
            JobStatus::Failed(_) | JobStatus::Cancelled
        )
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Moves to a terminal status once; later calls change nothing. `account` runs (once,
    /// under the job's lock) before any waiter can see the new status, so counters are never
    /// behind what a client observed.
    pub fn terminate(&self, status: JobStatus, account: impl FnOnce(&JobState)) -> bool {
        let mut st = self.lock();
        if st.status.is_terminal() {
            return false;
        }
        st.status = status;
        st.timings.total = self.submitted.elapsed();
        st.finished_at = Some(Instant::now());
        account(&st);
        drop(st);
        // Parameters and PCEs the work holds are released with it (callers still using it
        // hold their own reference until they return).
        self.work.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.changed.notify_all();
        self.done.send_replace(true);
        true
    }

    pub fn view(&self) -> JobView {
        let st = self.lock();
        JobView {
            id: self.id.clone(),
            request_id: self.request_id.clone(),
            kind: self.kind.clone(),
            status: st.status.clone(),
            timings: st.timings,
            devices: st.devices.clone(),
        }
    }
}
