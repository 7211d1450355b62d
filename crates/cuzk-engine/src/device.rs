//! Devices: each owns its lock, its VRAM budget and its busy-time account.
//!
//! A [`Device`] is one physical device (the CPU counts as one). Workers hold `Arc<Device>`
//! and call [`Device::lock`]; device memory can only be taken through the [`DeviceGuard`]
//! that call returns ([`DeviceGuard::alloc`]), so allocating before locking does not compile,
//! and every allocation is named and counted against the device's budget before anything is
//! allocated. There is no table of locks indexed by number anywhere.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use cuzk_groth16::ProvingBackend;

use crate::error::EngineError;
use crate::memory::{MemoryBudget, Reservation};

/// What identifies a device to operators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Stable id: "cpu", "cuda:<pci bus id>", "sim:<n>".
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Memory the device has in total, bytes.
    pub memory_total: u64,
}

/// One device.
pub struct Device {
    info: DeviceInfo,
    backend: Arc<dyn ProvingBackend>,
    lock: Mutex<()>,
    vram: Arc<MemoryBudget>,
    busy_nanos: AtomicU64,
    current_job: Mutex<Option<(String, String)>>,
}

impl std::fmt::Debug for Device {
    // The backend is a trait object without Debug; the identity is what matters in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Exclusive use of a device. Device memory is allocated through it.
#[derive(Debug)]
pub struct DeviceGuard<'a> {
    device: &'a Device,
    _lock: MutexGuard<'a, ()>,
    since: Instant,
}

/// Device memory counted against the device's budget until dropped.
#[derive(Debug)]
pub struct VramAlloc {
    name: String,
    _reservation: Reservation,
}

impl VramAlloc {
    /// The allocation's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Device {
    /// A device proving with `backend`, with `vram_budget` bytes of device memory to give out.
    pub fn new(info: DeviceInfo, backend: Arc<dyn ProvingBackend>, vram_budget: u64) -> Arc<Self> {
        let vram = MemoryBudget::new(format!("{} VRAM", info.id), vram_budget);
        Arc::new(Device {
            info,
            backend,
            lock: Mutex::new(()),
            vram,
            busy_nanos: AtomicU64::new(0),
            current_job: Mutex::new(None),
        })
    }

    /// The device's identity.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Takes the device's lock, waiting for other workers.
    pub fn lock(&self) -> DeviceGuard<'_> {
        let g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        DeviceGuard {
            device: self,
            _lock: g,
            since: Instant::now(),
        }
    }

    /// Total time some worker held the lock.
    pub fn busy(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.busy_nanos.load(Ordering::Relaxed))
    }

    /// The VRAM budget.
    pub fn vram(&self) -> &Arc<MemoryBudget> {
        &self.vram
    }

    /// The (job id, kind) on the device now.
    pub fn current_job(&self) -> Option<(String, String)> {
        self.current_job
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl DeviceGuard<'_> {
    /// Reserves `bytes` of this device's memory under `name`; an error (before any device
    /// call) when the budget cannot hold it now.
    pub fn alloc(&self, name: &str, bytes: u64) -> Result<VramAlloc, EngineError> {
        match self.device.vram.try_acquire(bytes)? {
            Some(r) => Ok(VramAlloc {
                name: name.to_owned(),
                _reservation: r,
            }),
            None => Err(EngineError::TooLarge(format!(
                "{name}: {bytes} bytes do not fit {} ({} of {} in use)",
                self.device.vram.name(),
                self.device.vram.used(),
                self.device.vram.total()
            ))),
        }
    }

    /// The backend to prove with while the guard is held.
    pub fn backend(&self) -> &dyn ProvingBackend {
        self.device.backend.as_ref()
    }

    /// The device.
    pub fn device(&self) -> &Device {
        self.device
    }

    pub(crate) fn set_job(&self, job: Option<(String, String)>) {
        *self
            .device
            .current_job
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = job;
    }
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        self.set_job(None);
        self.device
            .busy_nanos
            .fetch_add(self.since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}
