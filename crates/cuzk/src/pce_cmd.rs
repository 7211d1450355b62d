//! `cuzk pce`: extracts a circuit's pre-compiled constraint system (PCE) into a cache folder,
//! or loads the one there, and reports its size. Run it before a daemon's first proof of a
//! circuit so that proof does not wait for the extraction, and to measure PCEs at production
//! sizes. Under `--host-budget` the extraction reserves its memory as it grows and stops with
//! an error naming the budget instead of running the host out of memory.

use std::path::PathBuf;
use std::time::Instant;

use cuzk_engine::MemoryBudget;
use cuzk_filecoin::circuit::CircuitSpec;
use cuzk_filecoin::registry::{ProofKind, SectorSize};
use cuzk_filecoin::CircuitStore;

use crate::stats::{gib, peak_rss};
use crate::CliError;

/// Arguments of `cuzk pce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// porep, snap, window-post or winning-post.
    #[arg(long)]
    kind: String,
    /// 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[arg(long)]
    sector_size: String,
    /// The folder PCEs are kept in (the daemon's `params.cache_dir`).
    #[arg(long)]
    cache_dir: PathBuf,
    /// Host memory the extraction may take, e.g. "16GiB" (default: no limit).
    #[arg(long)]
    host_budget: Option<String>,
}

/// Runs `cuzk pce`.
pub fn run(args: Args) -> Result<(), CliError> {
    let kind = ProofKind::parse(&args.kind)?;
    let size = SectorSize::parse(&args.sector_size)?;
    let spec = CircuitSpec::of(kind, size)?;
    let budget = match &args.host_budget {
        None => None,
        Some(s) => Some(crate::from_curio::bytes(s).ok_or_else(|| {
            CliError::input(format!("--host-budget: {s:?} is not a size like 16GiB"))
        })?),
    };
    let store = |b: Option<u64>| {
        let s = CircuitStore::new(&args.cache_dir, &args.cache_dir);
        match b {
            Some(b) => s.with_budget(MemoryBudget::new("host", b)),
            None => s,
        }
    };
    let path = store(None).pce_path(&spec);
    let existed = path.exists();
    let t = Instant::now();
    let pce = store(budget).pce(&spec)?;
    let took = t.elapsed();
    let st = pce.stats();
    println!(
        "{}: {} constraints, {} nonzeros, {} coefficients; {:.3} GiB in memory ({:.2} bytes per nonzero)",
        spec.identifier,
        st.num_constraints,
        st.nnz,
        st.num_coeffs,
        gib(st.bytes as u64),
        st.bytes_per_nonzero()
    );
    println!(
        "{} in {:.1} s, peak RSS {:.2} GiB; file {}",
        if existed {
            "loaded"
        } else {
            "extracted and saved"
        },
        took.as_secs_f64(),
        gib(peak_rss()),
        path.display()
    );
    if !existed {
        drop(pce);
        let t = Instant::now();
        let again = store(budget).pce(&spec)?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "reloaded from the file in {s:.2} s ({:.2} GiB/s)",
            gib(again.stats().bytes as u64) / s.max(1e-9)
        );
    }
    Ok(())
}
