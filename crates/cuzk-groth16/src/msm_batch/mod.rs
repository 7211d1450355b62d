//! G1 multi-scalar multiplication by Pippenger's method with batch-affine buckets.
//!
//! `sum_i s_i * P_i` is split by scalar:
//! - `s_i = 0`, or `P_i` the identity: skipped;
//! - `s_i = 1`: the bases are summed directly ([`affine::sum_affine`], one batched affine
//!   addition per point), which is most of the work in Groth16's sparse A, B and L queries;
//! - anything else: Pippenger over signed windows of `c` bits ([`digit`]). Each window puts
//!   `±P_i` into bucket `|d|` with batched affine additions ([`buckets::Buckets`]), then
//!   weighs the buckets by the running-sum trick. Windows (and, when there are few windows
//!   for the threads, slices of the points) are independent rayon tasks, each holding one
//!   window's buckets: scratch is `2^(c-1)` affine points per running task, never a copy of
//!   the bases.
//!
//! Besides the buckets, memory is the scalars in canonical form (32 bytes per point, as
//! blst's MSM also needs) and a `u32` index per nonzero scalar.

mod affine;
mod buckets;
#[cfg(test)]
mod tests;

use blstrs::{G1Projective, Scalar};
use group::Group;
use rayon::prelude::*;

use crate::msm::G1Base;
use affine::{sum_affine, Affine};
use buckets::Buckets;

/// A scalar's canonical value, little-endian 64-bit limbs (below r < 2^255).
type Limbs = [u64; 4];

const ONE: Limbs = [1, 0, 0, 0];

/// Scalars are below 2^255; signed windows must cover bit 255 so the top digit never
/// borrows beyond the last window.
const SCALAR_BITS: usize = 256;

/// `sum_i scalars[i] * bases[i]` in G1 with batch-affine Pippenger. The lengths must be
/// equal (and below 2^32).
pub fn msm_g1_batch_affine(bases: &[G1Base], scalars: &[Scalar]) -> G1Projective {
    assert_eq!(
        bases.len(),
        scalars.len(),
        "MSM bases and scalars differ in length"
    );
    assert!(bases.len() <= u32::MAX as usize, "MSM longer than 2^32");
    let split = Split::new(bases, scalars);
    let (ones, rest) = rayon::join(
        || sum_indexed(bases, &split.ones),
        || pippenger(bases, &split.limbs, &split.general),
    );
    ones + rest
}

/// The scalars sorted by how they are handled.
struct Split {
    /// Canonical limbs of every scalar, indexed like the bases.
    limbs: Vec<Limbs>,
    /// Indices with scalar 1 and a finite base.
    ones: Vec<u32>,
    /// Indices with any other nonzero scalar and a finite base.
    general: Vec<u32>,
}

impl Split {
    fn new(bases: &[G1Base], scalars: &[Scalar]) -> Self {
        const CHUNK: usize = 1 << 14;
        let limbs: Vec<Limbs> = scalars.par_iter().map(canonical).collect();
        let parts: Vec<(Vec<u32>, Vec<u32>)> = limbs
            .par_chunks(CHUNK)
            .zip(bases.par_chunks(CHUNK))
            .enumerate()
            .map(|(k, (ls, bs))| {
                let (mut ones, mut general) = (Vec::new(), Vec::new());
                for (j, (l, b)) in ls.iter().zip(bs).enumerate() {
                    let i = (k * CHUNK + j) as u32;
                    if *l == [0; 4] || Affine::from_base(b).is_none() {
                        continue;
                    }
                    if *l == ONE {
                        ones.push(i);
                    } else {
                        general.push(i);
                    }
                }
                (ones, general)
            })
            .collect();
        let (mut ones, mut general) = (Vec::new(), Vec::new());
        for (o, g) in parts {
            ones.extend_from_slice(&o);
            general.extend_from_slice(&g);
        }
        Split {
            limbs,
            ones,
            general,
        }
    }
}

fn canonical(s: &Scalar) -> Limbs {
    let b = s.to_bytes_le();
    std::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes")))
}

/// `sum bases[i]` over `indices` (all finite), in parallel slices.
fn sum_indexed(bases: &[G1Base], indices: &[u32]) -> G1Projective {
    const CHUNK: usize = 1 << 15;
    indices
        .par_chunks(CHUNK)
        .map(|idx| {
            sum_affine(
                idx.iter()
                    .filter_map(|&i| Affine::from_base(&bases[i as usize])),
            )
        })
        .reduce(G1Projective::identity, |a, b| a + b)
}

/// The signed digit of window `w` (bits `w*c .. w*c + c`) of `s`, in `[-2^(c-1), 2^(c-1)]`.
///
/// Digit `d_w = m_w + b_{wc-1} - 2^c * b_{wc+c-1}`, where `m_w` is the window's unsigned value
/// and `b_j` bit `j` of `s` (`b_{-1} = 0`): the `2^c` taken from window `w` is given back to
/// window `w + 1` as its borrow-in bit, so `sum_w d_w 2^(wc) = s` as long as the last window
/// reaches bit 255 (always 0, as `s < r < 2^255`).
#[inline]
fn digit(s: &Limbs, w: usize, c: usize) -> i64 {
    let lo = w * c;
    // c + 1 bits starting at bit lo - 1 (for w = 0, a zero bit shifted in below bit 0).
    let (start, shift_in) = if lo == 0 { (0, 1) } else { (lo - 1, 0) };
    let limb = start / 64;
    let pair = s[limb] as u128 | (s.get(limb + 1).copied().unwrap_or(0) as u128) << 64;
    let bits = ((pair >> (start % 64)) << shift_in) as u64 & ((1u64 << (c + 1)) - 1);
    let borrow = (bits & 1) as i64;
    let m = (bits >> 1) as i64;
    if m >= 1 << (c - 1) {
        m + borrow - (1 << c)
    } else {
        m + borrow
    }
}

/// Window width for `n` points: minimises `windows * (n + 4 * 2^(c-1))`, the bucket
/// additions plus the (projective, about twice as costly, two per bucket) reduction.
///
/// At most 16 bits: 2^15 buckets (3 MiB) is what a core's L2 cache about holds; on a 2-core
/// Xeon at 2^22 points, 18 and 20 bits (15 and 13 windows) measured 25% slower than 16 bits
/// (16 windows), the bucket misses outweighing the windows saved.
fn window_bits(n: usize) -> usize {
    (4..=16)
        .min_by_key(|&c| SCALAR_BITS.div_ceil(c) * (n + 4 * (1usize << (c - 1))))
        .expect("nonempty range")
}

/// Pippenger over the `general` indices.
fn pippenger(bases: &[G1Base], limbs: &[Limbs], general: &[u32]) -> G1Projective {
    if general.is_empty() {
        return G1Projective::identity();
    }
    let c = window_bits(general.len());
    let windows = SCALAR_BITS.div_ceil(c);
    let nbuckets = 1usize << (c - 1);
    // Conflicts in a batch grow with batch / buckets; inversions amortise over the batch.
    let batch = (nbuckets / 16).clamp(32, 2048);
    // Enough tasks to keep every thread busy even when windows are few.
    let threads = rayon::current_num_threads();
    let slices = (2 * threads)
        .div_ceil(windows)
        .min(general.len().div_ceil(4 * nbuckets))
        .max(1);
    let per_slice = general.len().div_ceil(slices);
    let sums: Vec<(usize, G1Projective)> = (0..windows * slices)
        .into_par_iter()
        .map(|t| {
            let (w, k) = (t / slices, t % slices);
            let end = ((k + 1) * per_slice).min(general.len());
            let idx = &general[(k * per_slice).min(end)..end];
            let mut buckets = Buckets::new(nbuckets, batch);
            for &i in idx {
                let d = digit(&limbs[i as usize], w, c);
                if d == 0 {
                    continue;
                }
                let p = Affine::from_base(&bases[i as usize]).expect("general bases are finite");
                if d > 0 {
                    buckets.add((d - 1) as u32, p);
                } else {
                    buckets.add((-d - 1) as u32, p.neg());
                }
            }
            buckets.finish();
            (w, buckets.weighted_sum())
        })
        .collect();
    let mut per_window = vec![G1Projective::identity(); windows];
    for (w, s) in sums {
        per_window[w] += s;
    }
    let mut acc = G1Projective::identity();
    for s in per_window.iter().rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc += s;
    }
    acc
}
