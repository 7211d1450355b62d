//! Fixed-base scalar multiplication with precomputed window tables.
//!
//! For many scalars times one base point `G`: the scalar is cut into `c`-bit windows and the
//! table holds `d * 2^(c*w) * G` for every window `w` and digit `d`, in affine form, so one
//! multiplication costs about `255 / c` mixed additions and no doublings. `c` is chosen per
//! batch to balance table size against per-scalar work.

use blstrs::{G1Projective, G2Projective, Scalar};
use group::Group;
use rayon::prelude::*;

use crate::msm::{g1_affine, g2_affine, normalize_g1, normalize_g2, G1Base, G2Base};

/// Bits of a scalar of the BLS12-381 group order.
pub const SCALAR_BITS: usize = 255;
const RESULTS_PER_TASK: usize = 1 << 12;

/// The window width minimising `windows * (count + table entries per window)`, for `count`
/// multiplications of one base.
pub fn window_bits(count: usize) -> usize {
    (2..=16)
        .min_by_key(|&c| SCALAR_BITS.div_ceil(c) * (count + (1 << c)))
        .expect("non-empty range")
}

fn digit(bytes: &[u8; 32], bit: usize, c: usize) -> usize {
    // Up to 16 bits starting at `bit`, little-endian.
    let mut v = 0u32;
    for k in 0..3 {
        if let Some(b) = bytes.get(bit / 8 + k) {
            v |= u32::from(*b) << (8 * k);
        }
    }
    ((v >> (bit % 8)) & ((1 << c) - 1)) as usize
}

macro_rules! fixed_base_impl {
    ($name:ident, $table:ident, $proj:ty, $base:ty, $normalize:ident, $to_affine:ident) => {
        /// The window table for `c`-bit windows over 255-bit scalars: entry
        /// `w * (2^c - 1) + d - 1` is `d * 2^(c*w) * base`, in stored (affine) form.
        pub fn $table(base: $proj, c: usize) -> Vec<$base> {
            let windows = SCALAR_BITS.div_ceil(c);
            let per = (1usize << c) - 1;
            let mut window_bases = Vec::with_capacity(windows);
            let mut b = base;
            for _ in 0..windows {
                window_bases.push(b);
                for _ in 0..c {
                    b = b.double();
                }
            }
            let proj: Vec<$proj> = window_bases
                .par_iter()
                .flat_map_iter(|wb| {
                    let mut acc = <$proj>::identity();
                    (0..per).map(move |_| {
                        acc += wb;
                        acc
                    })
                })
                .collect();
            $normalize(&proj)
        }

        /// `scalars[i] * base` for every `i`, in stored (affine) form.
        pub fn $name(base: $proj, scalars: &[Scalar]) -> Vec<$base> {
            if scalars.is_empty() {
                return Vec::new();
            }
            let c = window_bits(scalars.len());
            let windows = SCALAR_BITS.div_ceil(c);
            let per = (1usize << c) - 1;
            let table: Vec<_> = $table(base, c).par_iter().map($to_affine).collect();

            let mut out = vec![<$base>::default(); scalars.len()];
            out.par_chunks_mut(RESULTS_PER_TASK)
                .zip(scalars.par_chunks(RESULTS_PER_TASK))
                .for_each(|(out, scalars)| {
                    let mut proj = Vec::with_capacity(scalars.len());
                    for s in scalars {
                        let bytes = s.to_bytes_le();
                        let mut acc = <$proj>::identity();
                        for w in 0..windows {
                            let d = digit(&bytes, w * c, c);
                            if d != 0 {
                                acc += &table[w * per + d - 1];
                            }
                        }
                        proj.push(acc);
                    }
                    out.copy_from_slice(&$normalize(&proj));
                });
            out
        }
    };
}

fixed_base_impl!(
    fixed_base_g1,
    window_table_g1,
    G1Projective,
    G1Base,
    normalize_g1,
    g1_affine
);
fixed_base_impl!(
    fixed_base_g2,
    window_table_g2,
    G2Projective,
    G2Base,
    normalize_g2,
    g2_affine
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msm::{g1_base, g2_base};
    use ff::Field;
    use group::Curve;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn matches_variable_base_multiplication() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let g = G1Projective::random(&mut rng);
        let h = G2Projective::random(&mut rng);
        for n in [1usize, 7, 300] {
            let mut scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
            scalars[0] = -Scalar::ONE;
            if n > 1 {
                scalars[1] = Scalar::ZERO;
            }
            let got = fixed_base_g1(g, &scalars);
            let got2 = fixed_base_g2(h, &scalars);
            for (i, s) in scalars.iter().enumerate() {
                assert_eq!(got[i], g1_base(&(g * s).to_affine()), "G1 n={n} i={i}");
                assert_eq!(got2[i], g2_base(&(h * s).to_affine()), "G2 n={n} i={i}");
            }
        }
    }

    #[test]
    fn window_choice_grows_with_batch() {
        assert!(window_bits(10) < window_bits(1 << 20));
        assert!(window_bits(1 << 24) <= 16);
    }
}
