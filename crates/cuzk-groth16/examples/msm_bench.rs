//! Side-by-side G1 MSM timing: blst's Pippenger (`msm::msm_g1_blst`) against the
//! batch-affine Pippenger (`msm_batch::msm_g1_batch_affine`), on the same inputs in one run.
//!
//! ```text
//! cargo run -p cuzk-groth16 --release --example msm_bench -- [dense:LOG2 | sparse:LOG2]...
//! ```
//!
//! A case suffixed `:new` (`dense:22:new`) runs only the batch-affine MSM, for profiling.
//!
//! `dense` scalars are uniformly random (the H query); `sparse` ones are 51% zero, 47% one and
//! 2% random (the A and L queries). Each case runs each MSM three times, alternating, and
//! prints the medians; the two results are checked equal.

use std::time::{Duration, Instant};

use blstrs::{G1Projective, Scalar};
use cuzk_groth16::msm::{msm_g1_blst, normalize_g1, G1Base};
use cuzk_groth16::msm_batch::msm_g1_batch_affine;
use ff::Field;
use group::Group;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

const CHUNK: usize = 1 << 14;

/// Distinct pseudo-random bases: per chunk, running sums of a few random points.
fn bases(n: usize) -> Vec<G1Base> {
    let points: Vec<G1Projective> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|k| {
            let mut rng = ChaCha8Rng::seed_from_u64(k as u64);
            let seeds: Vec<G1Projective> = (0..8).map(|_| G1Projective::random(&mut rng)).collect();
            let mut acc = G1Projective::random(&mut rng);
            let len = CHUNK.min(n - k * CHUNK);
            (0..len)
                .map(move |_| {
                    acc += seeds[(rng.next_u32() % 8) as usize];
                    acc
                })
                .collect::<Vec<_>>()
        })
        .collect();
    points
        .par_chunks(CHUNK)
        .flat_map_iter(normalize_g1)
        .collect()
}

fn scalars(n: usize, sparse: bool) -> Vec<Scalar> {
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|k| {
            let mut rng = ChaCha8Rng::seed_from_u64(1_000_000 + k as u64);
            let len = CHUNK.min(n - k * CHUNK);
            (0..len)
                .map(|_| {
                    if !sparse {
                        return Scalar::random(&mut rng);
                    }
                    match rng.next_u32() % 100 {
                        0..=50 => Scalar::ZERO,
                        51..=97 => Scalar::ONE,
                        _ => Scalar::random(&mut rng),
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mut cases: Vec<String> = std::env::args().skip(1).collect();
    if cases.is_empty() {
        cases = ["dense:12", "dense:16", "dense:20", "dense:22", "sparse:22"]
            .map(String::from)
            .to_vec();
    }
    println!(
        "threads: rayon {}, blst {}",
        rayon::current_num_threads(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for case in cases {
        let mut parts = case.split(':');
        let kind = parts.next().expect("case is KIND:LOG2");
        let log: u32 = parts
            .next()
            .and_then(|l| l.parse().ok())
            .expect("case is KIND:LOG2");
        let only_new = parts.next() == Some("new");
        let sparse = match kind {
            "dense" => false,
            "sparse" => true,
            _ => panic!("unknown case kind {kind}"),
        };
        let n = 1usize << log;
        let b = bases(n);
        let s = scalars(n, sparse);
        let (mut old, mut new) = (Vec::new(), Vec::new());
        if only_new {
            let t = Instant::now();
            std::hint::black_box(msm_g1_batch_affine(&b, &s));
            println!(
                "{kind:>6} 2^{log}: batch-affine {:8.3} s",
                t.elapsed().as_secs_f64()
            );
            continue;
        }
        for _ in 0..3 {
            let t = Instant::now();
            let want = msm_g1_blst(&b, &s);
            old.push(t.elapsed());
            let t = Instant::now();
            let got = msm_g1_batch_affine(&b, &s);
            new.push(t.elapsed());
            assert_eq!(got, want, "batch-affine MSM disagrees with blst");
        }
        let (old, new) = (median(old), median(new));
        println!(
            "{kind:>6} 2^{log}: blst {:8.3} s   batch-affine {:8.3} s   speedup {:.2}x",
            old.as_secs_f64(),
            new.as_secs_f64(),
            old.as_secs_f64() / new.as_secs_f64()
        );
    }
}
