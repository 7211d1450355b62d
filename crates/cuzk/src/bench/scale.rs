//! `cuzk bench scale`: production-size proofs (32 GiB, 64 GiB) of one kind on the chosen
//! backend, from the inputs `cuzk fixtures --sector-size 32GiB` makes. It reports the PCE
//! (size, load or extraction time), then per proof its stage times (the first includes loading
//! the parameters, and their upload where the backend keeps them on the device), the CPU
//! core-seconds it used, the process's peak host memory so far and, on a GPU, the peak device
//! memory in use. Every proof is verified by filecoin-proofs before it counts.
//!
//! The PoSt inputs come from sparse trees and verify (see `cuzk_filecoin::sparse_post`); the
//! parameters are the fixture's INSECURE ones.
//!
//! PoRep and SnapDeals inputs at these sizes are TIMING ONLY (`cuzk_filecoin::timing_inputs`:
//! the real shape with random values) and are proved against random-point parameters of the
//! circuit's exact sizes: nothing is verified, and every line of the report says so. Their
//! table has one row per partition.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use cuzk_filecoin::fixtures::{bind_fixture_dirs, fixture_store};
use cuzk_filecoin::fixtures_scale::ScaleManifest;
use cuzk_filecoin::{
    plan, plan_for_timing, prove_partition_range, prove_plan, FilecoinWork, ProofKind, ProveOptions,
};

use super::scale_stream::{self, LABEL};
use crate::backends::{self, BackendArgs, VramWatch};
use crate::stats::{cpu_time, gib, median, peak_rss, secs};

/// Arguments of `cuzk bench scale`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A folder made by `cuzk fixtures --sector-size 32GiB` (or 64GiB); WindowPoSt needs its
    /// parameters (`--window-params`); porep and snap are timing only.
    #[arg(long)]
    fixtures: PathBuf,
    /// winning-post, window-post, or (timing only) porep or snap.
    #[arg(long)]
    kind: String,
    /// Proofs, one after the other; the first loads the parameters (porep and snap: 0 runs
    /// only the stream).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// porep and snap: then a stream of this many proofs through the engine (proofs per
    /// hour, device busy), and WinningPoSt latency idle and under that stream.
    #[arg(long, default_value_t = 0)]
    stream: usize,
    /// porep and snap: prove only the first N partitions of each proof (0: all), so a
    /// device call times a few partitions of a large proof.
    #[arg(long, default_value_t = 0)]
    partitions: usize,
    /// With --stream: partitions synthesized at once.
    #[arg(long, default_value_t = 2)]
    synthesis_threads: usize,
    /// With --stream: WinningPoSt proofs timed idle and under load (0: none).
    #[arg(long, default_value_t = 3)]
    winning_runs: usize,
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
    let kind = ProofKind::parse(&args.kind)?;
    let dir = &args.fixtures;
    bind_fixture_dirs(dir)?;
    let m = ScaleManifest::load(dir).context("reading the scale manifest")?;
    if matches!(kind, ProofKind::PoRep | ProofKind::SnapDeals) {
        return timing_only(args, kind, &m);
    }
    ensure!(args.runs >= 1, "--runs must be at least 1");
    ensure!(
        args.stream == 0,
        "--stream is for the timing-only kinds (porep, snap)"
    );
    let req = m.request(dir, kind)?;
    let p = plan(&req)?;
    let store = fixture_store(dir);
    let backend = backends::open(&args.backend).map_err(|e| anyhow::anyhow!(e.message))?;

    println!(
        "{kind}, {} sectors, {} GiB sector size, on {} with {} threads",
        req.vanilla_proofs.len(),
        m.sector_size >> 30,
        backend.name(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    pce_reported(&store, p.circuit())?;

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

/// `bench scale` of a timing-only kind (see the module docs).
fn timing_only(args: &Args, kind: ProofKind, m: &ScaleManifest) -> anyhow::Result<()> {
    ensure!(
        args.runs + args.stream >= 1,
        "nothing to run: give --runs or --stream"
    );
    let dir = &args.fixtures;
    let req = m.timing_request(dir, kind)?;
    let p = plan_for_timing(&req)?;
    ensure!(
        p.timing_only(),
        "the manifest's {kind} input is not marked timing-only"
    );
    let store = fixture_store(dir);
    let backend = backends::open(&args.backend).map_err(|e| anyhow::anyhow!(e.message))?;
    let spec = p.circuit().clone();
    println!(
        "{kind} ({LABEL}: random-value inputs of the real shape, random-point parameters), \
         {} partitions, {} GiB sector size, on {} with {} threads",
        p.partitions(),
        m.sector_size >> 30,
        backend.name(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let pce = pce_reported(&store, &spec)?;
    let st = pce.stats();
    let need = cuzk_groth16::random_point_parameters_bytes(&pce)?;
    let have = cuzk_engine::auto_host_budget(0);
    ensure!(
        need + st.bytes as u64 <= have,
        "the random-point parameters of this circuit take {:.1} GiB of host memory beside the \
         {:.1} GiB PCE; this machine has {:.1} GiB",
        gib(need),
        gib(st.bytes as u64),
        gib(have)
    );
    let t = Instant::now();
    let params = Arc::new(cuzk_groth16::random_point_parameters(&pce, 1)?);
    println!(
        "Random-point parameters of the circuit's sizes (h {}, l {}, a {}, b {} G1 and G2) made \
         in {:.1} s ({LABEL})",
        cuzk_groth16::ParameterSource::h(&*params).len(),
        cuzk_groth16::ParameterSource::l(&*params).len(),
        cuzk_groth16::ParameterSource::a(&*params).len(),
        cuzk_groth16::ParameterSource::b_g1(&*params).len(),
        t.elapsed().as_secs_f64()
    );
    let watch = VramWatch::start(backend.as_ref());
    let mut rows = Vec::new();
    for i in 0..args.runs {
        let cpu0 = cpu_time();
        let t = Instant::now();
        let count = match args.partitions {
            0 => p.partitions(),
            k => k.min(p.partitions()),
        };
        let (proof, parts) = prove_partition_range(
            p.as_ref(),
            params.as_ref(),
            Some(&pce),
            backend.as_ref(),
            0..count,
        )
        .with_context(|| format!("proof {}", i + 1))?;
        ensure!(proof.len() == 192 * count, "short proof");
        eprintln!(
            "proof {} ({LABEL}): {} partitions in {} s",
            i + 1,
            parts.len(),
            secs(t.elapsed())
        );
        let cpu = cpu_time().saturating_sub(cpu0);
        rows.push((t.elapsed(), cpu, peak_rss(), parts));
    }
    let peak_vram = watch.map(VramWatch::finish);
    if !rows.is_empty() {
        report(&rows);
    }
    if let Some(b) = peak_vram {
        println!(
            "Peak device memory in use over the run (parameters included), sampled every millisecond: {:.2} GiB ({LABEL}).",
            gib(b)
        );
    }
    if args.stream == 0 {
        return Ok(());
    }
    let one = cuzk_filecoin::partition_bytes(&params).0;
    let host_budget = cuzk_engine::auto_host_budget(4 << 30).saturating_sub(need + st.bytes as u64);
    ensure!(
        host_budget >= one,
        "a partition in flight takes {:.1} GiB of host memory; {:.1} GiB is left beside the \
         parameters and the PCE",
        gib(one),
        gib(host_budget)
    );
    // WinningPoSt beside the stream where the folder has its parameters.
    let winning = match m.request(dir, ProofKind::WinningPoSt) {
        Ok(req) if args.winning_runs > 0 => Some((
            Arc::new(FilecoinWork::new(plan(&req)?, &store, true)?),
            args.winning_runs,
        )),
        _ => None,
    };
    scale_stream::run(&scale_stream::Stream {
        backend: &backend,
        work: Arc::new(scale_stream::TimingWork::new(p, params, pce)?),
        jobs: args.stream,
        synthesis_threads: args.synthesis_threads,
        host_budget: host_budget.min(one * (args.synthesis_threads as u64 + 2)),
        winning,
    })
}

/// The circuit's PCE, loaded or extracted, with a line saying which, its size and the time.
fn pce_reported(
    store: &cuzk_filecoin::CircuitStore,
    spec: &cuzk_filecoin::CircuitSpec,
) -> anyhow::Result<Arc<cuzk_groth16::Pce>> {
    let existed = store.pce_path(spec).exists();
    let t = Instant::now();
    let pce = store.pce(spec)?;
    let st = pce.stats();
    println!(
        "PCE: {} constraints, {} nonzeros, {:.2} GiB ({:.2} bytes per nonzero), {} in {:.1} s",
        st.num_constraints,
        st.nnz,
        gib(st.bytes as u64),
        st.bytes_per_nonzero(),
        if existed { "loaded" } else { "extracted" },
        t.elapsed().as_secs_f64()
    );
    Ok(pce)
}

/// The sequential runs' tables: one row per partition, then one per proof.
type Row = (Duration, Duration, u64, Vec<cuzk_filecoin::StageTimings>);

fn report(rows: &[Row]) {
    println!();
    println!("| proof | partition | total (s) | build + witness (s) | PCE eval (s) | H/NTT (s) | MSMs (s) | GPU busy (s) | note |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (i, (_, _, _, parts)) in rows.iter().enumerate() {
        for (k, t) in parts.iter().enumerate() {
            println!(
                "| {} | {k} | {} | {} | {} | {} | {} | {} | {LABEL} |",
                i + 1,
                secs(t.total),
                secs(t.circuit_build + t.witness),
                secs(t.pce_eval),
                secs(t.ntt),
                secs(t.msm),
                t.device.map_or("-".into(), |d| secs(d.busy())),
            );
        }
    }
    super::timeline::report(rows.iter().flat_map(|r| r.3.iter()), LABEL);
    println!();
    println!("| proof | total (s) | CPU core-s | peak RSS (GiB) | note |");
    println!("|---|---|---|---|---|");
    for (i, (total, cpu, rss, _)) in rows.iter().enumerate() {
        println!(
            "| {} | {} | {:.1} | {:.2} | {LABEL} |",
            i + 1,
            secs(*total),
            cpu.as_secs_f64(),
            gib(*rss)
        );
    }
}
