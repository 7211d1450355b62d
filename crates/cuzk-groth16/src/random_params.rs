//! Parameters of a circuit's exact query sizes whose points are random: for timing the
//! prover where real parameters cannot be had (production-size PoRep and SnapDeals, whose
//! parameters are 10s of GB to generate). A proof made with them is well formed but
//! verifies against no key anyone holds; callers must label every figure "timing only".
//!
//! The points of one query form an arithmetic progression `P + iQ` with `P` and `Q` drawn
//! from the seed: no two are equal and none is the identity, so an MSM over them takes the
//! general path, as over real parameters, and a point costs one addition (not a scalar
//! multiplication) to make. In G1 (most of the points: 427M for a 32 GiB PoRep partition) the
//! progression runs in blocks `A_k + T_j` of a shared table `T_j = jQ` and one start
//! `A_k = P + kRQ` per block of `R`, every addition affine with the block's denominators
//! inverted together: about six field multiplications a point, written in place in
//! parallel.

use blstrs::{Fp, Fp2};
use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand::SeedableRng;
use rayon::prelude::*;

use crate::msm::{G1Base, G2Base};
use crate::pce::Pce;
use crate::srs::{Parameters, VerifyingKey};
use crate::Domain;
use crate::Result;

/// Points per parallel run of the progression.
const RUN: usize = 1 << 14;

/// Host bytes [`random_point_parameters`] allocates for `pce`'s circuit (the points; the
/// verifying key aside).
pub fn random_point_parameters_bytes(pce: &Pce) -> Result<u64> {
    let n = Domain::for_size(pce.num_constraints())?.size();
    let d = pce.density();
    let g1 = (n - 1) + pce.num_aux() + pce.num_inputs() + d.a_aux.count();
    let b = d.b_input.count() + d.b_aux.count();
    let g1_bytes = size_of::<G1Base>() as u64;
    Ok((g1 + b) as u64 * g1_bytes + b as u64 * size_of::<G2Base>() as u64)
}

/// Parameters with the query sizes `pce`'s circuit needs (H: domain - 1; L: aux variables;
/// A and B: the variables the densities mark; IC: inputs), filled with random points from
/// `seed` (see the module docs). NOT a trusted setup: for timing only.
pub fn random_point_parameters(pce: &Pce, seed: u64) -> Result<Parameters> {
    let n = Domain::for_size(pce.num_constraints())?.size();
    let ni = pce.num_inputs();
    let d = pce.density();
    let a = ni + d.a_aux.count();
    let b = d.b_input.count() + d.b_aux.count();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut g1 = |len: usize| -> Vec<G1Base> {
        let p = G1Projective::random(&mut rng);
        let q = G1Projective::random(&mut rng);
        block_progression(p, q, len, crate::msm::g1_base)
    };
    let h = g1(n - 1);
    let l = g1(pce.num_aux());
    let a = g1(a);
    let b_g1 = g1(b);
    let ic = g1(ni).iter().map(crate::msm::g1_affine).collect();
    let p2 = G2Projective::random(&mut rng);
    let q2 = G2Projective::random(&mut rng);
    let b_g2: Vec<G2Base> = block_progression(p2, q2, b, crate::msm::g2_base);
    let g1r = |rng: &mut rand_chacha::ChaCha8Rng| G1Projective::random(rng).to_affine();
    let g2r = |rng: &mut rand_chacha::ChaCha8Rng| G2Projective::random(rng).to_affine();
    let vk = VerifyingKey {
        alpha_g1: g1r(&mut rng),
        beta_g1: g1r(&mut rng),
        beta_g2: g2r(&mut rng),
        gamma_g2: g2r(&mut rng),
        delta_g1: g1r(&mut rng),
        delta_g2: g2r(&mut rng),
        ic,
    };
    Ok(Parameters::new(vk, h, l, a, b_g1, b_g2))
}

/// A stored base's affine coordinates, in G1 (over Fp) or G2 (over Fp2).
trait Coords: Copy + Default + Send + Sync {
    type F: Field;
    /// `None` for the identity (all-zero coordinates).
    fn xy(&self) -> Option<(Self::F, Self::F)>;
    fn from_xy(x: Self::F, y: Self::F) -> Self;
}

impl Coords for G1Base {
    type F = Fp;
    fn xy(&self) -> Option<(Fp, Fp)> {
        let zero = self.x.l.iter().chain(&self.y.l).all(|&l| l == 0);
        (!zero).then(|| (Fp::from(self.x), Fp::from(self.y)))
    }
    fn from_xy(x: Fp, y: Fp) -> Self {
        G1Base {
            x: x.into(),
            y: y.into(),
        }
    }
}

impl Coords for G2Base {
    type F = Fp2;
    fn xy(&self) -> Option<(Fp2, Fp2)> {
        let limbs = |c: &blst::blst_fp2| c.fp.iter().flat_map(|f| f.l).all(|l| l == 0);
        let zero = limbs(&self.x) && limbs(&self.y);
        (!zero).then(|| (Fp2::from(self.x), Fp2::from(self.y)))
    }
    fn from_xy(x: Fp2, y: Fp2) -> Self {
        G2Base {
            x: x.into(),
            y: y.into(),
        }
    }
}

/// `p + i*q` for `i` in `0..len` in stored form (see the module docs): blocks of [`RUN`]
/// points `A_k + T_j`, each block's affine additions sharing one inversion. `base` converts
/// an affine point of the group into its stored form.
fn block_progression<P, B>(
    p: P,
    q: P,
    len: usize,
    base: impl Fn(&P::AffineRepr) -> B + Sync,
) -> Vec<B>
where
    P: Curve + Group<Scalar = Scalar> + Send + Sync,
    P::AffineRepr: Default + Clone + Send + Sync,
    B: Coords + PartialEq,
{
    let normalize = |pts: &[P], out: &mut [B]| {
        let mut affine = vec![P::AffineRepr::default(); pts.len()];
        P::batch_normalize(pts, &mut affine);
        for (slot, a) in out.iter_mut().zip(&affine) {
            *slot = base(a);
        }
    };
    let mut out: Vec<B> = Vec::with_capacity(len);
    out.par_extend(rayon::iter::repeat_n(B::default(), len));
    if len == 0 {
        return out;
    }
    // T_j = j*q for j in 1..RUN (index j - 1); finite, as q has the group's prime order.
    let table: Vec<(B::F, B::F)> = progression(q, q, RUN - 1, normalize)
        .iter()
        .map(|t| t.xy().expect("j*q is finite for 0 < j < r"))
        .collect();
    out.par_chunks_mut(RUN).enumerate().for_each(|(k, chunk)| {
        let start = p + q * Scalar::from((k * RUN) as u64);
        normalize(&[start], &mut chunk[..1]);
        let slow = |chunk: &mut [B]| {
            let mut run = Vec::with_capacity(chunk.len());
            let mut x = start;
            for _ in 0..chunk.len() {
                run.push(x);
                x += q;
            }
            normalize(&run, chunk);
        };
        // A start at the identity (p = -kRq), or equal to +-T_j (a zero denominator), is
        // not met with random p and q; such a block is made by projective additions.
        let Some((ax, ay)) = chunk[0].xy() else {
            return slow(chunk);
        };
        let rest = chunk.len() - 1;
        let mut dens: Vec<B::F> = table[..rest].iter().map(|(tx, _)| *tx - ax).collect();
        if dens.iter().any(|d| bool::from(d.is_zero())) {
            return slow(chunk);
        }
        batch_invert(&mut dens);
        for ((slot, (tx, ty)), inv) in chunk[1..].iter_mut().zip(&table).zip(&dens) {
            // lambda = (ty - ay) / (tx - ax); x3 = lambda^2 - ax - tx; y3 = lambda (ax - x3) - ay.
            let lambda = (*ty - ay) * inv;
            let x3 = lambda.square() - ax - tx;
            let y3 = lambda * (ax - x3) - ay;
            *slot = B::from_xy(x3, y3);
        }
    });
    out
}

/// Replaces every element (all nonzero) by its inverse, with one inversion and three
/// multiplications an element (Montgomery's trick).
fn batch_invert<F: Field>(values: &mut [F]) {
    let mut prefix = Vec::with_capacity(values.len());
    let mut acc = F::ONE;
    for v in values.iter() {
        prefix.push(acc);
        acc *= v;
    }
    let mut inv = Option::<F>::from(acc.invert()).expect("nonzero elements have a nonzero product");
    for (v, before) in values.iter_mut().zip(prefix).rev() {
        let this = inv * before;
        inv *= *v;
        *v = this;
    }
}

/// `p + i*q` for `i` in `0..len`, in affine form, built in parallel runs: each run starts
/// from one scalar multiplication and adds `q` from there.
fn progression<P, A>(p: P, q: P, len: usize, normalize: impl Fn(&[P], &mut [A]) + Sync) -> Vec<A>
where
    P: Group<Scalar = Scalar> + Send + Sync,
    A: Default + Clone + Send + Sync,
{
    let mut out = Vec::with_capacity(len);
    out.par_extend(rayon::iter::repeat_n(A::default(), len));
    out.par_chunks_mut(RUN).enumerate().for_each(|(k, chunk)| {
        let mut x = p + q * Scalar::from((k * RUN) as u64);
        let mut run = Vec::with_capacity(chunk.len());
        for _ in 0..chunk.len() {
            run.push(x);
            x += q;
        }
        normalize(&run, chunk);
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::SyntheticCircuit;
    use crate::{prove_random, CpuBackend, ParameterSource};
    use blstrs::{G1Affine, G2Affine};
    use group::prime::PrimeCurveAffine;

    #[test]
    fn sizes_match_the_circuit_and_proving_runs() {
        let c = SyntheticCircuit {
            constraints: 700,
            inputs: 3,
            parts: 1,
            seed: 11,
        };
        let pce = Pce::extract("random-params", c).unwrap();
        let p = random_point_parameters(&pce, 1).unwrap();
        let real = crate::generate_insecure_parameters(
            &pce,
            &mut rand_chacha::ChaCha8Rng::seed_from_u64(2),
        )
        .unwrap();
        assert_eq!(p.h().len(), real.h().len());
        assert_eq!(p.l().len(), real.l().len());
        assert_eq!(p.a().len(), real.a().len());
        assert_eq!(p.b_g1().len(), real.b_g1().len());
        assert_eq!(p.b_g2().len(), real.b_g2().len());
        assert_eq!(p.vk().ic.len(), real.vk().ic.len());
        assert_eq!(
            random_point_parameters(&pce, 1).unwrap().h(),
            p.h(),
            "deterministic"
        );
        let w = crate::synthesize(&pce, vec![c]).unwrap();
        prove_random(&CpuBackend::default(), &p, &w[0], &mut rand::thread_rng()).unwrap();
    }

    #[test]
    fn the_blocks_equal_the_plain_progression() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (p, q) = (
            G1Projective::random(&mut rng),
            G1Projective::random(&mut rng),
        );
        for len in [0, 1, 2, RUN - 1, RUN, 2 * RUN + 5] {
            let want: Vec<G1Base> = progression(p, q, len, |pts, out: &mut [G1Affine]| {
                G1Projective::batch_normalize(pts, out)
            })
            .iter()
            .map(crate::msm::g1_base)
            .collect();
            assert!(
                block_progression(p, q, len, crate::msm::g1_base) == want,
                "length {len}"
            );
        }
        let (p2, q2) = (
            G2Projective::random(&mut rng),
            G2Projective::random(&mut rng),
        );
        let len = RUN + 7;
        let want: Vec<G2Base> = progression(p2, q2, len, |pts, out: &mut [G2Affine]| {
            G2Projective::batch_normalize(pts, out)
        })
        .iter()
        .map(crate::msm::g2_base)
        .collect();
        assert!(
            block_progression(p2, q2, len, crate::msm::g2_base) == want,
            "G2"
        );
        // A progression through the identity: p = -RUN*q puts block 1's start there, and
        // p = -(RUN + 3)*q makes A_1 = -T_3 (a zero denominator).
        for back in [RUN as u64, RUN as u64 + 3] {
            let p = -(q * Scalar::from(back));
            let got = block_progression(p, q, 2 * RUN, crate::msm::g1_base);
            for i in [0, RUN - 1, RUN, RUN + 1, RUN + 3, RUN + 4, 2 * RUN - 1] {
                let want = (p + q * Scalar::from(i as u64)).to_affine();
                assert!(
                    got[i] == crate::msm::g1_base(&want),
                    "p = -{back}q, point {i}"
                );
            }
        }
    }

    #[test]
    fn a_progression_across_runs_is_distinct_valid_and_continuous() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let (p, q) = (
            G1Projective::random(&mut rng),
            G1Projective::random(&mut rng),
        );
        let len = 2 * RUN + 5;
        let pts = progression(p, q, len, |pts, out: &mut [G1Affine]| {
            G1Projective::batch_normalize(pts, out)
        });
        assert_eq!(pts.len(), len);
        assert!(pts
            .iter()
            .all(|x| bool::from(x.is_on_curve()) && !bool::from(x.is_identity())));
        assert!(pts
            .windows(2)
            .all(|w| w[1].to_curve() - w[0].to_curve() == q));
        let mut bytes: Vec<_> = pts.iter().map(|x| x.to_compressed()).collect();
        bytes.sort_unstable();
        bytes.dedup();
        assert_eq!(bytes.len(), len, "no two points are equal");
    }
}
