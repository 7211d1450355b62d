//! Multi-scalar multiplication on the CPU.
//!
//! Bases are kept as blst's affine structs ([`G1Base`], [`G2Base`]): the same 96/192-byte
//! Montgomery-form layout blst computes on, so an MSM reads the parameters in place with no
//! per-proof conversion. Large G1 MSMs go to the batch-affine Pippenger in
//! [`crate::msm_batch`] (on the caller's rayon pool); small ones and all G2 MSMs to blst's
//! Pippenger, which runs on blst's own thread pool, one thread per core.

// blst's min_pk scheme has public keys in G1 and signatures in G2; both types are
// transparent wrappers of blst's points and give safe conversions and encodings.
use blst::min_pk::{AggregatePublicKey, AggregateSignature, PublicKey, Signature};
use blst::MultiPoint;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;
use rayon::prelude::*;

/// A G1 base point as stored in parameters.
pub type G1Base = blst::blst_p1_affine;
/// A G2 base point as stored in parameters.
pub type G2Base = blst::blst_p2_affine;

/// Converts a blstrs point into the stored base form.
pub fn g1_base(p: &G1Affine) -> G1Base {
    *p.as_ref()
}

/// Converts a blstrs point into the stored base form.
pub fn g2_base(p: &G2Affine) -> G2Base {
    *p.as_ref()
}

/// Uncompressed encoding of a stored base (the `.params` point format).
pub fn g1_base_bytes(b: &G1Base) -> [u8; 96] {
    // blst's G1 public-key type is a transparent wrapper of its affine point.
    PublicKey::from(*b).serialize()
}

/// Uncompressed encoding of a stored base (the `.params` point format).
pub fn g2_base_bytes(b: &G2Base) -> [u8; 192] {
    Signature::from(*b).serialize()
}

/// Converts a stored base back into a blstrs point (through its encoding: blstrs exposes no
/// raw constructor; used for the few verifying-key points, never per proof).
pub fn g1_affine(b: &G1Base) -> G1Affine {
    Option::from(G1Affine::from_uncompressed_unchecked(&g1_base_bytes(b)))
        .expect("a stored base is a valid curve point")
}

/// Converts a stored base back into a blstrs point.
pub fn g2_affine(b: &G2Base) -> G2Affine {
    Option::from(G2Affine::from_uncompressed_unchecked(&g2_base_bytes(b)))
        .expect("a stored base is a valid curve point")
}

fn g1_from_blst(p: blst::blst_p1) -> G1Projective {
    let affine = AggregatePublicKey::from(p).to_public_key().serialize();
    Option::<G1Affine>::from(G1Affine::from_uncompressed_unchecked(&affine))
        .expect("blst returns points on the curve")
        .into()
}

fn g2_from_blst(p: blst::blst_p2) -> G2Projective {
    let affine = AggregateSignature::from(p).to_signature().serialize();
    Option::<G2Affine>::from(G2Affine::from_uncompressed_unchecked(&affine))
        .expect("blst returns points on the curve")
        .into()
}

/// Projective points to stored form, with one batched inversion (blst's `to_affine` for
/// slices).
pub fn normalize_g1(points: &[G1Projective]) -> Vec<G1Base> {
    let raw: Vec<blst::blst_p1> = points.iter().map(|p| *p.as_ref()).collect();
    blst::p1_affines::from(&raw).as_slice().to_vec()
}

/// Projective points to stored form, with one batched inversion.
pub fn normalize_g2(points: &[G2Projective]) -> Vec<G2Base> {
    let raw: Vec<blst::blst_p2> = points.iter().map(|p| *p.as_ref()).collect();
    blst::p2_affines::from(&raw).as_slice().to_vec()
}

/// Little-endian canonical bytes of each scalar, the input format of blst's MSM.
pub fn scalar_bytes(scalars: &[Scalar]) -> Vec<u8> {
    let mut out = vec![0u8; scalars.len() * 32];
    out.par_chunks_mut(32 * 1024)
        .zip(scalars.par_chunks(1024))
        .for_each(|(o, s)| {
            for (o, s) in o.chunks_exact_mut(32).zip(s) {
                o.copy_from_slice(&s.to_bytes_le());
            }
        });
    out
}

/// From this many points on, G1 MSMs use the batch-affine Pippenger
/// ([`crate::msm_batch::msm_g1_batch_affine`]); below, blst's is as fast or faster. Measured
/// with `examples/msm_bench.rs` on a 2-core Xeon, batch-affine against blst: 0.93-0.96x at
/// 2^12-2^14 dense random scalars, 1.10x at 2^16, 1.34x at 2^20, 1.19x at 2^22; 3.1x at 2^22
/// with Groth16-like sparse scalars (51% zero, 47% one).
pub const BATCH_AFFINE_MIN_POINTS: usize = 1 << 15;

/// `sum_i scalars[i] * bases[i]` in G1. The lengths must be equal.
pub fn msm_g1(bases: &[G1Base], scalars: &[Scalar]) -> G1Projective {
    if bases.len() >= BATCH_AFFINE_MIN_POINTS {
        crate::msm_batch::msm_g1_batch_affine(bases, scalars)
    } else {
        msm_g1_blst(bases, scalars)
    }
}

/// `sum_i scalars[i] * bases[i]` in G1 by blst's Pippenger (XYZZ buckets, blst's own thread
/// pool). The lengths must be equal.
pub fn msm_g1_blst(bases: &[G1Base], scalars: &[Scalar]) -> G1Projective {
    assert_eq!(
        bases.len(),
        scalars.len(),
        "MSM bases and scalars differ in length"
    );
    if bases.is_empty() {
        return G1Projective::identity();
    }
    g1_from_blst(bases.mult(&scalar_bytes(scalars), 255))
}

/// `sum_i scalars[i] * bases[i]` in G2. The lengths must be equal.
pub fn msm_g2(bases: &[G2Base], scalars: &[Scalar]) -> G2Projective {
    assert_eq!(
        bases.len(),
        scalars.len(),
        "MSM bases and scalars differ in length"
    );
    if bases.is_empty() {
        return G2Projective::identity();
    }
    g2_from_blst(bases.mult(&scalar_bytes(scalars), 255))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::Curve;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn matches_naive_sum_with_edge_scalars() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let n = 300;
        let points: Vec<G1Affine> = (0..n)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect();
        let points2: Vec<G2Affine> = (0..n)
            .map(|_| G2Projective::random(&mut rng).to_affine())
            .collect();
        let mut scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        scalars[0] = Scalar::ZERO;
        scalars[1] = -Scalar::ONE;
        scalars[2] = Scalar::ONE;
        let mut expect = G1Projective::identity();
        let mut expect2 = G2Projective::identity();
        for ((p, q), s) in points.iter().zip(&points2).zip(&scalars) {
            expect += *p * s;
            expect2 += *q * s;
        }
        let bases: Vec<G1Base> = points.iter().map(g1_base).collect();
        let bases2: Vec<G2Base> = points2.iter().map(g2_base).collect();
        assert_eq!(msm_g1(&bases, &scalars), expect);
        assert_eq!(msm_g2(&bases2, &scalars), expect2);
        assert_eq!(g1_affine(&bases[5]), points[5]);
        assert_eq!(g2_affine(&bases2[5]), points2[5]);
        assert_eq!(msm_g1(&[], &[]), G1Projective::identity());
    }

    #[test]
    fn identity_round_trips_through_base_form() {
        use group::prime::PrimeCurveAffine;
        let id = G1Affine::identity();
        assert_eq!(g1_affine(&g1_base(&id)), id);
        let id2 = G2Affine::identity();
        assert_eq!(g2_affine(&g2_base(&id2)), id2);
    }
}
