//! `cuzk selftest --fault-containment`: on a real GPU, the faults the engine must contain.
//!
//! 1. The negative control: the one GPU opened twice (by ordinal and by PCI bus id) is one
//!    object, a device list naming it twice is refused, an engine over two devices for it
//!    cannot be built, and of two concurrent G1 MSMs on it, the one run under another
//!    device's guard is refused while the one under its own guard matches the CPU.
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
    use cuzk_engine::{Device, Engine, EngineConfig, Health, JobStatus};
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
    match crate::backends::cuda_engine_devices(&twice, None, true, "devices.cuda", None) {
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
    let backend = Arc::new(
        CudaBackend::new(by_bus.clone(), Residency::Auto).map_err(|e| fail(e.to_string()))?,
    );
    foreign_guard_refused(&backend)?;
    let one = Device::new(backend.clone());
    let twin = Device::new(backend.clone());
    let info = one.info().clone();
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
    let cpu = Device::fallback(Arc::new(cuzk_groth16::CpuBackend::new()));
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

/// Two G1 MSMs on the GPU at once, from two threads: one under the GPU's own guard, one under
/// the guard of another device (a CPU backend's). The second must be refused before it
/// touches the GPU; the first must match the CPU.
#[cfg(feature = "cuda")]
fn foreign_guard_refused(backend: &cuzk_cuda::CudaBackend) -> Result<(), CliError> {
    use cuzk_groth16::blstrs::{G1Projective, Scalar};
    use cuzk_groth16::ProvingBackend;
    use ff::Field;
    use group::Group;

    let fail = |m: String| CliError::internal(m);
    let exponents: Vec<Scalar> = (1..=4096u64).map(Scalar::from).collect();
    let bases = cuzk_groth16::fixed_base_g1(G1Projective::generator(), &exponents);
    let scalars: Vec<Scalar> = exponents.iter().map(|e| e.square() + e).collect();
    let other = cuzk_groth16::CpuBackend::new();
    let (own, foreign) = std::thread::scope(|s| {
        let own = s.spawn(|| backend.msm_g1(&backend.device().lock(), &bases, &scalars));
        let foreign = s.spawn(|| backend.msm_g1(&other.device().lock(), &bases, &scalars));
        (own.join(), foreign.join())
    });
    let (Ok(own), Ok(foreign)) = (own, foreign) else {
        return Err(fail("an MSM thread panicked".into()));
    };
    let own = own.map_err(|e| fail(format!("the MSM under the GPU's guard failed: {e}")))?;
    let want = other
        .msm_g1(&other.device().lock(), &bases, &scalars)
        .map_err(|e| fail(e.to_string()))?;
    if own != want {
        return Err(fail("the GPU's MSM differs from the CPU's".into()));
    }
    match foreign {
        Err(e @ cuzk_groth16::Error::WrongDevice { .. }) => {
            println!("PASS a G1 MSM under another device's guard is refused ({e}); the one under the GPU's guard, beside it, matches the CPU");
            Ok(())
        }
        Err(e) => Err(fail(format!(
            "the MSM under another device's guard failed for another reason: {e}"
        ))),
        Ok(_) => Err(fail(
            "an MSM under another device's guard ran on the GPU".into(),
        )),
    }
}

/// Without the cuda feature there is no GPU to fault.
#[cfg(not(feature = "cuda"))]
pub fn run(_fixtures: &Path, _device: Option<&str>) -> Result<(), CliError> {
    Err(CliError::input(
        "--fault-containment needs a binary built with the cuda feature",
    ))
}
