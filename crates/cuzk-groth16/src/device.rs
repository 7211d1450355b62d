//! Devices: one object per device, holding its one lock, its one memory ledger and its
//! health.
//!
//! A [`Device`] is both what a backend computes on and what a scheduler schedules. It is
//! used only under its lock: [`Device::lock`] returns the [`DeviceGuard`] that every
//! [`ProvingBackend`](crate::ProvingBackend) operation takes, and every backend checks that
//! the guard is of its own device ([`DeviceGuard::check`]), so work under another device's
//! guard is an error, not a race. Device memory is reserved through the guard
//! ([`DeviceGuard::alloc`]) before it is allocated, in the one ledger that counts real
//! allocations, resident parameters and working memory alike.
//!
//! Which object stands for which hardware is decided where the hardware is known: the CUDA
//! crate keeps one per GPU, found by PCI bus id in a process-wide registry. A CPU backend
//! and a simulated device each make their own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// What identifies a device to operators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Stable id: "cpu", "cuda:<pci bus id>", "sim:<n>".
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Memory the device has in total, bytes.
    pub memory_total: u64,
    /// The CUDA ordinal of a GPU (as the process sees it); `None` for other devices.
    pub ordinal: Option<u32>,
}

/// A device's health: quarantined devices take no work until a probe brings them back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    /// Takes work.
    Healthy,
    /// Took a device fault (an error, a wrong result, a hang) and takes no work.
    Quarantined {
        /// What happened.
        reason: String,
        /// How long ago.
        ago: Duration,
    },
}

/// One device.
#[derive(Debug)]
pub struct Device {
    info: DeviceInfo,
    lock: Mutex<()>,
    budget: u64,
    reserved: Arc<Mutex<u64>>,
    /// Why and since when the device is quarantined.
    quarantine: Mutex<Option<(String, Instant)>>,
    /// Device faults seen (errors, wrong results, hangs).
    faults: AtomicU64,
    busy_nanos: AtomicU64,
    /// When the guard alive now was taken, so busy time counts running work.
    held_since: Mutex<Option<Instant>>,
}

/// Exclusive use of a device: backend operations run under it and device memory is reserved
/// through it.
#[derive(Debug)]
pub struct DeviceGuard<'a> {
    device: &'a Device,
    _lock: MutexGuard<'a, ()>,
    since: Instant,
}

/// Device memory counted in the device's ledger until dropped.
#[derive(Debug)]
pub struct VramReservation {
    reserved: Arc<Mutex<u64>>,
    bytes: u64,
}

impl VramReservation {
    /// Bytes reserved.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for VramReservation {
    fn drop(&mut self) {
        let mut r = self.reserved.lock().unwrap_or_else(|e| e.into_inner());
        *r = r.saturating_sub(self.bytes);
    }
}

impl Device {
    /// A device with `budget` bytes of memory to give out. Callers that stand for physical
    /// hardware keep one per piece of hardware (see the module docs).
    pub fn new(info: DeviceInfo, budget: u64) -> Arc<Self> {
        Arc::new(Device {
            info,
            lock: Mutex::new(()),
            budget,
            reserved: Arc::new(Mutex::new(0)),
            quarantine: Mutex::new(None),
            faults: AtomicU64::new(0),
            busy_nanos: AtomicU64::new(0),
            held_since: Mutex::new(None),
        })
    }

    /// The device's identity.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Takes the device's lock, waiting for other users.
    pub fn lock(&self) -> DeviceGuard<'_> {
        self.guard(self.lock.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Takes the device's lock if nobody holds it.
    pub fn try_lock(&self) -> Option<DeviceGuard<'_>> {
        match self.lock.try_lock() {
            Ok(g) => Some(self.guard(g)),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(self.guard(e.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    fn guard<'a>(&'a self, g: MutexGuard<'a, ()>) -> DeviceGuard<'a> {
        // One instant for both, so busy() never runs ahead of what the guard adds at drop.
        let now = Instant::now();
        *self.held_since.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
        DeviceGuard {
            device: self,
            _lock: g,
            since: now,
        }
    }

    /// The memory budget, bytes.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Memory reserved now, bytes.
    pub fn reserved(&self) -> u64 {
        *self.reserved.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Total time the lock was held, the hold in progress included.
    pub fn busy(&self) -> Duration {
        let held = self.held_since.lock().unwrap_or_else(|e| e.into_inner());
        Duration::from_nanos(self.busy_nanos.load(Ordering::Relaxed))
            + held.map_or(Duration::ZERO, |t| t.elapsed())
    }

    /// The device's health now.
    pub fn health(&self) -> Health {
        match &*self.quarantine.lock().unwrap_or_else(|e| e.into_inner()) {
            None => Health::Healthy,
            Some((reason, at)) => Health::Quarantined {
                reason: reason.clone(),
                ago: at.elapsed(),
            },
        }
    }

    /// Whether the device takes work.
    pub fn is_healthy(&self) -> bool {
        self.quarantine
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// Device faults seen since start.
    pub fn faults(&self) -> u64 {
        self.faults.load(Ordering::Relaxed)
    }

    /// Counts a fault and takes the device out of service; the first reason is kept.
    /// Returns whether it was healthy until now.
    pub fn quarantine(&self, reason: String) -> bool {
        self.faults.fetch_add(1, Ordering::Relaxed);
        let mut q = self.quarantine.lock().unwrap_or_else(|e| e.into_inner());
        if q.is_some() {
            return false;
        }
        *q = Some((reason, Instant::now()));
        true
    }

    /// Returns the device to service (after a probe passed).
    pub fn restore(&self) {
        *self.quarantine.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

impl<'a> DeviceGuard<'a> {
    /// The device.
    pub fn device(&self) -> &'a Device {
        self.device
    }

    /// An error unless this is a guard of `device`: every backend operation checks the guard
    /// it is given against its own device before touching it.
    pub fn check(&self, device: &Device) -> Result<()> {
        if std::ptr::eq(self.device, device) {
            Ok(())
        } else {
            Err(Error::WrongDevice {
                expected: device.info.id.clone(),
                held: self.device.info.id.clone(),
            })
        }
    }

    /// Reserves `bytes` for `what`; an error, before anything is allocated, when the budget
    /// cannot hold it now.
    pub fn alloc(&self, what: &str, bytes: u64) -> Result<VramReservation> {
        let d = self.device;
        let mut reserved = d.reserved.lock().unwrap_or_else(|e| e.into_inner());
        let available = d.budget.saturating_sub(*reserved);
        if bytes > available {
            return Err(Error::TooLarge(format!(
                "{}: {what} needs {bytes} bytes of device memory, {available} of the \
                 {}-byte budget are free",
                d.info.id, d.budget
            )));
        }
        *reserved += bytes;
        Ok(VramReservation {
            reserved: d.reserved.clone(),
            bytes,
        })
    }

    /// Bytes of the budget not reserved now.
    pub fn available(&self) -> u64 {
        self.device.budget.saturating_sub(self.device.reserved())
    }
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        let mut held = self
            .device
            .held_since
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.device
            .busy_nanos
            .fetch_add(self.since.elapsed().as_nanos() as u64, Ordering::Relaxed);
        *held = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(id: &str, budget: u64) -> Arc<Device> {
        Device::new(
            DeviceInfo {
                id: id.into(),
                name: id.into(),
                memory_total: budget,
                ordinal: None,
            },
            budget,
        )
    }

    #[test]
    fn a_guard_of_another_device_is_refused() {
        let (a, b) = (dev("a", 10), dev("b", 10));
        let g = b.lock();
        assert!(g.check(&b).is_ok());
        let e = g.check(&a).unwrap_err().to_string();
        assert!(
            e.contains("for device a") && e.contains("guard of b"),
            "{e}"
        );
    }

    #[test]
    fn reservations_count_until_dropped_and_refuse_past_the_budget() {
        let d = dev("a", 100);
        let g = d.lock();
        let r = g.alloc("x", 60).unwrap();
        assert_eq!(d.reserved(), 60);
        let e = g.alloc("y", 41).unwrap_err().to_string();
        assert!(
            e.contains("y needs 41") && e.contains("40 of the 100-byte"),
            "{e}"
        );
        drop(r);
        assert_eq!(g.available(), 100);
    }

    #[test]
    fn quarantine_keeps_the_first_reason_and_counts_every_fault() {
        let d = dev("a", 1);
        assert!(d.quarantine("first".into()));
        assert!(!d.quarantine("second".into()));
        assert_eq!(d.faults(), 2);
        assert!(matches!(d.health(), Health::Quarantined { reason, .. } if reason == "first"));
        d.restore();
        assert!(d.is_healthy());
    }
}
