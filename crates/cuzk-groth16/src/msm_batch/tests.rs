//! Differential tests against blst's Pippenger (`msm::msm_g1_blst`) and a naive sum.

use super::*;
use crate::msm::{g1_base, msm_g1_blst, normalize_g1};
use blstrs::G1Affine;
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use proptest::prelude::*;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_bases(rng: &mut ChaCha8Rng, n: usize) -> Vec<G1Base> {
    // A few random points and their running sums: distinct, cheap, normalised in one batch.
    let seeds: Vec<G1Projective> = (0..8).map(|_| G1Projective::random(&mut *rng)).collect();
    let mut acc = G1Projective::random(&mut *rng);
    let points: Vec<G1Projective> = (0..n)
        .map(|_| {
            acc += seeds[(rng.next_u32() % 8) as usize];
            acc
        })
        .collect();
    normalize_g1(&points)
}

fn neg_base(b: &G1Base) -> G1Base {
    g1_base(&(-crate::msm::g1_affine(b)))
}

fn naive(bases: &[G1Base], scalars: &[Scalar]) -> G1Projective {
    bases
        .iter()
        .zip(scalars)
        .map(|(b, s)| crate::msm::g1_affine(b) * s)
        .sum()
}

fn check(bases: &[G1Base], scalars: &[Scalar]) {
    let want = msm_g1_blst(bases, scalars);
    assert_eq!(msm_g1_batch_affine(bases, scalars), want);
}

#[test]
fn digits_recompose_the_scalar() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scalars: Vec<Scalar> = (0..50).map(|_| Scalar::random(&mut rng)).collect();
    scalars.extend([Scalar::ZERO, Scalar::ONE, -Scalar::ONE, -Scalar::from(2u64)]);
    for s in &scalars {
        let l = canonical(s);
        for c in 4..=20 {
            let mut sum = Scalar::ZERO;
            let mut pow = Scalar::ONE;
            for w in 0..SCALAR_BITS.div_ceil(c) {
                let d = digit(&l, w, c);
                assert!(d.unsigned_abs() <= 1 << (c - 1), "digit out of range");
                let m = Scalar::from(d.unsigned_abs());
                sum += if d < 0 { -m } else { m } * pow;
                for _ in 0..c {
                    pow = pow.double();
                }
            }
            assert_eq!(sum, *s, "c = {c}");
        }
    }
}

#[test]
fn matches_naive_on_tiny_inputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    assert_eq!(msm_g1_batch_affine(&[], &[]), G1Projective::identity());
    for n in 1..6 {
        let bases = random_bases(&mut rng, n);
        let scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        assert_eq!(
            msm_g1_batch_affine(&bases, &scalars),
            naive(&bases, &scalars)
        );
    }
}

#[test]
fn matches_blst_with_edge_cases() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let n = 6000;
    let mut bases = random_bases(&mut rng, n);
    let mut scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    let identity = g1_base(&G1Affine::identity());
    for i in 0..40 {
        scalars[i] = Scalar::ZERO;
        scalars[40 + i] = Scalar::ONE;
        scalars[80 + i] = -Scalar::ONE;
        bases[120 + i] = identity;
        // Repeated bases with repeated scalars: the same bucket in every window, so buckets
        // double; repeated with scalar one: the direct sum doubles.
        bases[200 + i] = bases[199];
        scalars[200 + i] = scalars[199];
        bases[300 + i] = bases[299];
        scalars[300 + i] = Scalar::ONE;
        // A base and its negation with equal scalars cancel in every bucket they share.
        bases[400 + i] = neg_base(&bases[500 + i]);
        scalars[400 + i] = scalars[500 + i];
        bases[600 + i] = neg_base(&bases[700 + i]);
        scalars[600 + i] = Scalar::ONE;
        scalars[700 + i] = Scalar::ONE;
    }
    check(&bases, &scalars);
    check(&bases[..1000], &scalars[..1000]);
    check(&bases[..150], &scalars[..150]);
}

#[test]
fn matches_blst_on_sparse_zero_one_scalars() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for n in [1000, 1 << 15] {
        let bases = random_bases(&mut rng, n);
        let scalars = sparse_scalars(&mut rng, n);
        check(&bases, &scalars);
    }
}

#[test]
fn matches_blst_when_many_points_share_a_bucket() {
    // Equal small scalars send every point to one bucket: deferred additions pile up and
    // spill into projective accumulation.
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let n = 20_000;
    let bases = random_bases(&mut rng, n);
    let scalars: Vec<Scalar> = (0..n)
        .map(|i| Scalar::from(if i % 3 == 0 { 2u64 } else { 3 }))
        .collect();
    check(&bases, &scalars);
    let scalars = vec![-Scalar::from(5u64); n];
    check(&bases, &scalars);
}

#[test]
fn matches_blst_on_dense_random_scalars() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for n in [1 << 10, 1 << 16] {
        let bases = random_bases(&mut rng, n);
        let scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        check(&bases, &scalars);
    }
}

#[test]
fn batched_sum_handles_doubling_and_cancellation() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let bases = random_bases(&mut rng, 3);
    let p = Affine::from_base(&bases[0]).expect("finite");
    let q = Affine::from_base(&bases[1]).expect("finite");
    let p1 = crate::msm::g1_affine(&bases[0]);
    let q1 = crate::msm::g1_affine(&bases[1]);
    // p + p + q + (-q) + p + (-p) paired as (p, p), (q, -q), (p, -p): one doubling and two
    // cancellations in a single batch, then the tail.
    let pts = [p, p, q, q.neg(), p, p.neg()];
    assert_eq!(sum_affine(pts.into_iter()), G1Projective::from(p1).double());
    let many: Vec<Affine> = std::iter::repeat_n(p, 100)
        .chain(std::iter::repeat_n(q, 50))
        .collect();
    assert_eq!(
        sum_affine(many.into_iter()).to_affine(),
        (p1 * Scalar::from(100u64) + q1 * Scalar::from(50u64)).to_affine()
    );
}

/// Groth16's A/L-like scalars: 51% zero, 47% one, 2% uniformly random.
pub(crate) fn sparse_scalars(rng: &mut ChaCha8Rng, n: usize) -> Vec<Scalar> {
    (0..n)
        .map(|_| match rng.next_u32() % 100 {
            0..=50 => Scalar::ZERO,
            51..=97 => Scalar::ONE,
            _ => Scalar::random(&mut *rng),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn matches_blst_on_adversarial_mixes(seed in any::<u64>(), n in 0usize..400, pool in 1usize..12) {
        // Bases drawn from a small pool (with negations and the identity), scalars from a
        // small set plus random ones: collisions in buckets, doublings and cancellations.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut pool_bases = random_bases(&mut rng, pool);
        let negs: Vec<G1Base> = pool_bases.iter().map(neg_base).collect();
        pool_bases.extend(negs);
        pool_bases.push(g1_base(&G1Affine::identity()));
        let small = [Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(2u64), -Scalar::from(2u64)];
        let bases: Vec<G1Base> = (0..n).map(|_| pool_bases[rng.next_u32() as usize % pool_bases.len()]).collect();
        let scalars: Vec<Scalar> = (0..n)
            .map(|_| match rng.next_u32() % 8 {
                k @ 0..=4 => small[k as usize],
                _ => Scalar::random(&mut rng),
            })
            .collect();
        prop_assert_eq!(msm_g1_batch_affine(&bases, &scalars), msm_g1_blst(&bases, &scalars));
    }
}

#[test]
fn msm_g1_dispatch_agrees_with_blst_at_the_threshold() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let n = crate::msm::BATCH_AFFINE_MIN_POINTS;
    let bases = random_bases(&mut rng, n);
    let mut scalars = sparse_scalars(&mut rng, n);
    scalars[0] = -Scalar::ONE;
    assert_eq!(
        crate::msm::msm_g1(&bases, &scalars),
        msm_g1_blst(&bases, &scalars)
    );
    assert_eq!(
        crate::msm::msm_g1(&bases[..n - 1], &scalars[..n - 1]),
        msm_g1_blst(&bases[..n - 1], &scalars[..n - 1])
    );
}
