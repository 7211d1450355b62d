//! `cuzk bench devices`: the engine over every GPU (and simulated devices beside them, if
//! asked): a mixed load of 2 KiB jobs of all four kinds, each proof verified, with per-device
//! busy time and the guard checks; then a steady PoRep stream on the first GPU alone and on
//! all of them (throughput scaling).
//!
//! The GPUs are the ones CUDA enumerates in this process, matched by PCI bus id; the table of
//! CUDA ordinals and bus ids it prints shows how a `CUDA_VISIBLE_DEVICES` set before start
//! mapped them (cuzk itself never reads or writes that variable).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure};
use cuzk_engine::sim::{Faults, SimBackend, SimPhysical};
use cuzk_engine::{Device, Engine, EngineConfig, JobStatus};
use cuzk_filecoin::fixtures::{bind_fixture_dirs, fixture_store, Manifest};
use cuzk_filecoin::{plan, FilecoinWork, ProofKind};

/// Arguments of `cuzk bench devices`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A fixtures folder made by `cuzk fixtures`.
    #[arg(long)]
    fixtures: PathBuf,
    /// GPUs: CUDA ordinals or PCI bus ids, comma-separated (default: every GPU).
    #[arg(long, value_delimiter = ',', conflicts_with = "no_gpus")]
    gpus: Vec<String>,
    /// No GPUs: simulated devices only (binaries without the cuda feature, machines without
    /// a GPU).
    #[arg(long)]
    no_gpus: bool,
    /// Simulated devices beside the GPUs (proving on the CPU, each checking that one prover
    /// at a time is inside it).
    #[arg(long, default_value_t = 0)]
    sim: usize,
    /// Mixed jobs, the four kinds in turn.
    #[arg(long, default_value_t = 100)]
    jobs: usize,
    /// PoRep jobs in the scaling stream (0: skip the scaling run).
    #[arg(long, default_value_t = 40)]
    porep_jobs: usize,
    /// Device workers per device.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Partitions synthesized at once on the CPU pool.
    #[arg(long, default_value_t = 8)]
    synthesis_threads: usize,
}

fn config(args: &Args) -> EngineConfig {
    EngineConfig {
        queue_capacity: 4096,
        synthesis_threads: args.synthesis_threads,
        workers_per_device: args.workers,
        retention: Duration::from_secs(3600),
        ..EngineConfig::default()
    }
}

fn sim_devices(n: usize) -> (Vec<Arc<Device>>, Vec<Arc<SimPhysical>>) {
    let phys: Vec<_> = (0..n)
        .map(|_| SimPhysical::new(Faults::default()))
        .collect();
    let devs = phys
        .iter()
        .enumerate()
        .map(|(i, p)| SimBackend::device(format!("sim:{i}"), 8 << 30, p.clone()))
        .collect();
    (devs, phys)
}

/// Submits `ids` (already named with their work) and waits for all; returns the wall time.
fn run_all(
    engine: &Engine,
    jobs: &[(String, Arc<FilecoinWork>)],
) -> anyhow::Result<(Duration, Vec<cuzk_engine::JobView>)> {
    let t = Instant::now();
    for (id, work) in jobs {
        engine.submit(id, work.clone(), None)?;
    }
    let mut views = Vec::new();
    for (id, _) in jobs {
        views.push(engine.await_job(id, Some(Duration::from_secs(3600)))?);
    }
    Ok((t.elapsed(), views))
}

/// Runs the benchmark and prints markdown tables; fails when a job did not verify, a job was
/// lost or a guard check fired.
pub fn run(args: &Args) -> anyhow::Result<()> {
    ensure!(
        args.workers >= 1 && args.synthesis_threads >= 1,
        "counts must be at least 1"
    );
    #[cfg(feature = "cuda")]
    if !args.no_gpus {
        println!("| CUDA ordinal | PCI bus id | name | VRAM (GiB) |");
        println!("|---|---|---|---|");
        for d in cuzk_cuda::devices()? {
            println!(
                "| {} | {} | {} | {:.1} |",
                d.cuda_ordinal,
                d.pci_bus_id,
                d.name,
                crate::stats::gib(d.total_bytes)
            );
        }
        println!();
    }
    let gpus = if args.no_gpus {
        ensure!(args.sim > 0, "--no-gpus needs --sim N");
        Vec::new()
    } else {
        crate::backends::cuda_engine_devices(&args.gpus, None, true, "--gpus", None)
            .map_err(|e| anyhow::anyhow!(e.message))?
    };
    let (sims, phys) = sim_devices(args.sim);

    let dir = &args.fixtures;
    bind_fixture_dirs(dir)?;
    let m = Manifest::load(dir)?;
    let store = Arc::new(fixture_store(dir));
    let work = |kind| -> anyhow::Result<Arc<FilecoinWork>> {
        let p = plan(&m.request(dir, kind)?)?;
        Ok(Arc::new(FilecoinWork::new(p, &store, true)?))
    };
    for kind in ProofKind::ALL {
        store.params(work(kind)?.plan().circuit())?;
    }

    // The mixed load over every device.
    let devices: Vec<Arc<Device>> = gpus.iter().chain(&sims).cloned().collect();
    let engine = Engine::start(config(args), devices.clone())?;
    let jobs = (0..args.jobs)
        .map(|j| {
            let kind = ProofKind::ALL[j % ProofKind::ALL.len()];
            Ok((format!("mixed-{j}-{kind:?}"), work(kind)?))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (wall, views) = run_all(&engine, &jobs)?;
    let st = engine.status();
    engine.shutdown(Duration::from_secs(10), true);

    let mut by_kind: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut per_device: BTreeMap<String, usize> = BTreeMap::new();
    let (mut failed, mut lost) = (Vec::new(), 0usize);
    for v in &views {
        let e = by_kind.entry(v.kind.clone()).or_default();
        e.0 += 1;
        match &v.status {
            JobStatus::Completed(_) => e.1 += 1,
            s if s.is_terminal() => failed.push(format!("{}: {s:?}", v.id)),
            _ => lost += 1,
        }
        for d in &v.devices {
            *per_device.entry(d.clone()).or_default() += 1;
        }
    }
    println!(
        "mixed load: {} jobs on {} devices ({} GPU, {} simulated), {} workers each, {:.1} s",
        args.jobs,
        devices.len(),
        gpus.len(),
        sims.len(),
        args.workers,
        wall.as_secs_f64()
    );
    println!("\n| kind | jobs | completed and verified |");
    println!("|---|---|---|");
    for (kind, (n, ok)) in &by_kind {
        println!("| {kind} | {n} | {ok} |");
    }
    println!("\n| device | name | jobs it proved partitions of | busy (s) | busy % |");
    println!("|---|---|---|---|---|");
    for d in &st.devices {
        println!(
            "| {} | {} | {} | {:.1} | {:.0} % |",
            d.info.id,
            d.info.name,
            per_device.get(&d.info.id).copied().unwrap_or(0),
            d.busy.as_secs_f64(),
            100.0 * d.busy.as_secs_f64() / wall.as_secs_f64()
        );
    }
    let sim_violations: usize = phys.iter().map(|p| p.violations()).sum();
    println!(
        "\nfailed {}, lost {lost}; simulated devices: {sim_violations} violations",
        failed.len()
    );
    for f in &failed {
        println!("  {f}");
    }
    if !failed.is_empty() || lost > 0 || sim_violations > 0 {
        bail!("the mixed load did not come through clean");
    }
    if let Some(idle) = st.devices.iter().find(|d| d.busy.is_zero()) {
        bail!("{} proved nothing", idle.info.id);
    }

    // Scaling: a PoRep stream on the first GPU, then on every GPU.
    if args.porep_jobs > 0 && !gpus.is_empty() {
        println!("\n| PoRep stream | devices | jobs | wall (s) | proofs/min |");
        println!("|---|---|---|---|---|");
        let mut rates = Vec::new();
        let sets: Vec<(&str, Vec<Arc<Device>>)> = if gpus.len() > 1 {
            vec![
                ("first GPU", vec![gpus[0].clone()]),
                ("all GPUs", gpus.clone()),
            ]
        } else {
            vec![("the only GPU", gpus.clone())]
        };
        for (label, set) in sets {
            let n = set.len();
            let engine = Engine::start(config(args), set)?;
            let jobs = (0..args.porep_jobs)
                .map(|j| Ok((format!("stream-{label}-{j}"), work(ProofKind::PoRep)?)))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let (wall, views) = run_all(&engine, &jobs)?;
            engine.shutdown(Duration::from_secs(10), true);
            if let Some(v) = views
                .iter()
                .find(|v| !matches!(v.status, JobStatus::Completed(_)))
            {
                bail!("{}: {:?}", v.id, v.status);
            }
            let rate = args.porep_jobs as f64 * 60.0 / wall.as_secs_f64();
            rates.push(rate);
            println!(
                "| {label} | {n} | {} | {:.1} | {rate:.2} |",
                args.porep_jobs,
                wall.as_secs_f64()
            );
        }
        if let [one, all] = rates[..] {
            println!("\nscaling, all GPUs / first GPU: {:.2}x", all / one);
        }
    }
    Ok(())
}
