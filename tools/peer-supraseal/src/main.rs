//! `peer-supraseal FIXTURES RUNS`: 2 KiB PoRep C2 through filecoin-proofs' seal_commit_phase2
//! (supraseal's GPU prover), on the C1 output of a `cuzk fixtures` folder; prints each run and
//! the median of the timed runs after one warm-up.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use cuzk_filecoin::fixtures::{bind_fixture_dirs, Manifest};
use cuzk_filecoin::registry::prover_id;
use cuzk_filecoin::{decode_c1_for_filecoin_proofs, SealProof};
use filecoin_proofs::SectorShapeBase;
use storage_proofs_core::sector::SectorId;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().context("usage: peer-supraseal FIXTURES RUNS")?);
    let runs: usize = args.next().unwrap_or_else(|| "3".into()).parse()?;
    bind_fixture_dirs(&dir)?;
    let m = Manifest::load(&dir)?;
    let c1_bytes = std::fs::read(dir.join(&m.porep.c1_json))?;
    let config = SealProof::from_id(m.porep.registered_proof)?.porep_config();
    let (prover, sector) = (prover_id(m.miner_id), SectorId::from(m.porep.sector_number));
    let mut times: Vec<Duration> = Vec::new();
    for run in 0..=runs {
        let c1 = decode_c1_for_filecoin_proofs::<SectorShapeBase>(&c1_bytes)?;
        let t = Instant::now();
        let proof = filecoin_proofs::seal_commit_phase2(&config, c1, prover, sector)?.proof;
        let d = t.elapsed();
        ensure!(proof.len() == 192, "unexpected proof length");
        println!("supraseal run {run}: {:.3} s{}", d.as_secs_f64(), if run == 0 { " (warm-up)" } else { "" });
        if run > 0 {
            times.push(d);
        }
    }
    times.sort();
    println!("supraseal median of {runs}: {:.3} s", times[times.len() / 2].as_secs_f64());
    Ok(())
}
