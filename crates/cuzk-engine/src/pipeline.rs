//! The partition pipeline: synthesis threads feed the device queue, device workers prove,
//! the last partition of a job assembles and verifies it.
//!
//! Every stage runs inside a boundary that turns a panic into a failed partition, so no
//! worker thread dies. A partition's proof is verified as soon as a device returns it. What
//! happens on a failure follows its [`WorkError`] class: a device fault (an error, a proof
//! that does not verify, an operation past the watchdog's deadline) quarantines the device
//! and moves the partition to another one; an internal error is retried once; bad input and
//! limits fail the job at once. A cancelled job's partition stops at its proof's next yield
//! point and is dropped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::device::{Device, Lease, Running};
use crate::engine::Inner;
use crate::job::{Job, JobStatus, Priority};
use crate::memory::Reservation;
use crate::metrics::Metrics;
use crate::pause;
use crate::work::{Synthesized, WorkError};

pub(crate) struct SynthItem {
    pub(crate) job: Arc<Job>,
    pub(crate) k: usize,
}

pub(crate) struct DeviceItem {
    pub(crate) _in_flight: InFlight,
    /// When it was queued for a device: after synthesis, or after a failed attempt.
    pub(crate) queued_at: Instant,
    pub(crate) job: Arc<Job>,
    pub(crate) k: usize,
    pub(crate) synth: Arc<Synthesized>,
    /// The synthesized partition's host memory; `None` for a copy the watchdog re-queued
    /// while the original still holds it.
    pub(crate) _host: Option<PartitionMemory>,
    /// Open while a CRITICAL partition waits for and runs on a device (see
    /// `EngineConfig::pause_for_urgent`).
    pub(crate) _pause: Option<pause::Hold>,
    pub(crate) retried: bool,
    pub(crate) excluded: Option<String>,
}

/// Counts a CRITICAL partition in synthesis until dropped.
struct UrgentSynthesis<'a>(&'a AtomicUsize);

impl<'a> UrgentSynthesis<'a> {
    fn new(n: &'a AtomicUsize) -> Self {
        n.fetch_add(1, Ordering::SeqCst);
        UrgentSynthesis(n)
    }
}

impl Drop for UrgentSynthesis<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The longest a CRITICAL partition pauses ordinary synthesis (per held period).
const PAUSE_MAX: Duration = Duration::from_secs(1);

/// Counts a partition between synthesis and the end of its device work.
pub(crate) struct InFlight(Arc<Inner>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs `f`, turning a panic into an internal error naming `what`.
pub(crate) fn contained<T>(
    what: &str,
    f: impl FnOnce() -> Result<T, WorkError>,
) -> Result<T, WorkError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("a panic without a message");
        Err(WorkError::Internal(format!("{what} panicked: {msg}")))
    })
}

/// Synthesizes partitions of priority `min` or above until the engine closes, in `pool`: an
/// urgent lane's own (`min` CRITICAL), which pauses ordinary synthesis while it works, or an
/// ordinary lane's, under the gate.
pub(crate) fn synthesis_loop(inner: &Arc<Inner>, min: Priority, pool: &rayon::ThreadPool) {
    let urgent_lane = min == Priority::Critical;
    if !urgent_lane {
        inner.ordinary.join_this_thread();
    }
    loop {
        if !inner.cfg.pipeline {
            while inner.in_flight.load(Ordering::SeqCst) > 0
                && inner.accepting.load(Ordering::SeqCst)
            {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let Some(SynthItem { job, k }) = inner.synth_q.pop(|it| it.job.priority >= min) else {
            return;
        };
        if job.is_cancelled() || job.lock().status.is_terminal() {
            continue;
        }
        let Some(work) = job.work() else { continue };
        {
            let mut st = job.lock();
            if !st.started {
                st.started = true;
                st.status = JobStatus::Running;
                st.timings.queue_wait = job.submitted.elapsed();
                let w = st.timings.queue_wait;
                inner
                    .metrics
                    .with(&job.kind, |m| Metrics::observe(&mut m.queue_wait, w));
            }
        }
        let host = match inner.acquire_host(&job, work.host_bytes_per_partition()) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(reason) => {
                inner.fail(&job, format!("partition {k}: {reason}"));
                continue;
            }
        };
        let _urgent = (job.priority == Priority::Critical)
            .then(|| UrgentSynthesis::new(&inner.urgent_synthesizing));
        let t = Instant::now();
        let pause =
            (urgent_lane && inner.cfg.pause_for_urgent).then(|| inner.ordinary.hold(PAUSE_MAX));
        let res = pool.install(|| contained("synthesis", || work.synthesize(k)));
        let pause = pause.filter(|_| inner.pause_through_proof);
        let took = t.elapsed();
        job.lock().timings.synthesis += took;
        inner
            .metrics
            .with(&job.kind, |m| Metrics::observe(&mut m.synthesis, took));
        match res {
            Ok(mut synth) if inner.any_device_available() => {
                // Here, in the synthesis lane, not under a device's lock.
                if let Some(p) = &inner.host_pinner {
                    synth.pin_evaluations(p.as_ref());
                }
                inner.device_q.push(
                    job.priority,
                    DeviceItem {
                        _in_flight: InFlight::new(inner),
                        queued_at: Instant::now(),
                        job,
                        k,
                        synth: Arc::new(synth),
                        _host: Some(host),
                        _pause: pause,
                        retried: false,
                        excluded: None,
                    },
                )
            }
            Ok(_) => inner.fail(&job, format!("partition {k}: {}", inner.no_device_reason())),
            Err(e) => inner.fail(&job, format!("partition {k} synthesis failed: {e}")),
        }
    }
}

/// A partition's host memory, counted as memory that comes back on its own (see
/// `Inner::acquire_host`).
pub(crate) struct PartitionMemory {
    _reservation: Reservation,
    inner: Arc<Inner>,
}

impl PartitionMemory {
    pub(crate) fn new(inner: &Arc<Inner>, r: Reservation) -> Self {
        inner.partitions_holding.fetch_add(1, Ordering::SeqCst);
        PartitionMemory {
            _reservation: r,
            inner: inner.clone(),
        }
    }
}

impl Drop for PartitionMemory {
    fn drop(&mut self) {
        self.inner.partitions_holding.fetch_sub(1, Ordering::SeqCst);
    }
}

impl InFlight {
    pub(crate) fn new(inner: &Arc<Inner>) -> Self {
        inner.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(inner.clone())
    }
}

/// Proves what the device queue holds for `device` until the engine closes; in `host_pool`
/// when the device computes on the host (see `pause`).
pub(crate) fn device_loop(
    inner: &Inner,
    device: &Arc<Device>,
    host_pool: Option<&rayon::ThreadPool>,
) {
    let id = device.info().id.clone();
    let accept =
        |i: &DeviceItem| i.excluded.as_deref() != Some(id.as_str()) && inner.takes_work(device);
    // At a yield point of the partition on the device: partitions of higher priority that
    // the device's memory holds beside it run to completion on the same lease.
    let hook = |g: &Lease<'_>| {
        let running = g.running();
        let fits = |i: &DeviceItem| {
            device
                .memory_budget()
                .saturating_sub(device.memory_reserved())
                >= i.job.device_bytes
        };
        loop {
            let t0 = Instant::now();
            let next = inner.pop_more_urgent(running, |i| accept(i) && fits(i));
            // Time spent waiting for urgent work is not the running proof's either.
            g.add_yielded(t0.elapsed());
            let Some(item) = next else { break };
            let outer_job = g.job();
            let (y0, t) = (g.yielded(), Instant::now());
            if let Some((job, parts)) = run_item(inner, device, host_pool, g, item) {
                finish(inner, &job, parts);
            }
            let nested = g.yielded() - y0;
            g.add_yielded(t.elapsed().saturating_sub(nested));
            g.set_job(outer_job);
            g.set_running(running);
        }
    };
    while let Some(mut item) = inner.device_q.pop(accept) {
        let job = item.job.clone();
        if job.is_cancelled() || job.lock().status.is_terminal() {
            continue;
        }
        let mut lease = match device.try_lock() {
            Some(g) => g,
            None => {
                // The device is busy. The item waits in the queue, not in this worker's hands,
                // so the running proof's next yield point can take it if it is more urgent;
                // this worker waits for the lock and then takes the best item there is.
                inner.device_q.requeue(job.priority, item);
                let g = device.lock();
                match inner.device_q.try_pop(accept) {
                    Some(next) => {
                        item = next;
                        g
                    }
                    None => continue,
                }
            }
        };
        lease.set_yield_hook(&hook);
        // Higher-priority work may have arrived since the pop: it goes first, and this item
        // goes back to the front of its priority.
        let p = item.job.priority;
        if let Some(better) = inner.pop_more_urgent(p, accept) {
            inner.device_q.requeue(p, item);
            item = better;
        }
        let done = run_item(inner, device, host_pool, &lease, item);
        drop(lease);
        if let Some((job, parts)) = done {
            finish(inner, &job, parts);
        }
    }
}

/// Proves one partition under `lease`, checks the proof, and records the result or acts on
/// the failure (see the module docs); returns the job and its partition proofs when this was
/// the job's last partition.
fn run_item(
    inner: &Inner,
    device: &Device,
    host_pool: Option<&rayon::ThreadPool>,
    lease: &Lease<'_>,
    mut item: DeviceItem,
) -> Option<(Arc<Job>, Vec<Vec<u8>>)> {
    let id = &device.info().id;
    let job = item.job.clone();
    if job.is_cancelled() || job.lock().status.is_terminal() {
        return None;
    }
    let work = job.work()?;
    let k = item.k;
    let waited = item.queued_at.elapsed();
    job.lock().timings.device_wait += waited;
    inner
        .metrics
        .with(&job.kind, |m| Metrics::observe(&mut m.device_wait, waited));
    lease.set_job(Some(job.clone()));
    lease.set_running(job.priority);
    let (y0, t) = (lease.yielded(), Instant::now());
    device.push_running(Running {
        job: job.clone(),
        k,
        synth: item.synth.clone(),
        started: Instant::now(),
        gate_at_start: host_pool.map(|_| inner.ordinary.stopping_time()),
        rescued: false,
    });
    let span = device.begin_activity(&job, k);
    let prove = || contained("proving", || work.prove(k, &item.synth, lease));
    let proved = match host_pool {
        Some(pool) => pool.install(prove),
        None => prove(),
    };
    let res = proved.and_then(|bytes| {
        match contained("checking the proof", || {
            work.verify_partition(k, &item.synth, &bytes)
        })? {
            true => Ok(bytes),
            false => Err(WorkError::Device(format!(
                "{id} returned a proof of partition {k} that does not verify"
            ))),
        }
    });
    device.end_activity(span);
    let rescued = device.with_running(|r| r.pop().is_some_and(|x| x.rescued));
    // Time lent to more urgent partitions at yield points is theirs.
    let took = t.elapsed().saturating_sub(lease.yielded() - y0);
    inner
        .metrics
        .with(&job.kind, |m| Metrics::observe(&mut m.device, took));
    {
        let mut st = job.lock();
        st.timings.device += took;
        if !st.devices.contains(id) {
            st.devices.push(id.clone());
        }
    }
    let reason = match res {
        Ok(bytes) => {
            let done = {
                let mut st = job.lock();
                if st.status.is_terminal() {
                    return None;
                }
                if st.parts[k].is_none() {
                    st.parts[k] = Some(bytes);
                    st.remaining -= 1;
                }
                (st.remaining == 0).then(|| {
                    st.parts
                        .iter_mut()
                        .map(|p| p.take().unwrap_or_default())
                        .collect()
                })
            };
            retire(item);
            return done.map(|parts| (job, parts));
        }
        // Stopped at a yield point because the job was cancelled, or already handed to
        // another device by the watchdog: nothing more to do here.
        Err(_) if job.is_cancelled() || rescued => return None,
        Err(WorkError::Device(reason)) => {
            inner.device_fault(device, &reason);
            reason
        }
        Err(e @ WorkError::Internal(_)) => e.to_string(),
        Err(e) => {
            inner.fail(&job, format!("partition {k} failed on {id}: {e}"));
            return None;
        }
    };
    if item.retried {
        inner.fail(
            &job,
            format!("partition {k} failed on {id} after a retry: {reason}"),
        );
        return None;
    }
    item.retried = true;
    item.queued_at = Instant::now();
    if inner.devices.len() > 1 {
        item.excluded = Some(id.clone());
    }
    if !inner.any_device_for(&item) {
        inner.fail(
            &job,
            format!(
                "partition {k} failed on {id}: {reason}; {}",
                inner.no_device_reason()
            ),
        );
        return None;
    }
    inner.metrics.with(&job.kind, |m| m.retries += 1);
    inner.device_q.push(job.priority, item);
    None
}

/// Drops a proved partition. One whose a, b and c are pinned is dropped on rayon's global
/// pool: unpinning a 32 GiB partition's takes about a quarter of a second, which would keep
/// the device's lease; its host memory reservation (dropped after the assignment) is returned
/// once the memory is freed.
fn retire(item: DeviceItem) {
    if item.synth.is_pinned() {
        rayon::spawn(move || drop(item));
    } else {
        drop(item);
    }
}

fn finish(inner: &Inner, job: &Job, parts: Vec<Vec<u8>>) {
    let Some(work) = job.work() else { return };
    let t = Instant::now();
    let res = contained("assembling and verifying", || work.finish(parts));
    job.lock().timings.verify = t.elapsed();
    match res {
        Ok(proof) => {
            job.terminate(JobStatus::Completed(proof), |st| {
                inner.metrics.with(&job.kind, |m| {
                    m.completed += 1;
                    Metrics::observe(&mut m.total, st.timings.total);
                })
            });
        }
        Err(e) => inner.fail(job, format!("verification failed: {e}")),
    }
}
