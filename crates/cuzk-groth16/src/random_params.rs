//! Parameters of a circuit's exact query sizes whose points are random: for timing the
//! prover where real parameters cannot be had (production-size PoRep and SnapDeals, whose
//! parameters are 10s of GB to generate). A proof made with them is well formed but
//! verifies against no key anyone holds; callers must label every figure "timing only".
//!
//! The points of one query form an arithmetic progression `P + iQ` with `P` and `Q` drawn
//! from the seed: no two are equal and none is the identity, so an MSM over them takes the
//! general path, as over real parameters, and a point costs one addition (not a scalar
//! multiplication) to make.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
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
        progression(p, q, len, |pts, out: &mut [G1Affine]| {
            G1Projective::batch_normalize(pts, out)
        })
        .iter()
        .map(crate::msm::g1_base)
        .collect()
    };
    let h = g1(n - 1);
    let l = g1(pce.num_aux());
    let a = g1(a);
    let b_g1 = g1(b);
    let ic = g1(ni).iter().map(crate::msm::g1_affine).collect();
    let p2 = G2Projective::random(&mut rng);
    let q2 = G2Projective::random(&mut rng);
    let b_g2: Vec<G2Base> = progression(p2, q2, b, |pts, out: &mut [G2Affine]| {
        G2Projective::batch_normalize(pts, out)
    })
    .iter()
    .map(|p| *p.as_ref())
    .collect();
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

/// `p + i*q` for `i` in `0..len`, in affine form, built in parallel runs: each run starts
/// from one scalar multiplication and adds `q` from there.
fn progression<P, A>(p: P, q: P, len: usize, normalize: impl Fn(&[P], &mut [A]) + Sync) -> Vec<A>
where
    P: Group<Scalar = Scalar> + Send + Sync,
    A: Default + Clone + Send,
{
    let mut out = vec![A::default(); len];
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
