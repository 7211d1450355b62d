//! `cuzk bench gpu --split`: the split MSM (ones summed by batch addition, Pippenger over the
//! tail) against sppark's Pippenger over every scalar (the path it replaces), on the same
//! resident bases and the same scalars, side by side in one run: dense random scalars, and
//! the 0/1 mix of a Filecoin witness (`--zeros` and `--ones` percent, the rest random;
//! by default the mix measured in a 32 GiB PoRep partition's L query).
//! Pippenger times are wall-clock around one call with the scalars in pageable host memory;
//! split times likewise, with the bitmap and tail in pageable host memory, plus the device's
//! own wall time of the call. Each figure is the median of the timed runs after one warm-up;
//! the two results are compared with each other, and with the CPU's up to 2^22 points.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use blstrs::{G1Affine, G1Projective, Scalar};
use cuzk_cuda::ResidentG1;
use cuzk_groth16::{msm, G1Base, SplitScalars};
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use super::gpu::imp::{ms, random_scalars};
use crate::stats::median;

/// The largest size checked against the CPU's MSM.
const CPU_CHECK: usize = 1 << 22;

/// Scalars with `zeros` and `ones` percent of each (the rest random), as a witness has.
fn witness_mix(n: usize, zeros: f64, ones: f64, seed: u64) -> Vec<Scalar> {
    let mut s = random_scalars(n, seed);
    s.par_chunks_mut(1 << 14).enumerate().for_each(|(k, c)| {
        let mut r = ChaCha20Rng::seed_from_u64(seed ^ 0x5eed ^ k as u64);
        for x in c {
            let roll: f64 = r.gen_range(0.0..100.0);
            if roll < zeros {
                *x = Scalar::from(0);
            } else if roll < zeros + ones {
                *x = Scalar::from(1);
            }
        }
    });
    s
}

/// Runs the comparison for each log2 size over `bases` (at least the largest size).
pub(super) fn run(
    backend: &cuzk_cuda::CudaBackend,
    bases: &[G1Base],
    logs: &[u32],
    runs: usize,
    zeros: f64,
    ones: f64,
) -> anyhow::Result<()> {
    ensure!(
        zeros >= 0.0 && ones >= 0.0 && zeros + ones <= 100.0,
        "--zeros and --ones must be percentages adding up to at most 100"
    );
    let dev = backend.cuda_device();
    println!(
        "\n| G1 MSM, bases resident | points | scalars | sppark Pippenger (ms) | split (ms) | split on the device (ms) | ones | tail | ratio | equal |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &log in logs {
        let n = 1usize << log;
        ensure!(
            n <= bases.len(),
            "2^{log} points: only {} bases",
            bases.len()
        );
        let g = dev.lock();
        let res = ResidentG1::upload(dev, &g, &bases[..n]).context("uploading G1 bases")?;
        let mixes = [
            (
                "dense random".to_string(),
                random_scalars(n, 23 + log as u64),
            ),
            (
                format!("{zeros}% 0, {ones}% 1"),
                witness_mix(n, zeros, ones, 29 + log as u64),
            ),
        ];
        for (label, scalars) in mixes {
            let split = SplitScalars::from_dense(&scalars)?;
            let mut dense_times = Vec::new();
            let mut dense = G1Projective::identity();
            for run in 0..=runs {
                let t = Instant::now();
                dense = res.msm(&g, &scalars)?;
                if run > 0 {
                    dense_times.push(t.elapsed());
                }
            }
            let mut split_times = Vec::new();
            let mut device_times = Vec::new();
            let mut got = G1Projective::identity();
            for run in 0..=runs {
                let t = Instant::now();
                let (p, span) = res.split_msm(dev, &g, &split)?;
                if run > 0 {
                    split_times.push(t.elapsed());
                    device_times.push(Duration::from_secs_f64(f64::from(span.wall) / 1e3));
                }
                got = p;
            }
            let mut equal = got.to_affine() == dense.to_affine();
            if n <= CPU_CHECK {
                let want: G1Affine = msm::msm_g1(&bases[..n], &scalars).to_affine();
                equal &= got.to_affine() == want;
            }
            let (d, s) = (median(&dense_times), median(&split_times));
            println!(
                "| G1 | 2^{log} | {label} | {} | {} | {} | {} | {} | {:.1}x | {equal} |",
                ms(d),
                ms(s),
                ms(median(&device_times)),
                split.ones_count(),
                split.tail_scalars().len(),
                d.as_secs_f64() / s.as_secs_f64().max(1e-9),
            );
            ensure!(equal, "split MSM over 2^{log} points ({label}) differs");
        }
    }
    Ok(())
}
