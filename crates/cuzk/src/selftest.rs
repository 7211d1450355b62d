//! `cuzk selftest`: the backend conformance suite against a backend, then 2 KiB Filecoin
//! proofs of all four kinds through it, each verified with filecoin-proofs.

use std::path::PathBuf;

use cuzk_filecoin::fixtures::{bind_fixture_dirs, ensure_fixtures, fixture_store};
use cuzk_filecoin::{plan, prove_plan, ProofKind, ProveOptions, SectorSize};
use cuzk_groth16::conformance::{self, Config};

use crate::backends::{self, BackendArgs};
use crate::progress::Spinner;
use crate::CliError;

/// Arguments of `cuzk selftest`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    backend: BackendArgs,
    /// Small sizes only (seconds on a CPU) instead of the device suite, and no NI-PoRep (13
    /// partitions).
    #[arg(long)]
    quick: bool,
    /// Fixtures folder for the Filecoin proofs (made if missing; default: in the cache).
    #[arg(long)]
    fixtures: Option<PathBuf>,
    /// Skip the Filecoin proofs.
    #[arg(long)]
    no_filecoin: bool,
    /// Instead of the suite: the fault-containment check on a GPU (two handles on one GPU
    /// refused; a faulting kernel mid-work quarantines it and a CPU fallback finishes the
    /// jobs). Breaks the GPU's context for the rest of the process.
    #[arg(long)]
    fault_containment: bool,
    /// Instead of the suite: whole proofs over synthetic circuits of 2^N constraints
    /// (repeatable; 5 to 26), each byte-identical to the CPU backend's (same r and s) and
    /// verified. Insecure parameters are generated on the CPU first: minutes at 2^24.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(conformance::MIN_PROOF_LOG as i64..=26))]
    proof_log: Vec<u32>,
}

/// Runs the self-test; an error when any check fails.
pub fn run(args: &Args, cache: &std::path::Path) -> Result<(), CliError> {
    if args.fault_containment {
        let dir = args
            .fixtures
            .clone()
            .unwrap_or_else(|| cache.join("fixtures-2KiB"));
        return crate::faultcheck::run(&dir, args.backend.device.as_deref());
    }
    let backend = backends::open(&args.backend)?;
    let cfg = if !args.proof_log.is_empty() {
        Config::proofs(args.proof_log.clone())
    } else if args.quick {
        Config::quick()
    } else {
        Config::full()
    };
    println!("conformance suite against backend {}", backend.name());
    let checks = conformance::run(backend.as_ref(), &cfg, &mut |c| {
        println!(
            "{} {:<40} {:>9.3} ms  {}",
            if c.passed { "PASS" } else { "FAIL" },
            c.name,
            c.elapsed.as_secs_f64() * 1e3,
            c.detail
        );
    });
    let mut failed = checks.iter().filter(|c| !c.passed).count();
    let mut total = checks.len();

    if !args.no_filecoin {
        let dir = args
            .fixtures
            .clone()
            .unwrap_or_else(|| cache.join("fixtures-2KiB"));
        bind_fixture_dirs(&dir)?;
        let m = ensure_fixtures(&dir, SectorSize::S2KiB, &Spinner::default())?;
        let store = fixture_store(&dir);
        let mut proofs = vec![
            (
                "2KiB winning-post",
                m.request(&dir, ProofKind::WinningPoSt)?,
            ),
            ("2KiB window-post", m.request(&dir, ProofKind::WindowPoSt)?),
            ("2KiB snap", m.request(&dir, ProofKind::SnapDeals)?),
            ("2KiB porep", m.request(&dir, ProofKind::PoRep)?),
        ];
        if !args.quick {
            proofs.push((
                "2KiB porep NI (aggregated)",
                m.porep_request(&dir, &m.porep_ni)?,
            ));
        }
        for (label, req) in proofs {
            total += 1;
            let p = plan(&req)?;
            match prove_plan(p.as_ref(), &store, backend.as_ref(), ProveOptions::default()) {
                Ok(out) => println!(
                    "PASS {:<40} {:>9.3} ms  {} bytes, verified by filecoin-proofs (NTT {:.1} ms, MSM {:.1} ms)",
                    label,
                    out.timings.total.as_secs_f64() * 1e3,
                    out.proof.len(),
                    out.timings.ntt.as_secs_f64() * 1e3,
                    out.timings.msm.as_secs_f64() * 1e3,
                ),
                Err(e) => {
                    failed += 1;
                    println!("FAIL {label:<40} {e}");
                }
            }
        }
    }
    println!("{} of {total} checks passed", total - failed);
    if failed > 0 {
        return Err(CliError::internal(format!(
            "{failed} self-test checks failed"
        )));
    }
    Ok(())
}
