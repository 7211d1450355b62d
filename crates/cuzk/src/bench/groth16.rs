//! Circuit-to-proof time on synthetic circuits: ours (PCE warm) against bellperson's CPU
//! prover, on the same circuit, the same parameters and the same machine, in one run.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use bellperson::groth16 as bp;
use blstrs::Bls12;
use cuzk_groth16::synthetic::SyntheticCircuit;
use cuzk_groth16::{
    prove_timed, synthesize_witness, CpuBackend, Parameters, Pce, PointCheck, PreparedVerifyingKey,
};
use ff::Field;
use rand::SeedableRng;

use crate::stats::{median, secs};

/// Arguments of `cuzk bench groth16`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// log2 of the circuit sizes (constraints, input constraints included).
    #[arg(long, value_delimiter = ',', default_values_t = [16u32, 18, 20])]
    sizes: Vec<u32>,
    /// Timed runs per side and size (after one untimed warm-up run each).
    #[arg(long, default_value_t = 3)]
    runs: usize,
}

fn params_path(cache: &Path, log_n: u32) -> PathBuf {
    cache
        .join("bench")
        .join(format!("synthetic-2^{log_n}-insecure-test.params"))
}

/// Parameters from bellperson's generator (insecure: the toxic waste comes from a fixed seed),
/// cached on disk since generation takes minutes at 2^20.
fn load_or_generate(
    cache: &Path,
    log_n: u32,
    circuit: SyntheticCircuit,
) -> anyhow::Result<PathBuf> {
    let path = params_path(cache, log_n);
    if path.exists() {
        return Ok(path);
    }
    std::fs::create_dir_all(path.parent().expect("has a parent"))
        .with_context(|| format!("creating {}", path.display()))?;
    eprintln!(
        "generating test parameters for 2^{log_n} (bellperson, once; cached at {})",
        path.display()
    );
    let t = Instant::now();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed + u64::from(log_n));
    let p = bp::generate_random_parameters::<Bls12, _, _>(circuit, &mut rng)?;
    let tmp = path.with_extension("params.tmp");
    let mut w = BufWriter::new(File::create(&tmp)?);
    p.write(&mut w)?;
    w.into_inner()?.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    eprintln!("  generated in {:.1} s", t.elapsed().as_secs_f64());
    Ok(path)
}

#[derive(Default)]
struct OurRuns {
    total: Vec<Duration>,
    witness: Vec<Duration>,
    eval: Vec<Duration>,
    ntt: Vec<Duration>,
    msm: Vec<Duration>,
}

/// Runs the benchmark and prints a markdown table.
pub fn run(args: &Args, cache: &Path) -> anyhow::Result<()> {
    ensure!(args.runs >= 1, "--runs must be at least 1");
    ensure!(
        args.sizes.iter().all(|s| (4..=26).contains(s)),
        "--sizes must lie in 4..=26"
    );
    let threads = rayon_threads();
    println!("| constraints | ours: witness | ours: PCE eval | ours: NTT | ours: MSM | ours: total | bellperson: total | speed-up | PCE bytes/nonzero |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let backend = CpuBackend::new();
    for &log_n in &args.sizes {
        let circuit = SyntheticCircuit::filling_domain(log_n, 0xc0ffee + u64::from(log_n));
        let path = load_or_generate(cache, log_n, circuit)?;
        let ours_params = Parameters::read_file(&path, PointCheck::OnCurve)?;
        let bp_params = bp::Parameters::<Bls12>::read(BufReader::new(File::open(&path)?), false)?;
        let pvk = PreparedVerifyingKey::new(&ours_params.vk);

        let t = Instant::now();
        let pce = Pce::extract("synthetic", circuit)?;
        let extract = t.elapsed();
        let stats = pce.stats();
        eprintln!(
            "2^{log_n}: {} constraints, {} nonzeros, PCE extracted in {:.2} s",
            stats.num_constraints,
            stats.nnz,
            extract.as_secs_f64()
        );

        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut ours = OurRuns::default();
        for run in 0..=args.runs {
            let t = Instant::now();
            let witness = synthesize_witness(circuit)?;
            let t_w = t.elapsed();
            let pa = pce.evaluate(witness)?;
            let t_e = t.elapsed() - t_w;
            let (r, s) = (
                blstrs::Scalar::random(&mut rng),
                blstrs::Scalar::random(&mut rng),
            );
            let (proof, timings) = prove_timed(&backend, &ours_params, &pa, r, s)?;
            let total = t.elapsed();
            ensure!(
                pvk.verify(&proof, pa.public_inputs())?,
                "our proof failed to verify"
            );
            if run > 0 {
                ours.total.push(total);
                ours.witness.push(t_w);
                ours.eval.push(t_e);
                ours.ntt.push(timings.ntt);
                ours.msm.push(timings.msm);
            }
        }

        let mut theirs = Vec::new();
        let bp_pvk = bp::prepare_verifying_key(&bp_params.vk);
        for run in 0..=args.runs {
            let t = Instant::now();
            let proof = bp::create_random_proof(circuit, &bp_params, &mut rng)?;
            let total = t.elapsed();
            let inputs = pce
                .evaluate(synthesize_witness(circuit)?)?
                .public_inputs()
                .to_vec();
            ensure!(
                bp::verify_proof(&bp_pvk, &proof, &inputs)?,
                "bellperson's proof failed to verify"
            );
            if run > 0 {
                theirs.push(total);
            }
        }

        let (o, b) = (median(&ours.total), median(&theirs));
        println!(
            "| 2^{log_n} | {} | {} | {} | {} | {} | {} | {:.2}x | {:.2} |",
            secs(median(&ours.witness)),
            secs(median(&ours.eval)),
            secs(median(&ours.ntt)),
            secs(median(&ours.msm)),
            secs(o),
            secs(b),
            b.as_secs_f64() / o.as_secs_f64(),
            stats.bytes_per_nonzero()
        );
    }
    println!();
    println!(
        "Medians of {} timed runs per side after one warm-up, {threads} threads, seconds. Parameters in memory on both sides; our PCE extracted before timing.",
        args.runs
    );
    Ok(())
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
