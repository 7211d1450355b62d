//! 2 KiB PoRep C2, params warm: our prover (PCE, on the chosen backend) against
//! filecoin-proofs' `seal_commit_phase2` (bellperson on the CPU), on the same C1 output and the
//! same parameters, in one run.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use cuzk_filecoin::fixtures::{bind_fixture_dirs, fixture_store, Manifest};
use cuzk_filecoin::registry::prover_id;
use cuzk_filecoin::{
    decode_c1_for_filecoin_proofs, plan, prove_plan, ProofKind, ProveOptions, SealProof,
};
use filecoin_proofs::SectorShapeBase;
use storage_proofs_core::sector::SectorId;

use crate::backends::{self, BackendArgs, VramWatch};
use crate::stats::{median, secs};

/// Arguments of `cuzk bench porep`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A fixtures folder made by `cuzk fixtures`.
    #[arg(long)]
    fixtures: PathBuf,
    /// Timed runs per side (after one untimed warm-up run each).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Time ours only, back to back (to compare with a peer timed in its own process, such
    /// as tools/peer-supraseal), instead of alternating with filecoin-proofs' CPU prover.
    #[arg(long)]
    ours_only: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> anyhow::Result<()> {
    ensure!(args.runs >= 1, "--runs must be at least 1");
    let dir = &args.fixtures;
    bind_fixture_dirs(dir)?;
    let m = Manifest::load(dir).context("reading the fixture manifest")?;
    let req = m.request(dir, ProofKind::PoRep)?;
    let p = plan(&req)?;
    let store = fixture_store(dir);
    let backend = backends::open(&args.backend).map_err(|e| anyhow::anyhow!(e.message))?;
    let name = backend.name();

    let c1_bytes = std::fs::read(dir.join(&m.porep.c1_json))?;
    let config = SealProof::from_id(m.porep.registered_proof)?.porep_config();
    let (prover, sector) = (prover_id(m.miner_id), SectorId::from(m.porep.sector_number));

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    // Device memory the whole run takes at its peak (resident parameters included).
    let watch = VramWatch::start(backend.as_ref());
    for run in 0..=args.runs {
        let t = Instant::now();
        let out = prove_plan(
            p.as_ref(),
            &store,
            backend.as_ref(),
            ProveOptions::default(),
        )?;
        let d = t.elapsed();
        ensure!(out.proof.len() == 192, "unexpected proof length");
        eprintln!(
            "ours   run {run}: {:.2} s{} ({})",
            d.as_secs_f64(),
            if run == 0 { " (warm-up)" } else { "" },
            out.timings
        );
        if run > 0 {
            ours.push(d);
        }

        if args.ours_only {
            continue;
        }
        let c1 = decode_c1_for_filecoin_proofs::<SectorShapeBase>(&c1_bytes)?;
        let t = Instant::now();
        let proof = filecoin_proofs::seal_commit_phase2(&config, c1, prover, sector)?.proof;
        let d = t.elapsed();
        ensure!(
            proof.len() == 192,
            "unexpected proof length from filecoin-proofs"
        );
        eprintln!(
            "theirs run {run}: {:.2} s{}",
            d.as_secs_f64(),
            if run == 0 { " (warm-up)" } else { "" }
        );
        if run > 0 {
            theirs.push(d);
        }
    }
    let peak_vram = watch.map(VramWatch::finish);
    if args.ours_only {
        let o = median(&ours);
        println!("| proof | ours ({name}, PCE) |");
        println!("|---|---|");
        println!("| 2KiB PoRep C2 | {} s |", secs(o));
        println!(
            "\nMedian of {} timed runs back to back after one warm-up; parameters resident; every proof verified; {} threads.",
            args.runs,
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
        print_peak(peak_vram);
        return Ok(());
    }
    let (o, t): (Duration, Duration) = (median(&ours), median(&theirs));
    println!(
        "| proof | ours ({name}, PCE) | filecoin-proofs seal_commit_phase2 (CPU) | speed-up |"
    );
    println!("|---|---|---|---|");
    println!(
        "| 2KiB PoRep C2 | {} s | {} s | {:.2}x |",
        secs(o),
        secs(t),
        t.as_secs_f64() / o.as_secs_f64()
    );
    println!(
        "\nMedians of {} timed runs per side after one warm-up each; parameters resident; both sides verify their proof; {} threads.",
        args.runs,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    print_peak(peak_vram);
    Ok(())
}

fn print_peak(peak_vram: Option<u64>) {
    if let Some(b) = peak_vram {
        println!(
            "Peak device memory in use during our runs (partitions proved one at a time, parameters resident): {:.2} GiB, sampled every millisecond.",
            crate::stats::gib(b)
        );
    }
}
