//! `cuzk selftest --fault-containment`: on a real GPU, the faults the engine must contain.
//!
//! 1. The negative control: the one GPU opened twice (by ordinal and by PCI bus id) is one
//!    object, a device list naming it twice is refused, and an engine over two devices for it
//!    cannot be built.
//! 2. An engine over the GPU and a CPU fallback proves 2 KiB jobs on the GPU; then a kernel
//!    that faults (an illegal address) breaks the GPU's CUDA context in the middle of the
//!    next proof. The process must live on, the GPU must be quarantined with the CUDA error as
//!    its reason, every job must still complete (verified) on the CPU fallback, and a probe
//!    must keep the broken GPU out.
//!
//! The GPU's context is broken afterwards: run this last, in a process of its own.

use std::path::Path;

use crate::CliError;

/// Runs the check on the first GPU (or the one `device` names).
#[cfg(feature = "cuda")]
pub fn run(fixtures: &Path, device: Option<&str>) -> Result<(), CliError> {
    use std::sync::Arc;
    use std::time::Duration;

    use cuzk_cuda::{CudaBackend, CudaDevice, DeviceSelector, Residency};
    use cuzk_engine::{Device, DeviceInfo, Engine, EngineConfig, Health, JobStatus};
    use cuzk_filecoin::fixtures::{bind_fixture_dirs, ensure_fixtures, fixture_store};
    use cuzk_filecoin::{plan, FilecoinWork, ProofKind, SectorSize};

    use crate::progress::Spinner;

    let fail = |m: String| CliError::internal(m);
    let all = cuzk_cuda::devices().map_err(|e| fail(e.to_string()))?;
    let first = all
        .first()
        .ok_or_else(|| fail("no usable CUDA device found".into()))?;
    let gpu = match device {
        Some(s) => s
            .parse::<DeviceSelector>()
            .map_err(|e| CliError::input(e.to_string()))?,
        None => DeviceSelector::PciBusId(first.pci_bus_id.clone()),
    }
    .find()
    .map_err(|e| CliError::input(e.to_string()))?
    .clone();
    println!(
        "GPU {} ({}, CUDA ordinal {})",
        gpu.pci_bus_id, gpu.name, gpu.cuda_ordinal
    );

    // 1. One GPU, one object; two devices for it refused.
    let by_ordinal = CudaDevice::open(&DeviceSelector::Ordinal(gpu.cuda_ordinal), None)
        .map_err(|e| fail(e.to_string()))?;
    let by_bus = CudaDevice::open(&DeviceSelector::PciBusId(gpu.pci_bus_id.clone()), None)
        .map_err(|e| fail(e.to_string()))?;
    if !Arc::ptr_eq(&by_ordinal, &by_bus) {
        return Err(fail("the GPU opened twice gave two objects".into()));
    }
    println!("PASS opened by ordinal and by bus id: one object (one lock, one ledger)");
    let twice = vec![gpu.cuda_ordinal.to_string(), gpu.pci_bus_id.clone()];
    match crate::backends::cuda_engine_devices(&twice, None, true, "devices.cuda") {
        Err(e) => println!(
            "PASS a device list naming it twice is refused: {}",
            e.message
        ),
        Ok(_) => {
            return Err(fail(
                "a device list naming the GPU twice was accepted".into(),
            ))
        }
    }
    let info = DeviceInfo {
        id: format!("cuda:{}", gpu.pci_bus_id),
        name: gpu.name.clone(),
        memory_total: gpu.total_bytes,
        ordinal: Some(gpu.cuda_ordinal as u32),
    };
    let backend = Arc::new(
        CudaBackend::new(by_bus.clone(), Residency::Auto).map_err(|e| fail(e.to_string()))?,
    );
    let budget = by_bus.budget();
    let one = Device::new(info.clone(), backend.clone(), budget);
    let twin = Device::new(info.clone(), backend.clone(), budget);
    match Engine::start(EngineConfig::default(), vec![one.clone(), twin]) {
        Err(e) => println!("PASS an engine over two devices for it is refused: {e}"),
        Ok(_) => {
            return Err(fail(
                "an engine over two devices for one GPU was built".into(),
            ))
        }
    }

    // 2. A fault in the middle of the work.
    bind_fixture_dirs(fixtures)?;
    let m = ensure_fixtures(fixtures, SectorSize::S2KiB, &Spinner::default())?;
    let store = Arc::new(fixture_store(fixtures));
    let cpu = Device::fallback(
        DeviceInfo {
            id: "cpu".into(),
            name: "CPU fallback".into(),
            memory_total: 0,
            ordinal: None,
        },
        Arc::new(cuzk_groth16::CpuBackend::new()),
        u64::MAX,
    );
    let engine = Engine::start(
        EngineConfig {
            synthesis_threads: 4,
            ..EngineConfig::default()
        },
        vec![one, cpu],
    )
    .map_err(|e| fail(e.to_string()))?;
    engine.set_reclaimer(store.reclaimer());
    let work = |kind| -> Result<Arc<FilecoinWork>, CliError> {
        let p = plan(&m.request(fixtures, kind)?)?;
        Ok(Arc::new(FilecoinWork::new(p, &store, true)?))
    };
    let kinds = [
        ProofKind::WinningPoSt,
        ProofKind::WindowPoSt,
        ProofKind::SnapDeals,
        ProofKind::PoRep,
    ];
    let run = |label: &str, want_device: &str| -> Result<(), CliError> {
        for kind in kinds {
            let id = format!("{label}-{kind}");
            engine
                .submit(&id, work(kind)?, None)
                .map_err(|e| fail(e.to_string()))?;
            let v = engine
                .await_job(&id, Some(Duration::from_secs(900)))
                .map_err(|e| fail(e.to_string()))?;
            match &v.status {
                JobStatus::Completed(p) if v.devices.iter().any(|d| d == want_device) => println!(
                    "PASS {id:<28} {} bytes, verified, proved on {:?} in {:.2} s",
                    p.len(),
                    v.devices,
                    v.timings.total.as_secs_f64()
                ),
                s => {
                    return Err(fail(format!(
                        "{id}: {s:?} on {:?} (expected completed on {want_device})",
                        v.devices
                    )))
                }
            }
        }
        Ok(())
    };
    run("before", &info.id)?;
    backend.inject_fault();
    println!(
        "fault armed: the next proof on {} launches a faulting kernel",
        info.id
    );
    run("after", "cpu")?;
    let gpu_dev = &engine.devices()[0];
    match gpu_dev.health() {
        Health::Quarantined { reason, .. } => {
            println!("PASS {} quarantined: {reason}", info.id)
        }
        Health::Healthy => return Err(fail("the faulted GPU is still healthy".into())),
    }
    match engine
        .probe_device(&info.id)
        .map_err(|e| fail(e.to_string()))?
    {
        Health::Quarantined { reason, .. } => {
            println!("PASS a probe keeps the broken GPU out: {reason}")
        }
        Health::Healthy => return Err(fail("a probe returned the broken GPU to service".into())),
    }
    engine.shutdown(Duration::from_secs(30), false);
    drop(engine);
    drop(backend);
    println!(
        "PASS the process lives on after the fault (resident copies left on the broken context)"
    );
    Ok(())
}

/// Without the cuda feature there is no GPU to fault.
#[cfg(not(feature = "cuda"))]
pub fn run(_fixtures: &Path, _device: Option<&str>) -> Result<(), CliError> {
    Err(CliError::input(
        "--fault-containment needs a binary built with the cuda feature",
    ))
}
