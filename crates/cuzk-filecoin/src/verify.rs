//! Verification of assembled proofs, and singling out the partitions that fail.

use std::io::Cursor;

use bellperson::groth16;
use blstrs::Bls12;
use storage_proofs_core::parameter_cache::parameter_cache_verifying_key_path;

use crate::error::{Error, Result};
use crate::plan::ProofPlan;

/// Bytes of one partition proof.
pub const PARTITION_PROOF_BYTES: usize = 192;

fn load_vk(plan: &dyn ProofPlan) -> Result<groth16::PreparedVerifyingKey<Bls12>> {
    let spec = plan.circuit();
    let path = parameter_cache_verifying_key_path(&spec.identifier);
    let bytes = std::fs::read(&path).map_err(|e| Error::Params {
        circuit: spec.srs_id(),
        path: path.clone(),
        reason: format!("cannot read verifying key: {e}"),
    })?;
    let vk =
        groth16::VerifyingKey::<Bls12>::read(Cursor::new(bytes)).map_err(|e| Error::Params {
            circuit: spec.srs_id(),
            path,
            reason: format!("invalid verifying key: {e}"),
        })?;
    Ok(groth16::prepare_verifying_key(&vk))
}

fn verify_with(
    plan: &dyn ProofPlan,
    pvk: &groth16::PreparedVerifyingKey<Bls12>,
    k: usize,
    proof: &[u8],
) -> Result<bool> {
    let Ok(p) = groth16::Proof::<Bls12>::read(proof) else {
        return Ok(false);
    };
    let inputs = plan.public_inputs(k)?;
    groth16::verify_proof(pvk, &p, &inputs).map_err(Error::proofs)
}

/// Verifies partition `k`'s proof alone against the circuit's verifying key (from the
/// parameter directory filecoin-proofs reads) and the partition's public inputs.
pub(crate) fn verify_partition_with_vk(
    plan: &dyn ProofPlan,
    k: usize,
    proof: &[u8],
) -> Result<bool> {
    verify_with(plan, &load_vk(plan)?, k, proof)
}

/// The partitions whose proofs fail on their own.
pub fn bad_partitions(plan: &dyn ProofPlan, proof: &[u8]) -> Result<Vec<usize>> {
    let pvk = load_vk(plan)?;
    let mut bad = Vec::new();
    for k in 0..plan.partitions() {
        let chunk = proof.get(k * PARTITION_PROOF_BYTES..(k + 1) * PARTITION_PROOF_BYTES);
        let ok = match chunk {
            Some(c) => verify_with(plan, &pvk, k, c)?,
            None => false,
        };
        if !ok {
            bad.push(k);
        }
    }
    Ok(bad)
}

/// Verifies an assembled proof with filecoin-proofs. On failure, names the partitions whose
/// proofs fail on their own when the output holds them side by side (an aggregate cannot be
/// split; [`assemble_verified`] names them from the partition proofs).
pub fn verify_assembled(plan: &dyn ProofPlan, proof: &[u8]) -> Result<()> {
    let ok = (plan.aggregated() || proof.len() == plan.partitions() * PARTITION_PROOF_BYTES)
        && plan.verify(proof).unwrap_or(false);
    if ok {
        return Ok(());
    }
    Err(Error::Verification {
        bad_partitions: if plan.aggregated() {
            Vec::new()
        } else {
            bad_partitions(plan, proof)?
        },
    })
}

/// Assembles the output proof from the partition proofs (concatenated, or aggregated for
/// NI-PoRep) and verifies it with filecoin-proofs; on failure names the bad partitions.
pub fn assemble_verified(plan: &dyn ProofPlan, partition_proofs: &[u8]) -> Result<Vec<u8>> {
    let named = |plan: &dyn ProofPlan| -> Result<Error> {
        Ok(Error::Verification {
            bad_partitions: bad_partitions(plan, partition_proofs)?,
        })
    };
    if partition_proofs.len() != plan.partitions() * PARTITION_PROOF_BYTES {
        return Err(named(plan)?);
    }
    let proof = match plan.assemble(partition_proofs) {
        Ok(p) => p,
        // Aggregation refuses malformed partition proofs (a point off the curve): name them.
        Err(e) => {
            return match bad_partitions(plan, partition_proofs)? {
                bad if !bad.is_empty() => Err(Error::Verification {
                    bad_partitions: bad,
                }),
                _ => Err(e),
            }
        }
    };
    match verify_assembled(plan, &proof) {
        Ok(()) => Ok(proof),
        Err(Error::Verification { .. }) if plan.aggregated() => Err(named(plan)?),
        Err(e) => Err(e),
    }
}
