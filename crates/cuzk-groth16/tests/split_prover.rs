//! A proof whose L, A and B MSMs take split scalars is byte-identical to the dense path's.

use blstrs::{G1Projective, G2Projective, Scalar};
use cuzk_groth16::synthetic::SyntheticCircuit;
use cuzk_groth16::{
    generate_insecure_parameters, no_yield, prove_with, synthesize, CpuBackend, G1Query,
    ParameterSource, Pce, ProvingBackend, QueryMsm, SourceMsm, SplitScalars,
};
use rand::SeedableRng;

/// The dense MSMs of `inner`, but asking the prover for split scalars (and counting the
/// split calls).
struct Split<'a> {
    inner: SourceMsm<'a, CpuBackend>,
    calls: std::cell::Cell<usize>,
}

impl QueryMsm for Split<'_> {
    fn g1(&self, q: G1Query, s: &[Scalar]) -> cuzk_groth16::Result<G1Projective> {
        self.inner.g1(q, s)
    }
    fn b_g2(&self, s: &[Scalar]) -> cuzk_groth16::Result<G2Projective> {
        self.inner.b_g2(s)
    }
    fn takes_split(&self) -> bool {
        true
    }
    fn g1_split(&self, q: G1Query, s: &SplitScalars) -> cuzk_groth16::Result<G1Projective> {
        self.calls.set(self.calls.get() + 1);
        self.inner.g1(q, &s.to_dense())
    }
    fn b_g2_split(&self, s: &SplitScalars) -> cuzk_groth16::Result<G2Projective> {
        self.calls.set(self.calls.get() + 1);
        self.inner.b_g2(&s.to_dense())
    }
}

#[test]
fn split_and_dense_msms_give_the_same_proof() {
    let c = SyntheticCircuit {
        constraints: 900,
        inputs: 4,
        parts: 2,
        seed: 21,
    };
    let pce = Pce::extract("split-prover", c).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let params = generate_insecure_parameters(&pce, &mut rng).unwrap();
    let pa = synthesize(&pce, vec![c]).unwrap().remove(0);
    let backend = CpuBackend::new();
    let guard = backend.device().lock();
    let (r, s) = (Scalar::from(77), Scalar::from(1234));
    let dense = SourceMsm {
        backend: &backend,
        guard: &guard,
        params: &params,
    };
    let h = |a: &[Scalar], b: &[Scalar], c: &[Scalar]| backend.compute_h(&guard, a, b, c);
    let (want, _) = prove_with(&h, &dense, &params, &pa, r, s, &no_yield).unwrap();
    let split = Split {
        inner: dense,
        calls: Default::default(),
    };
    let (got, _) = prove_with(&h, &split, &params, &pa, r, s, &no_yield).unwrap();
    assert_eq!(got.to_bytes(), want.to_bytes());
    assert_eq!(
        split.calls.get(),
        4,
        "L, A, B in G2 and B in G1 took split scalars"
    );
    // The evaluation made the split beside a, b and c; it covers the queries.
    let q = pa.split().unwrap();
    assert_eq!(q.l.len(), pa.witness.aux.len());
    assert_eq!(q.a.len(), params.a().len());
    assert_eq!(q.b.len(), params.b_g1().len());
}
