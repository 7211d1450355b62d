//! Choosing the proving backend from the command line: `--backend cpu|cuda` and
//! `--device SELECTOR` (a CUDA ordinal or PCI bus id). The `cuda` backend exists only in
//! binaries built with the `cuda` feature.

use std::sync::Arc;

use cuzk_groth16::{CpuBackend, ProvingBackend};

use crate::CliError;

/// Which backend proves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// NTT on rayon, MSMs with blst's Pippenger.
    Cpu,
    /// NTT and MSMs on an NVIDIA GPU (binaries built with the `cuda` feature).
    Cuda,
}

/// Backend options shared by the commands that prove.
#[derive(Debug, clap::Args)]
pub struct BackendArgs {
    /// Proving backend.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    pub backend: BackendKind,
    /// GPU to use with --backend cuda: CUDA ordinal or PCI bus id (default: the first).
    #[arg(long)]
    pub device: Option<String>,
    /// Never keep parameters on the GPU between proofs (stream them from host memory).
    #[arg(long)]
    pub no_resident: bool,
    /// Device memory the CUDA backend may use, e.g. "20GiB" to run as a 24 GB card would
    /// (default: free memory at start minus the larger of 1 GiB and 5%).
    #[arg(long, value_name = "SIZE")]
    pub vram_budget: Option<String>,
}

impl BackendArgs {
    /// `--vram-budget` in bytes.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    fn vram_budget(&self) -> Result<Option<u64>, CliError> {
        self.vram_budget
            .as_deref()
            .map(|s| {
                crate::from_curio::bytes(s).ok_or_else(|| {
                    CliError::input(format!("--vram-budget: {s:?} is not a size like 20GiB"))
                })
            })
            .transpose()
    }
}

/// The backend the arguments name.
pub fn open(args: &BackendArgs) -> Result<Arc<dyn ProvingBackend>, CliError> {
    match args.backend {
        BackendKind::Cpu => {
            if args.device.is_some() || args.vram_budget.is_some() || args.no_resident {
                return Err(CliError::input(
                    "--device, --vram-budget and --no-resident apply to --backend cuda only",
                ));
            }
            Ok(Arc::new(CpuBackend::new()))
        }
        BackendKind::Cuda => open_cuda(args).map(|b| b as Arc<dyn ProvingBackend>),
    }
}

#[cfg(feature = "cuda")]
/// The CUDA backend the arguments name, as its own type.
pub fn open_cuda(args: &BackendArgs) -> Result<Arc<cuzk_cuda::CudaBackend>, CliError> {
    use cuzk_cuda::{CudaBackend, CudaDevice, DeviceSelector, Residency};
    let selector: DeviceSelector = match &args.device {
        Some(s) => s
            .parse()
            .map_err(|e| CliError::input(format!("--device: {e}")))?,
        None => {
            let all = cuzk_cuda::devices().map_err(|e| CliError::internal(e.to_string()))?;
            let first = all
                .first()
                .ok_or_else(|| CliError::internal("no usable CUDA device found"))?;
            DeviceSelector::PciBusId(first.pci_bus_id.clone())
        }
    };
    let device = CudaDevice::open(&selector, args.vram_budget()?).map_err(|e| match e {
        cuzk_cuda::CudaError::BadDevice(_) => CliError::input(e.to_string()),
        _ => CliError::internal(e.to_string()),
    })?;
    let residency = if args.no_resident {
        Residency::Never
    } else {
        Residency::Auto
    };
    let i = device.info();
    eprintln!(
        "device {} ({}, ordinal {}, sm_{}{}, {:.1} GiB total, {:.1} GiB free, budget {:.1} GiB, residency {:?})",
        i.pci_bus_id,
        i.name,
        i.cuda_ordinal,
        i.compute_capability.0,
        i.compute_capability.1,
        crate::stats::gib(i.total_bytes),
        crate::stats::gib(i.free_bytes),
        crate::stats::gib(device.budget()),
        residency
    );
    let backend =
        CudaBackend::new(device, residency).map_err(|e| CliError::internal(e.to_string()))?;
    Ok(Arc::new(backend))
}

/// Engine devices for the GPUs `selectors` name (CUDA ordinals or PCI bus ids as the user
/// wrote them; every GPU when empty), each opened by PCI bus id with `budget` bytes of VRAM
/// (None: free memory minus the margin). Two selectors naming one GPU are an error: two
/// devices, two locks, one piece of hardware. `what` names the setting in errors.
/// `fault_drill_at`: test only, the proof on each GPU that first faults it (see
/// [`cuzk_cuda::CudaBackend::inject_fault_at`]).
#[cfg(feature = "cuda")]
pub fn cuda_engine_devices(
    selectors: &[String],
    budget: Option<u64>,
    resident: bool,
    what: &str,
    fault_drill_at: Option<u64>,
) -> Result<Vec<Arc<cuzk_engine::Device>>, CliError> {
    use cuzk_cuda::{CudaBackend, CudaDevice, DeviceSelector, Residency};
    use cuzk_engine::Device;
    let selectors: Vec<DeviceSelector> = if selectors.is_empty() {
        cuzk_cuda::devices()
            .map_err(|e| CliError::internal(e.to_string()))?
            .iter()
            .map(|d| DeviceSelector::PciBusId(d.pci_bus_id.clone()))
            .collect()
    } else {
        selectors
            .iter()
            .map(|s| {
                s.parse()
                    .map_err(|e| CliError::input(format!("{what}: {e}")))
            })
            .collect::<Result<_, _>>()?
    };
    if selectors.is_empty() {
        return Err(CliError::internal("no usable CUDA device was found"));
    }
    let residency = if resident {
        Residency::Auto
    } else {
        Residency::Never
    };
    let mut out: Vec<Arc<Device>> = Vec::new();
    for sel in selectors {
        let dev = CudaDevice::open(&sel, budget).map_err(|e| CliError::input(e.to_string()))?;
        let i = dev.info().clone();
        let id = format!("cuda:{}", i.pci_bus_id);
        if out.iter().any(|d| d.info().id == id) {
            return Err(CliError::input(format!(
                "{what}: {sel} names {} ({}), which is already listed",
                i.pci_bus_id, i.name
            )));
        }
        let total_budget = dev.budget();
        let backend =
            CudaBackend::new(dev, residency).map_err(|e| CliError::internal(e.to_string()))?;
        if let Some(n) = fault_drill_at {
            tracing::warn!(device = %i.pci_bus_id, proof = n, "fault drill: this GPU's proof {n} will break its CUDA context");
            backend.inject_fault_at(n);
        }
        tracing::info!(
            device = %i.pci_bus_id, name = %i.name, ordinal = i.cuda_ordinal,
            vram_total = i.total_bytes, vram_budget = total_budget, ?residency,
            "CUDA device"
        );
        out.push(Device::new(Arc::new(backend)));
    }
    Ok(out)
}

#[cfg(not(feature = "cuda"))]
/// Without the `cuda` feature there are no CUDA devices.
pub fn cuda_engine_devices(
    _selectors: &[String],
    _budget: Option<u64>,
    _resident: bool,
    what: &str,
    _fault_drill_at: Option<u64>,
) -> Result<Vec<Arc<cuzk_engine::Device>>, CliError> {
    Err(CliError::input(format!(
        "{what}: CUDA devices need a cuzk built with the cuda feature"
    )))
}

#[cfg(not(feature = "cuda"))]
/// Without the `cuda` feature there is no CUDA backend.
pub fn open_cuda(_args: &BackendArgs) -> Result<Arc<CpuBackend>, CliError> {
    Err(CliError::input(
        "this cuzk was built without the cuda feature (cargo build --release -p cuzk --features cuda)",
    ))
}

/// Watches a GPU's free memory from a background thread (every millisecond) to find the
/// peak in use while a benchmark runs.
#[derive(Debug)]
pub struct VramWatch {
    stop: Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<u64>>,
    baseline_free: u64,
}

impl VramWatch {
    /// Starts watching the device `backend` runs on, if it is a GPU.
    #[cfg(feature = "cuda")]
    pub fn start(backend: &dyn ProvingBackend) -> Option<Self> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let id = backend.name();
        let pci = id.strip_prefix("cuda:")?;
        // The backend's own device object (no budget asked: it is open already).
        let device =
            cuzk_cuda::CudaDevice::open(&cuzk_cuda::DeviceSelector::PciBusId(pci.to_owned()), None)
                .ok()?;
        let baseline_free = device.mem_info().ok()?.0;
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut min_free = u64::MAX;
            while !s.load(Ordering::Relaxed) {
                if let Ok((free, _)) = device.mem_info() {
                    min_free = min_free.min(free);
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            min_free
        });
        Some(VramWatch {
            stop,
            handle: Some(handle),
            baseline_free,
        })
    }

    /// Without the `cuda` feature there is no GPU to watch.
    #[cfg(not(feature = "cuda"))]
    pub fn start(_backend: &dyn ProvingBackend) -> Option<Self> {
        None
    }

    /// Stops and returns the peak bytes in use above the free memory seen at start.
    pub fn finish(mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let min_free = self
            .handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or(u64::MAX);
        self.baseline_free.saturating_sub(min_free)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(backend: BackendKind) -> BackendArgs {
        BackendArgs {
            backend,
            device: None,
            no_resident: false,
            vram_budget: None,
        }
    }

    #[test]
    fn gpu_options_are_refused_with_the_cpu_backend() {
        assert!(open(&args(BackendKind::Cpu)).is_ok());
        for a in [
            BackendArgs {
                device: Some("0".into()),
                ..args(BackendKind::Cpu)
            },
            BackendArgs {
                vram_budget: Some("20GiB".into()),
                ..args(BackendKind::Cpu)
            },
            BackendArgs {
                no_resident: true,
                ..args(BackendKind::Cpu)
            },
        ] {
            let e = open(&a).err().expect("refused");
            assert!(e.input, "{}", e.message);
            assert!(e.message.contains("--backend cuda only"), "{}", e.message);
        }
    }

    #[test]
    fn vram_budgets_parse_as_sizes() {
        let a = |s: &str| BackendArgs {
            vram_budget: Some(s.into()),
            ..args(BackendKind::Cuda)
        };
        assert_eq!(a("20GiB").vram_budget().unwrap(), Some(20 << 30));
        assert_eq!(args(BackendKind::Cuda).vram_budget().unwrap(), None);
        let e = a("lots").vram_budget().unwrap_err();
        assert!(
            e.input && e.message.contains("--vram-budget"),
            "{}",
            e.message
        );
    }
}
