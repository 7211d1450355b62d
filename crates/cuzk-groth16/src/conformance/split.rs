//! Split-MSM checks: [`ProvingBackend::msm_g1_split`] and [`ProvingBackend::msm_g2_split`]
//! against a Pippenger over the dense scalars (or the sum of scalar multiplications at small
//! sizes), for the scalar patterns that break a split MSM: none or every scalar one, the
//! scalar `r - 1`, the 0/1 mix of a Filecoin witness with a small tail, and random scalars;
//! over bases with points at infinity and repeated points.

use std::time::Instant;

use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand::Rng;
use rand_chacha::ChaCha20Rng;

use super::{outcome, point_exponents, random_scalars, Check, Under};
use crate::fixed_base::{fixed_base_g1, fixed_base_g2};
use crate::msm::{g1_affine, g2_affine, G1Base, G2Base};
use crate::split::SplitScalars;

/// The scalar patterns, by name.
const PATTERNS: [&str; 5] = ["zeros", "ones", "r-1", "witness mix", "random"];

/// Scalars of `pattern` (an index into [`PATTERNS`]).
fn pattern_scalars(pattern: usize, n: usize, rng: &mut ChaCha20Rng) -> Vec<Scalar> {
    match pattern {
        0 => vec![Scalar::ZERO; n],
        1 => vec![Scalar::ONE; n],
        2 => vec![-Scalar::ONE; n],
        3 => {
            // A PoRep witness: about 45% zeros, 50% ones, the rest field elements (r - 1
            // among them).
            let mut s = random_scalars(n, rng);
            for x in s.iter_mut() {
                match rng.gen_range(0..100) {
                    0..=44 => *x = Scalar::ZERO,
                    45..=94 => *x = Scalar::ONE,
                    95 => *x = -Scalar::ONE,
                    _ => {}
                }
            }
            s
        }
        _ => random_scalars(n, rng),
    }
}

/// The split-MSM checks at every size: G1 over `g1_sizes`, G2 over `g2_sizes`, each with
/// every pattern over one set of bases.
pub(super) fn split_checks(
    candidate: Under<'_>,
    g1_sizes: &[usize],
    g2_sizes: &[usize],
    naive_limit: usize,
    rng: &mut ChaCha20Rng,
    push: &mut dyn FnMut(Check),
) {
    for &n in g1_sizes {
        let bases: Vec<G1Base> = fixed_base_g1(G1Projective::generator(), &point_exponents(n, rng));
        for (p, name) in PATTERNS.iter().enumerate() {
            let scalars = pattern_scalars(p, n, rng);
            push(check(
                format!("G1 split MSM over {n} points, {name}"),
                &scalars,
                n <= naive_limit,
                |s| candidate.backend.msm_g1_split(candidate.guard, &bases, s),
                || {
                    bases
                        .iter()
                        .zip(&scalars)
                        .fold(G1Projective::identity(), |acc, (b, s)| {
                            acc + g1_affine(b) * s
                        })
                },
                || crate::msm::msm_g1_blst(&bases, &scalars),
            ));
        }
    }
    for &n in g2_sizes {
        let bases: Vec<G2Base> = fixed_base_g2(G2Projective::generator(), &point_exponents(n, rng));
        for (p, name) in PATTERNS.iter().enumerate() {
            let scalars = pattern_scalars(p, n, rng);
            push(check(
                format!("G2 split MSM over {n} points, {name}"),
                &scalars,
                n <= naive_limit,
                |s| candidate.backend.msm_g2_split(candidate.guard, &bases, s),
                || {
                    bases
                        .iter()
                        .zip(&scalars)
                        .fold(G2Projective::identity(), |acc, (b, s)| {
                            acc + g2_affine(b) * s
                        })
                },
                || crate::msm::msm_g2(&bases, &scalars),
            ));
        }
    }
}

/// One check: the candidate on the split scalars against the naive sum (when `naive`) or
/// blst's Pippenger on the dense ones.
fn check<P: Curve + PartialEq>(
    name: String,
    scalars: &[Scalar],
    naive: bool,
    candidate: impl FnOnce(&SplitScalars) -> crate::Result<P>,
    naive_sum: impl FnOnce() -> P,
    pippenger: impl FnOnce() -> P,
) -> Check
where
    P::AffineRepr: PartialEq,
{
    let split = match SplitScalars::from_dense(scalars) {
        Ok(s) => s,
        Err(e) => return outcome(name, Default::default(), Err(e.to_string())),
    };
    let t = Instant::now();
    let got = candidate(&split);
    let elapsed = t.elapsed();
    let result = got.map_err(|e| e.to_string()).and_then(|got| {
        let (want, oracle) = if naive {
            (naive_sum(), "sum of scalar multiplications")
        } else {
            (pippenger(), "blst's Pippenger")
        };
        if got.to_affine() == want.to_affine() {
            Ok(format!(
                "equal to {oracle} ({} ones, {} in the tail)",
                split.ones_count(),
                split.tail_scalars().len()
            ))
        } else {
            Err(format!("differs from {oracle}"))
        }
    });
    outcome(name, elapsed, result)
}
