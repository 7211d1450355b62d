//! `cuzk bench scale`: production-size proofs (32 GiB, 64 GiB) of one kind on the chosen
//! backend, from the inputs `cuzk fixtures --sector-size 32GiB` makes. It reports the PCE
//! (size, load or extraction time), then per proof its stage times (the first includes loading
//! the parameters, and their upload where the backend keeps them on the device), the CPU
//! core-seconds it used, the process's peak host memory so far and, on a GPU, the peak device
//! memory in use. Every proof is verified by filecoin-proofs before it counts.
//!
//! The PoSt inputs come from sparse trees and verify (see `cuzk_filecoin::sparse_post`); the
//! parameters are the fixture's INSECURE ones.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use cuzk_filecoin::fixtures::{bind_fixture_dirs, fixture_store};
use cuzk_filecoin::fixtures_scale::ScaleManifest;
use cuzk_filecoin::{plan, prove_plan, ProofKind, ProveOptions};

use crate::backends::{self, BackendArgs, VramWatch};
use crate::stats::{cpu_time, gib, median, peak_rss, secs};

/// Arguments of `cuzk bench scale`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A folder made by `cuzk fixtures --sector-size 32GiB` (or 64GiB); WindowPoSt needs its
    /// parameters (`--window-params`).
    #[arg(long)]
    fixtures: PathBuf,
    /// winning-post or window-post.
    #[arg(long)]
    kind: String,
    /// Proofs, one after the other; the first loads the parameters.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    #[command(flatten)]
    backend: BackendArgs,
}

/// One proof's measurements.
struct Run {
    timings: cuzk_filecoin::StageTimings,
    cpu: Duration,
    peak_rss: u64,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> anyhow::Result<()> {
    ensure!(args.runs >= 1, "--runs must be at least 1");
    let kind = ProofKind::parse(&args.kind)?;
    let dir = &args.fixtures;
    bind_fixture_dirs(dir)?;
    let m = ScaleManifest::load(dir).context("reading the scale manifest")?;
    let req = m.request(dir, kind)?;
    let p = plan(&req)?;
    let store = fixture_store(dir);
    let backend = backends::open(&args.backend).map_err(|e| anyhow::anyhow!(e.message))?;

    let spec = p.circuit().clone();
    let existed = store.pce_path(&spec).exists();
    let t = Instant::now();
    let st = store.pce(&spec)?.stats();
    let pce_time = t.elapsed();
    println!(
        "{kind}, {} sectors, {} GiB sector size, on {} with {} threads",
        req.vanilla_proofs.len(),
        m.sector_size >> 30,
        backend.name(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "PCE: {} constraints, {} nonzeros, {:.2} GiB ({:.2} bytes per nonzero), {} in {:.1} s",
        st.num_constraints,
        st.nnz,
        gib(st.bytes as u64),
        st.bytes_per_nonzero(),
        if existed { "loaded" } else { "extracted" },
        pce_time.as_secs_f64()
    );

    let watch = VramWatch::start(backend.as_ref());
    let mut runs = Vec::new();
    for i in 0..args.runs {
        let cpu0 = cpu_time();
        let out = prove_plan(
            p.as_ref(),
            &store,
            backend.as_ref(),
            ProveOptions::default(),
        )
        .with_context(|| format!("proof {}", i + 1))?;
        ensure!(!out.proof.is_empty(), "empty proof");
        let r = Run {
            timings: out.timings,
            cpu: cpu_time().saturating_sub(cpu0),
            peak_rss: peak_rss(),
        };
        eprintln!("proof {}: {}", i + 1, r.timings);
        runs.push(r);
    }
    let peak_vram = watch.map(VramWatch::finish);

    println!();
    println!("| proof | total (s) | params load (s) | build + witness (s) | PCE eval (s) | H/NTT (s) | MSMs (s) | verify (s) | CPU core-s | peak RSS (GiB) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (i, r) in runs.iter().enumerate() {
        let t = &r.timings;
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.2} |",
            i + 1,
            secs(t.total),
            secs(t.params_load),
            secs(t.circuit_build + t.witness),
            secs(t.pce_eval),
            secs(t.ntt),
            secs(t.msm),
            secs(t.verify),
            r.cpu.as_secs_f64(),
            gib(r.peak_rss)
        );
    }
    if runs.len() > 1 {
        let warm: Vec<Duration> = runs[1..].iter().map(|r| r.timings.total).collect();
        println!(
            "\nMedian of the {} proofs after the first (parameters loaded): {} s; every proof verified by filecoin-proofs.",
            warm.len(),
            secs(median(&warm))
        );
    }
    if let Some(b) = peak_vram {
        println!(
            "Peak device memory in use over the run (parameters included), sampled every millisecond: {:.2} GiB.",
            gib(b)
        );
    }
    Ok(())
}
