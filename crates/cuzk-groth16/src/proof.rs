//! The Groth16 proof and its 192-byte encoding (compressed A, B, C), bellperson's layout.

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

use crate::error::{Error, Result};

/// Size of an encoded proof.
pub const PROOF_BYTES: usize = 192;

/// A Groth16 proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// A in G1.
    pub a: G1Affine,
    /// B in G2.
    pub b: G2Affine,
    /// C in G1.
    pub c: G1Affine,
}

impl Proof {
    /// The encoding bellperson's `Proof::write` produces: A (48), B (96), C (48), compressed.
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Decodes a proof, checking each point is on the curve, in the subgroup and not the
    /// identity (as bellperson's `Proof::read` does).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() != PROOF_BYTES {
            return Err(Error::Encoding(format!(
                "a proof is {PROOF_BYTES} bytes, got {}",
                bytes.len()
            )));
        }
        let bad =
            |what: &str| Error::Encoding(format!("proof element {what} is not a valid point"));
        let a: G1Affine = Option::from(G1Affine::from_compressed(
            bytes[..48].try_into().expect("48 bytes"),
        ))
        .ok_or_else(|| bad("A"))?;
        let b: G2Affine = Option::from(G2Affine::from_compressed(
            bytes[48..144].try_into().expect("96 bytes"),
        ))
        .ok_or_else(|| bad("B"))?;
        let c: G1Affine = Option::from(G1Affine::from_compressed(
            bytes[144..].try_into().expect("48 bytes"),
        ))
        .ok_or_else(|| bad("C"))?;
        if bool::from(a.is_identity() | b.is_identity() | c.is_identity()) {
            return Err(Error::Encoding(
                "proof element is the point at infinity".into(),
            ));
        }
        Ok(Proof { a, b, c })
    }
}
