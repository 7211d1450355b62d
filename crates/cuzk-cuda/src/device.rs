//! Devices: enumerated once through the CUDA API, one [`CudaDevice`] per GPU process-wide,
//! each owning the GPU's one [`cuzk_groth16::Device`] (its lock, its VRAM ledger, its health).
//!
//! Every operation of this crate takes that device's [`DeviceGuard`] and checks it is the
//! guard of the device it works on ([`CudaDevice::held`]) before any CUDA call; device memory
//! is reserved through it, so it is counted against the budget first. Devices are matched
//! to what a user wrote by PCI bus id or CUDA ordinal ([`DeviceSelector`]); nothing here reads
//! or writes `CUDA_VISIBLE_DEVICES`. The index handed to the C side is the device's position
//! in sppark's own list (which skips devices it cannot use), found by PCI bus id, never
//! assumed equal to the CUDA ordinal.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};

use cuzk_groth16::{Device, DeviceGuard, DeviceInfo, VramReservation};

use crate::error::CudaError;
use crate::ffi;

/// What the CUDA runtime reports about one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaDeviceInfo {
    /// Position in sppark's device list: the index the C ABI takes.
    pub index: u32,
    /// CUDA runtime ordinal (the numbering `CUDA_VISIBLE_DEVICES`, if set, already applied).
    pub cuda_ordinal: i32,
    /// PCI bus id, `dddd:bb:dd.0`: the same string nvidia-smi prints.
    pub pci_bus_id: String,
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: i32,
    /// Device memory in total, bytes.
    pub total_bytes: u64,
    /// Device memory free when the devices were enumerated, bytes.
    pub free_bytes: u64,
}

fn pci_bus_id(domain: u32, bus: u32, device: u32) -> String {
    format!("{domain:04x}:{bus:02x}:{device:02x}.0")
}

/// Every usable device, enumerated on first call and remembered: the list never changes
/// while the process runs.
pub fn devices() -> Result<&'static [CudaDeviceInfo], CudaError> {
    static DEVICES: OnceLock<Result<Vec<CudaDeviceInfo>, String>> = OnceLock::new();
    DEVICES
        .get_or_init(|| enumerate().map_err(|e| e.to_string()))
        .as_deref()
        .map_err(|e| CudaError::BadDevice(format!("device enumeration failed: {e}")))
}

fn enumerate() -> Result<Vec<CudaDeviceInfo>, CudaError> {
    let mut count = 0u32;
    // SAFETY: `count` is a valid place for the C side to write one u32.
    let status = unsafe { ffi::cuzk_cuda_device_count(&mut count) };
    ffi::check(status, "device count")?;
    (0..count)
        .map(|index| {
            let mut raw = std::mem::MaybeUninit::<ffi::DeviceInfoRaw>::zeroed();
            // SAFETY: `raw` is a zeroed DeviceInfoRaw, laid out as cuzk_device_info_t; the C
            // side fills it (and NUL-terminates the name) or returns an error.
            let raw = unsafe {
                ffi::check(
                    ffi::cuzk_cuda_device_info(index, raw.as_mut_ptr()),
                    "device info",
                )?;
                raw.assume_init()
            };
            let name: Vec<u8> = raw
                .name
                .iter()
                .take_while(|c| **c != 0)
                .map(|c| *c as u8)
                .collect();
            Ok(CudaDeviceInfo {
                index,
                cuda_ordinal: raw.cuda_ordinal,
                pci_bus_id: pci_bus_id(raw.pci_domain, raw.pci_bus, raw.pci_device),
                name: String::from_utf8_lossy(&name).into_owned(),
                compute_capability: (raw.major, raw.minor),
                sm_count: raw.sm_count,
                total_bytes: raw.total_bytes,
                free_bytes: raw.free_bytes,
            })
        })
        .collect()
}

/// How a user names a device in config or on the command line: a PCI bus id
/// (`0000:c1:00.0`, or `c1:00.0` in domain 0) or a CUDA ordinal (`0`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSelector {
    /// PCI bus id, normalised to `dddd:bb:dd.0` lower case.
    PciBusId(String),
    /// CUDA runtime ordinal.
    Ordinal(i32),
}

impl FromStr for DeviceSelector {
    type Err = CudaError;
    fn from_str(s: &str) -> Result<Self, CudaError> {
        let s = s.trim();
        if let Ok(n) = s.parse::<i32>() {
            if n >= 0 {
                return Ok(DeviceSelector::Ordinal(n));
            }
        }
        let bad = || {
            CudaError::BadDevice(format!(
                "{s:?} is neither a CUDA ordinal nor a PCI bus id like 0000:c1:00.0"
            ))
        };
        let parts: Vec<&str> = s.split(':').collect();
        let (domain, bus, devfn) = match parts.as_slice() {
            [d, b, f] => (*d, *b, *f),
            [b, f] => ("0", *b, *f),
            _ => return Err(bad()),
        };
        let dev = devfn.split('.').next().ok_or_else(bad)?;
        let hex = |x: &str| u32::from_str_radix(x, 16).map_err(|_| bad());
        Ok(DeviceSelector::PciBusId(pci_bus_id(
            hex(domain)?,
            hex(bus)?,
            hex(dev)?,
        )))
    }
}

impl fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSelector::PciBusId(id) => f.write_str(id),
            DeviceSelector::Ordinal(n) => write!(f, "{n}"),
        }
    }
}

impl DeviceSelector {
    /// The device this selector names.
    pub fn find(&self) -> Result<&'static CudaDeviceInfo, CudaError> {
        let all = devices()?;
        all.iter()
            .find(|d| match self {
                DeviceSelector::PciBusId(id) => &d.pci_bus_id == id,
                DeviceSelector::Ordinal(n) => d.cuda_ordinal == *n,
            })
            .ok_or_else(|| {
                let known: Vec<String> = all
                    .iter()
                    .map(|d| format!("{} (ordinal {}, {})", d.pci_bus_id, d.cuda_ordinal, d.name))
                    .collect();
                CudaError::BadDevice(format!(
                    "{self} matches no usable CUDA device; found: [{}]",
                    known.join(", ")
                ))
            })
    }
}

/// Memory kept free beyond the budget by default: the larger of 1 GiB and 5% of the device.
pub fn default_margin(total_bytes: u64) -> u64 {
    (1u64 << 30).max(total_bytes / 20)
}

/// The GPUs open in this process (see [`CudaDevice::open`]).
static OPEN: Mutex<Vec<std::sync::Weak<CudaDevice>>> = Mutex::new(Vec::new());

/// One GPU: its CUDA identity and its one device object (lock, VRAM ledger, health).
#[derive(Debug)]
pub struct CudaDevice {
    info: CudaDeviceInfo,
    hw: Arc<Device>,
}

/// A guard checked to be of the device an operation works on: what every operation of this
/// crate runs under.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held<'a> {
    device: &'a CudaDevice,
    guard: &'a DeviceGuard<'a>,
}

impl CudaDevice {
    /// Opens the device `selector` names, with `budget` bytes of device memory to give out
    /// (None: free memory at enumeration minus [`default_margin`]). A budget above the
    /// device's free memory is an error.
    ///
    /// One object per physical GPU, process-wide: opening a GPU that is open already (by bus
    /// id or by ordinal) returns the same object, with its one lock and one budget, so two
    /// handles on one GPU cannot be built. Asking it for another budget is an error.
    pub fn open(selector: &DeviceSelector, budget: Option<u64>) -> Result<Arc<Self>, CudaError> {
        let info = selector.find()?.clone();
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|d| d.strong_count() > 0);
        if let Some(d) = open
            .iter()
            .filter_map(|d| d.upgrade())
            .find(|d| d.info.pci_bus_id == info.pci_bus_id)
        {
            return match budget {
                Some(b) if b != d.hw.budget() => Err(CudaError::BadArgument(format!(
                    "{} is open already with a VRAM budget of {} bytes, not {b}",
                    info.pci_bus_id,
                    d.hw.budget()
                ))),
                _ => Ok(d),
            };
        }
        let total = match budget {
            Some(b) if b > info.free_bytes => {
                return Err(CudaError::BadArgument(format!(
                    "VRAM budget {b} bytes for {} exceeds its {} free bytes",
                    info.pci_bus_id, info.free_bytes
                )))
            }
            Some(b) => b,
            None => info
                .free_bytes
                .saturating_sub(default_margin(info.total_bytes)),
        };
        let hw = Device::new(
            DeviceInfo {
                id: format!("cuda:{}", info.pci_bus_id),
                name: info.name.clone(),
                memory_total: info.total_bytes,
                ordinal: u32::try_from(info.cuda_ordinal).ok(),
            },
            total,
        );
        let d = Arc::new(CudaDevice { info, hw });
        open.push(Arc::downgrade(&d));
        Ok(d)
    }

    /// Every usable device, each with the default budget.
    pub fn open_all() -> Result<Vec<Arc<Self>>, CudaError> {
        devices()?
            .iter()
            .map(|d| CudaDevice::open(&DeviceSelector::PciBusId(d.pci_bus_id.clone()), None))
            .collect()
    }

    /// The device's identity.
    pub fn info(&self) -> &CudaDeviceInfo {
        &self.info
    }

    /// The GPU's one device object: its lock, its VRAM ledger, its health.
    pub fn hardware(&self) -> &Arc<Device> {
        &self.hw
    }

    /// Takes the device's lock, waiting for other users.
    pub fn lock(&self) -> DeviceGuard<'_> {
        self.hw.lock()
    }

    /// The budget in bytes.
    pub fn budget(&self) -> u64 {
        self.hw.budget()
    }

    /// Bytes reserved now.
    pub fn reserved(&self) -> u64 {
        self.hw.reserved()
    }

    /// `guard`, checked to be this device's (an error otherwise, before any CUDA call).
    pub(crate) fn held<'a>(&'a self, guard: &'a DeviceGuard<'a>) -> Result<Held<'a>, CudaError> {
        guard.check(&self.hw)?;
        Ok(Held {
            device: self,
            guard,
        })
    }

    /// Hands memory the CUDA pool keeps after frees back to the driver.
    pub fn trim(&self, guard: &DeviceGuard<'_>) -> Result<(), CudaError> {
        let h = self.held(guard)?;
        // SAFETY: the index came from enumeration; the C side checks it again.
        ffi::check(unsafe { ffi::cuzk_cuda_trim(h.index()) }, "trim")
    }

    /// Free and total device memory as the driver reports them now.
    pub fn mem_info(&self) -> Result<(u64, u64), CudaError> {
        let (mut free, mut total) = (0u64, 0u64);
        // SAFETY: two valid places for u64 results.
        let status = unsafe { ffi::cuzk_cuda_mem_info(self.info.index, &mut free, &mut total) };
        ffi::check(status, "memory info")?;
        Ok((free, total))
    }
}

impl<'a> Held<'a> {
    /// The device.
    pub(crate) fn device(&self) -> &'a CudaDevice {
        self.device
    }

    /// Reserves `bytes` for `what`; an error, before any CUDA call, when the budget cannot
    /// hold it now.
    pub(crate) fn alloc(&self, what: &str, bytes: u64) -> Result<VramReservation, CudaError> {
        Ok(self.guard.alloc(what, bytes)?)
    }

    /// Bytes of the budget not reserved now.
    pub(crate) fn available(&self) -> u64 {
        self.guard.available()
    }

    /// The guard.
    pub(crate) fn guard(&self) -> &'a DeviceGuard<'a> {
        self.guard
    }

    /// The index the C ABI takes for this device.
    pub(crate) fn index(&self) -> u32 {
        self.device.info.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse_ordinals_and_bus_ids() {
        assert_eq!(
            "3".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Ordinal(3)
        );
        assert_eq!(
            "0000:C1:00.0".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::PciBusId("0000:c1:00.0".into())
        );
        assert_eq!(
            "c1:00.0".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::PciBusId("0000:c1:00.0".into())
        );
        for bad in ["", "-1", "gpu0", "1:2:3:4", "zz:00.0"] {
            assert!(bad.parse::<DeviceSelector>().is_err(), "{bad:?} accepted");
        }
    }
}
