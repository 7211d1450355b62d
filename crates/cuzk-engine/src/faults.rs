//! Device faults: quarantine, the watchdog for operations that hang, and probing a device
//! back into service.
//!
//! A device fault (an error from the device, a proof that does not verify, an operation
//! past [`EngineConfig::device_timeout`](crate::EngineConfig::device_timeout)) quarantines
//! the device (time a host device's proof spends stopped at the ordinary gate for urgent
//! synthesis does not count toward the deadline): its workers take no more work, and its
//! partitions move to the devices that remain. When no device remains, queued partitions fail with a reason instead of waiting,
//! and submissions are refused. [`Engine::probe_device`] brings a device back when its
//! backend's probe passes. A fallback device (a CPU beside GPUs) takes work only while every
//! other device is quarantined.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::device::{Device, Health};
use crate::engine::{Engine, Inner};
use crate::error::EngineError;
use crate::pipeline::{DeviceItem, InFlight};

impl Inner {
    /// Whether `device` takes work now: healthy, and for a fallback device, no other device
    /// healthy.
    pub(crate) fn takes_work(&self, device: &Device) -> bool {
        device.is_healthy()
            && (!device.is_fallback()
                || !self
                    .devices
                    .iter()
                    .any(|d| !d.is_fallback() && d.is_healthy()))
    }

    /// Whether some device takes work.
    pub(crate) fn any_device_available(&self) -> bool {
        self.devices.iter().any(|d| d.is_healthy())
    }

    /// Whether some device would take `item`.
    pub(crate) fn any_device_for(&self, item: &DeviceItem) -> bool {
        self.devices
            .iter()
            .any(|d| d.is_healthy() && item.excluded.as_deref() != Some(d.info().id.as_str()))
    }

    /// Why no device takes work, naming each device's state.
    pub(crate) fn no_device_reason(&self) -> String {
        let states: Vec<String> = self
            .devices
            .iter()
            .map(|d| match d.health() {
                Health::Healthy => format!("{} healthy", d.info().id),
                Health::Quarantined { reason, .. } => {
                    format!("{} quarantined ({reason})", d.info().id)
                }
            })
            .collect();
        format!("no other healthy device: {}", states.join("; "))
    }

    /// Quarantines `device` for `reason`; when no device is left, fails every job whose
    /// partitions wait for one.
    pub(crate) fn device_fault(&self, device: &Device, reason: &str) {
        device.quarantine(reason.to_owned());
        if self.any_device_available() {
            return;
        }
        let why = self.no_device_reason();
        let stranded = std::cell::RefCell::new(Vec::new());
        self.device_q.retain(|i| {
            stranded.borrow_mut().push(i.job.clone());
            false
        });
        for job in stranded.into_inner() {
            self.fail(&job, format!("partition waiting for a device: {why}"));
        }
    }

    /// One pass of the watchdog: partitions on a device longer than the deadline are given
    /// to another device and the device is quarantined.
    pub(crate) fn watchdog(self: &Arc<Self>) {
        let Some(limit) = self.cfg.device_timeout else {
            return;
        };
        let gate_now = self.ordinary.stopping_time();
        let ran = |r: &crate::device::Running| {
            let paused = r.gate_at_start.map_or(Duration::ZERO, |g| gate_now - g);
            r.started.elapsed().saturating_sub(paused)
        };
        for d in &self.devices {
            let stuck: Vec<_> = d.with_running(|rs| {
                rs.iter_mut()
                    .filter(|r| !r.rescued && ran(r) > limit)
                    .map(|r| {
                        r.rescued = true;
                        (r.job.clone(), r.k, r.synth.clone(), ran(r))
                    })
                    .collect()
            });
            let Some((_, k, _, ran)) = stuck.first() else {
                continue;
            };
            self.device_fault(
                d,
                &format!(
                    "partition {k} ran {:.0} s on it, past engine.device_timeout ({} s)",
                    ran.as_secs_f64(),
                    limit.as_secs()
                ),
            );
            for (job, k, synth, _) in stuck {
                if job.lock().status.is_terminal() {
                    continue;
                }
                let item = DeviceItem {
                    _in_flight: InFlight::new(self),
                    queued_at: Instant::now(),
                    job: job.clone(),
                    k,
                    synth,
                    // The hung operation still holds the partition's memory.
                    _host: None,
                    _pause: None,
                    retried: true,
                    excluded: Some(d.info().id.clone()),
                };
                if self.any_device_for(&item) {
                    self.metrics.with(&job.kind, |m| m.retries += 1);
                    self.device_q.push(job.priority, item);
                } else {
                    self.fail(
                        &job,
                        format!(
                            "partition {k} hung on {}; {}",
                            d.info().id,
                            self.no_device_reason()
                        ),
                    );
                }
            }
        }
    }
}

/// Runs the engine's periodic work until it stops: expiring finished jobs and the watchdog.
pub(crate) fn housekeeping(inner: &Arc<Inner>) {
    while !inner.stopping.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(200));
        inner.purge_finished();
        inner.watchdog();
    }
}

impl Engine {
    /// Probes the device `id` (see [`ProvingBackend::probe`](cuzk_groth16::ProvingBackend::probe))
    /// and returns it to service when the probe passes; its state afterwards. Only a probe
    /// that ran and failed quarantines: a device too busy to probe (a proof holds it) keeps
    /// the state it had, so probing a healthy device at work never takes it out of service.
    pub fn probe_device(&self, id: &str) -> Result<Health, EngineError> {
        let d = self
            .devices()
            .iter()
            .find(|d| d.info().id == id)
            .ok_or_else(|| EngineError::NotFound(format!("device {id}")))?;
        match d.probe() {
            Ok(()) => Ok(Health::Healthy),
            Err(crate::ProbeError::Busy(_)) => Ok(d.health()),
            Err(crate::ProbeError::Failed(e)) => {
                d.quarantine(format!("probe failed: {e}"));
                Ok(d.health())
            }
        }
    }
}
