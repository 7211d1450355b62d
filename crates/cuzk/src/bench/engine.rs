//! The engine on one device (the CPU backend, or a GPU with `--backend cuda`): a steady
//! stream of 2 KiB PoRep jobs with the pipeline on and off (proofs per minute, device busy
//! fraction), and WinningPoSt latency idle and under that load.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure};
use cuzk_engine::{Device, Engine, EngineConfig, JobStatus, Priority};
use cuzk_filecoin::fixtures::{bind_fixture_dirs, fixture_store, Manifest};
use cuzk_filecoin::{plan, FilecoinWork, ProofKind};
use cuzk_groth16::ProvingBackend;

use crate::backends::{self, BackendArgs};
use crate::stats::median;
use cuzk_engine::JobTimings;

/// Arguments of `cuzk bench engine`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A fixtures folder made by `cuzk fixtures`.
    #[arg(long)]
    fixtures: PathBuf,
    /// PoRep jobs in the stream.
    #[arg(long, default_value_t = 4)]
    porep_jobs: usize,
    /// WinningPoSt proofs timed per condition.
    #[arg(long, default_value_t = 3)]
    winning_runs: usize,
    /// Partitions synthesized at once on the CPU pool.
    #[arg(long, default_value_t = 1)]
    synthesis_threads: usize,
    #[command(flatten)]
    backend: BackendArgs,
}

/// The engine's aids to CRITICAL work: pausing ordinary synthesis, holding a device at a
/// yield point for a CRITICAL partition in synthesis.
#[derive(Clone, Copy)]
struct UrgentAids {
    pause: bool,
    hold: bool,
}

impl UrgentAids {
    const ALL: UrgentAids = UrgentAids {
        pause: true,
        hold: true,
    };

    fn label(self) -> &'static str {
        match (self.pause, self.hold) {
            (true, true) => "pause and hold",
            (true, false) => "pause only",
            (false, true) => "hold only",
            (false, false) => "neither",
        }
    }
}

fn engine(
    pipeline: bool,
    aids: UrgentAids,
    backend: &Arc<dyn ProvingBackend>,
    synthesis_threads: usize,
) -> anyhow::Result<Engine> {
    let device = Device::new(backend.clone());
    Ok(Engine::start(
        EngineConfig {
            queue_capacity: 1024,
            synthesis_threads,
            urgent_synthesis_threads: 1,
            workers_per_device: if pipeline { 2 } else { 1 },
            retention: Duration::from_secs(3600),
            host_budget: 12 << 30,
            pipeline,
            pause_for_urgent: aids.pause,
            hold_for_urgent: if aids.hold {
                EngineConfig::default().hold_for_urgent
            } else {
                Duration::ZERO
            },
            ..EngineConfig::default()
        },
        vec![device],
    )?)
}

fn done(engine: &Engine, id: &str) -> anyhow::Result<Duration> {
    Ok(done_timed(engine, id)?.total)
}

/// The timings of job `id` once it completed; an error naming how it ended otherwise.
pub(super) fn done_timed(engine: &Engine, id: &str) -> anyhow::Result<JobTimings> {
    let v = engine.await_job(id, None)?;
    match v.status {
        JobStatus::Completed(_) => Ok(v.timings),
        s => bail!("{id}: {s:?}"),
    }
}

/// A markdown row of per-stage medians.
fn stage_row(label: &str, runs: &[JobTimings]) -> String {
    let m = |f: fn(&JobTimings) -> Duration| {
        median(&runs.iter().map(f).collect::<Vec<_>>()).as_secs_f64()
    };
    format!(
        "| {label} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
        m(|t| t.total),
        m(|t| t.queue_wait),
        m(|t| t.synthesis),
        m(|t| t.device_wait),
        m(|t| t.device),
        m(|t| t.verify)
    )
}

/// Runs the benchmark and prints markdown tables.
pub fn run(args: &Args) -> anyhow::Result<()> {
    ensure!(
        args.porep_jobs >= 1 && args.winning_runs >= 1,
        "counts must be at least 1"
    );
    ensure!(
        args.synthesis_threads >= 1,
        "--synthesis-threads must be at least 1"
    );
    let backend = backends::open(&args.backend).map_err(|e| anyhow::anyhow!(e.message))?;
    let dir = &args.fixtures;
    bind_fixture_dirs(dir)?;
    let m = Manifest::load(dir)?;
    let store = Arc::new(fixture_store(dir));
    let work = |kind| -> anyhow::Result<Arc<FilecoinWork>> {
        let p = plan(&m.request(dir, kind)?)?;
        Ok(Arc::new(FilecoinWork::new(p, &store, true)?))
    };
    // Warm parameters and PCEs once, outside every timed region (and, on a GPU, the device
    // copies of the parameters: one untimed proof of each kind).
    for kind in [ProofKind::PoRep, ProofKind::WinningPoSt] {
        store.params(work(kind)?.plan().circuit())?;
    }
    {
        let e = engine(true, UrgentAids::ALL, &backend, args.synthesis_threads)?;
        for (i, kind) in [ProofKind::PoRep, ProofKind::WinningPoSt]
            .into_iter()
            .enumerate()
        {
            e.submit(&format!("warm{i}"), work(kind)?, None)?;
            done(&e, &format!("warm{i}"))?;
        }
        e.shutdown(Duration::from_secs(5), true);
    }

    println!(
        "backend {}, {} synthesis threads, {} cores\n",
        backend.name(),
        args.synthesis_threads,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| pipeline | PoRep jobs | wall (s) | proofs/min | device busy |");
    println!("|---|---|---|---|---|");
    for pipeline in [true, false] {
        let e = engine(pipeline, UrgentAids::ALL, &backend, args.synthesis_threads)?;
        let t = Instant::now();
        for j in 0..args.porep_jobs {
            e.submit(&format!("p{j}"), work(ProofKind::PoRep)?, None)?;
        }
        for j in 0..args.porep_jobs {
            done(&e, &format!("p{j}"))?;
        }
        let wall = t.elapsed();
        let busy = e.status().devices[0].busy;
        println!(
            "| {} | {} | {:.1} | {:.2} | {:.0} % |",
            if pipeline { "on" } else { "off" },
            args.porep_jobs,
            wall.as_secs_f64(),
            args.porep_jobs as f64 * 60.0 / wall.as_secs_f64(),
            100.0 * busy.as_secs_f64() / wall.as_secs_f64()
        );
        e.shutdown(Duration::from_secs(5), true);
    }

    println!();
    println!(
        "| WinningPoSt latency, median (s) | total | queue wait | synthesis | waiting for the device | device | verify |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut notes = Vec::new();
    for aids in [
        UrgentAids::ALL,
        UrgentAids {
            pause: true,
            hold: false,
        },
        UrgentAids {
            pause: false,
            hold: false,
        },
    ] {
        let mode = aids.label();
        let e = engine(true, aids, &backend, args.synthesis_threads)?;
        let mut idle = Vec::new();
        for r in 0..args.winning_runs {
            let id = format!("w-idle-{r}");
            e.submit(&id, work(ProofKind::WinningPoSt)?, None)?;
            idle.push(done_timed(&e, &id)?);
        }
        let load = args.porep_jobs.max(2);
        for j in 0..load {
            e.submit(
                &format!("load{j}"),
                work(ProofKind::PoRep)?,
                Some(Priority::Normal),
            )?;
        }
        std::thread::sleep(Duration::from_secs(2));
        let mut loaded = Vec::new();
        for r in 0..args.winning_runs {
            let id = format!("w-load-{r}");
            e.submit(&id, work(ProofKind::WinningPoSt)?, None)?;
            loaded.push(done_timed(&e, &id)?);
        }
        // The load must outlast the measurement, or "loaded" was partly idle.
        let unfinished = (0..load)
            .filter(|j| {
                e.await_job(&format!("load{j}"), Some(Duration::ZERO))
                    .is_ok_and(|v| !v.status.is_terminal())
            })
            .count();
        let total = |v: &[JobTimings]| median(&v.iter().map(|t| t.total).collect::<Vec<_>>());
        let (i, l) = (total(&idle), total(&loaded));
        println!("{}", stage_row(&format!("{mode}, idle"), &idle));
        println!(
            "{}",
            stage_row(&format!("{mode}, under PoRep load"), &loaded)
        );
        notes.push(format!(
            "{mode}: ratio loaded/idle {:.2}x ({} runs each; {unfinished} of {load} PoRep jobs still unfinished after the last loaded run)",
            l.as_secs_f64() / i.as_secs_f64(),
            args.winning_runs
        ));
        e.shutdown(Duration::ZERO, true);
    }
    println!();
    for n in notes {
        println!("{n}");
    }
    Ok(())
}
