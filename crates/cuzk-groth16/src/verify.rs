//! Groth16 verification: `e(A, B) = e(alpha, beta) * e(IC(x), gamma) * e(C, delta)`.

use blstrs::{Bls12, G1Affine, G1Projective, G2Prepared, Gt, Scalar};
use group::Curve;
use pairing::{MillerLoopResult, MultiMillerLoop};

use crate::error::{Error, Result};
use crate::proof::Proof;
use crate::srs::VerifyingKey;

/// A verifying key with its pairing-side precomputation done once.
#[derive(Clone, Debug)]
pub struct PreparedVerifyingKey {
    alpha_g1_beta_g2: Gt,
    neg_gamma_g2: G2Prepared,
    neg_delta_g2: G2Prepared,
    ic: Vec<G1Affine>,
}

impl PreparedVerifyingKey {
    /// Prepares `vk` for repeated verification.
    pub fn new(vk: &VerifyingKey) -> Self {
        PreparedVerifyingKey {
            alpha_g1_beta_g2: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
            neg_gamma_g2: (-vk.gamma_g2).into(),
            neg_delta_g2: (-vk.delta_g2).into(),
            ic: vk.ic.clone(),
        }
    }

    /// Number of public inputs this key expects (the constant one not counted).
    pub fn num_public_inputs(&self) -> usize {
        self.ic.len().saturating_sub(1)
    }

    /// True when `proof` is valid for `public_inputs`; an error when the input count does not
    /// fit the key.
    pub fn verify(&self, proof: &Proof, public_inputs: &[Scalar]) -> Result<bool> {
        if public_inputs.len() + 1 != self.ic.len() {
            return Err(Error::VerifyInput(format!(
                "the verifying key takes {} public inputs, got {}",
                self.num_public_inputs(),
                public_inputs.len()
            )));
        }
        let mut acc = G1Projective::from(self.ic[0]);
        for (x, p) in public_inputs.iter().zip(&self.ic[1..]) {
            acc += *p * x;
        }
        let acc = acc.to_affine();
        let b: G2Prepared = proof.b.into();
        let ml = Bls12::multi_miller_loop(&[
            (&proof.a, &b),
            (&acc, &self.neg_gamma_g2),
            (&proof.c, &self.neg_delta_g2),
        ]);
        Ok(ml.final_exponentiation() == self.alpha_g1_beta_g2)
    }
}
