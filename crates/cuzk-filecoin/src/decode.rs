//! Decoding the wire formats clients send: C1 JSON (plain or wrapped), bincode vanilla proofs,
//! raw commitments and randomness. Every failure is an [`InputError`] naming what is wrong.

use base64::Engine as _;
use filecoin_hashers::{poseidon::PoseidonDomain, sha256::Sha256Domain, Domain};
use filecoin_proofs::{FallbackPoStSectorProof, MerkleTreeTrait, PartitionProof, VanillaSealProof};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::error::InputError;

/// Curio's and lotus-bench's wrapper around C1 output.
#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct C1Wrapper {
    #[serde(rename = "SectorNum")]
    pub sector_num: u64,
    #[serde(rename = "Phase1Out")]
    pub phase1_out: String,
    #[serde(rename = "SectorSize")]
    pub sector_size: u64,
}

/// filecoin-proofs-api's `SealCommitPhase1Output`, as Lotus and Curio write it.
#[derive(Deserialize, serde::Serialize)]
pub(crate) struct C1Output<Tree: MerkleTreeTrait> {
    pub registered_proof: String,
    #[serde(bound = "")]
    pub vanilla_proofs: C1VanillaProofs<Tree>,
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
    pub replica_id: PoseidonDomain,
    pub seed: [u8; 32],
    pub ticket: [u8; 32],
}

/// The API's per-size enum; only the sector size matters for the variant.
#[derive(Deserialize, serde::Serialize)]
#[serde(bound = "")]
pub(crate) enum C1VanillaProofs<Tree: MerkleTreeTrait> {
    StackedDrg2KiBV1(Vec<Vec<VanillaSealProof<Tree>>>),
    StackedDrg8MiBV1(Vec<Vec<VanillaSealProof<Tree>>>),
    StackedDrg512MiBV1(Vec<Vec<VanillaSealProof<Tree>>>),
    StackedDrg32GiBV1(Vec<Vec<VanillaSealProof<Tree>>>),
    StackedDrg64GiBV1(Vec<Vec<VanillaSealProof<Tree>>>),
}

impl<Tree: MerkleTreeTrait> C1VanillaProofs<Tree> {
    pub fn size_label(&self) -> &'static str {
        match self {
            C1VanillaProofs::StackedDrg2KiBV1(_) => "2KiB",
            C1VanillaProofs::StackedDrg8MiBV1(_) => "8MiB",
            C1VanillaProofs::StackedDrg512MiBV1(_) => "512MiB",
            C1VanillaProofs::StackedDrg32GiBV1(_) => "32GiB",
            C1VanillaProofs::StackedDrg64GiBV1(_) => "64GiB",
        }
    }

    pub fn for_size(
        size: crate::registry::SectorSize,
        v: Vec<Vec<VanillaSealProof<Tree>>>,
    ) -> Self {
        use crate::registry::SectorSize::*;
        match size {
            S2KiB => C1VanillaProofs::StackedDrg2KiBV1(v),
            S8MiB => C1VanillaProofs::StackedDrg8MiBV1(v),
            S512MiB => C1VanillaProofs::StackedDrg512MiBV1(v),
            S32GiB => C1VanillaProofs::StackedDrg32GiBV1(v),
            S64GiB => C1VanillaProofs::StackedDrg64GiBV1(v),
        }
    }

    pub fn into_inner(self) -> Vec<Vec<VanillaSealProof<Tree>>> {
        match self {
            C1VanillaProofs::StackedDrg2KiBV1(v)
            | C1VanillaProofs::StackedDrg8MiBV1(v)
            | C1VanillaProofs::StackedDrg512MiBV1(v)
            | C1VanillaProofs::StackedDrg32GiBV1(v)
            | C1VanillaProofs::StackedDrg64GiBV1(v) => v,
        }
    }
}

/// What the PoRep input bytes held.
pub(crate) struct PoRepInput<Tree: MerkleTreeTrait> {
    pub c1: C1Output<Tree>,
    /// From the wrapper, when the input was wrapped.
    pub wrapper: Option<(u64, u64)>,
}

/// The sector size a C1 input announces (wrapper `SectorSize`, or the JSON's registered proof
/// name), read without decoding the vanilla proofs.
pub(crate) fn peek_c1_registered_proof(bytes: &[u8]) -> Result<String, InputError> {
    #[derive(Deserialize)]
    struct Head {
        registered_proof: String,
    }
    let json = unwrap_c1(bytes)?.0;
    let head: Head = serde_json::from_slice(&json)
        .map_err(|e| InputError::new(format!("C1 output is not valid JSON: {e}")))?;
    Ok(head.registered_proof)
}

/// Returns the C1 JSON, unwrapping Curio's wrapper when present, with the wrapper's
/// (sector number, sector size).
/// The C1 JSON and, when it came wrapped, the wrapper's (sector number, sector size).
type Unwrapped<'a> = (std::borrow::Cow<'a, [u8]>, Option<(u64, u64)>);

fn unwrap_c1(bytes: &[u8]) -> Result<Unwrapped<'_>, InputError> {
    if bytes.is_empty() {
        return Err(InputError::new(
            "the PoRep vanilla proof (C1 output) is empty",
        ));
    }
    match serde_json::from_slice::<C1Wrapper>(bytes) {
        Ok(w) => {
            let inner = base64::engine::general_purpose::STANDARD
                .decode(w.phase1_out.trim())
                .map_err(|e| InputError::new(format!("Phase1Out is not valid base64: {e}")))?;
            Ok((inner.into(), Some((w.sector_num, w.sector_size))))
        }
        Err(_) => Ok((bytes.into(), None)),
    }
}

/// Decodes a C1 output, plain or wrapped.
pub(crate) fn decode_c1<Tree: MerkleTreeTrait>(
    bytes: &[u8],
) -> Result<PoRepInput<Tree>, InputError> {
    let (json, wrapper) = unwrap_c1(bytes)?;
    let c1: C1Output<Tree> = serde_json::from_slice(&json).map_err(|e| {
        InputError::new(format!(
            "C1 output is not a valid SealCommitPhase1Output: {e}"
        ))
    })?;
    Ok(PoRepInput { c1, wrapper })
}

fn decode_bincode<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, InputError> {
    use bincode::Options;
    if bytes.is_empty() {
        return Err(InputError::new(format!("{what} is empty")));
    }
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_limit(bytes.len() as u64)
        .reject_trailing_bytes()
        .deserialize(bytes)
        .map_err(|e| InputError::new(format!("{what} is not valid bincode: {e}")))
}

/// Decodes one bincode `FallbackPoStSectorProof` per sector.
pub(crate) fn decode_post_vanilla<Tree: 'static + MerkleTreeTrait>(
    list: &[Vec<u8>],
) -> Result<Vec<FallbackPoStSectorProof<Tree>>, InputError> {
    if list.is_empty() {
        return Err(InputError::new(
            "no vanilla proofs given (one per sector is needed)",
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, b)| decode_bincode(b, &format!("vanilla proof {i} (FallbackPoStSectorProof)")))
        .collect()
}

/// Decodes one bincode update `PartitionProof` per partition.
pub(crate) fn decode_update_vanilla<Tree>(
    list: &[Vec<u8>],
) -> Result<Vec<PartitionProof<Tree>>, InputError>
where
    Tree: 'static + MerkleTreeTrait<Hasher = filecoin_proofs::TreeRHasher>,
{
    if list.is_empty() {
        return Err(InputError::new(
            "no vanilla proofs given (one per partition is needed)",
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, b)| decode_bincode(b, &format!("vanilla proof {i} (PartitionProof)")))
        .collect()
}

/// 32 raw bytes, neither missing nor all zero.
pub(crate) fn bytes32(b: &[u8], what: &str) -> Result<[u8; 32], InputError> {
    let arr: [u8; 32] = b
        .try_into()
        .map_err(|_| InputError::new(format!("{what} must be 32 bytes, got {}", b.len())))?;
    if arr == [0; 32] {
        return Err(InputError::new(format!("{what} is all zeros")));
    }
    Ok(arr)
}

/// A commitment in the Poseidon field (comm_r): 32 bytes canonically encoding a field element.
pub(crate) fn poseidon_commitment(b: &[u8], what: &str) -> Result<PoseidonDomain, InputError> {
    field_element(&bytes32(b, what)?, what)
}

/// 32 bytes that must canonically encode a field element (randomness, commitments), checked
/// as filecoin-proofs checks them.
pub(crate) fn field_element<D: Domain>(b: &[u8; 32], what: &str) -> Result<D, InputError> {
    filecoin_proofs::as_safe_commitment::<D, _>(b, what)
        .map_err(|_| InputError::new(format!("{what} is not a valid field element")))
}

/// A SHA-256 commitment (comm_d): 32 bytes encoding a field element.
pub(crate) fn sha_commitment(b: &[u8], what: &str) -> Result<Sha256Domain, InputError> {
    let arr = bytes32(b, what)?;
    Sha256Domain::try_from_bytes(&arr)
        .map_err(|_| InputError::new(format!("{what} is not a valid field element")))
}

/// The 32 bytes of a hash-domain element.
pub(crate) fn domain_bytes<D: Domain>(d: &D) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// Decodes a C1 output (plain or wrapped) into filecoin-proofs' own type, for handing the same
/// input to filecoin-proofs' prover.
pub fn decode_c1_for_filecoin_proofs<Tree: 'static + MerkleTreeTrait>(
    bytes: &[u8],
) -> Result<filecoin_proofs::SealCommitPhase1Output<Tree>, InputError> {
    let c1 = decode_c1::<Tree>(bytes)?.c1;
    let replica_id = <Tree::Hasher as filecoin_hashers::Hasher>::Domain::try_from_bytes(
        &domain_bytes(&c1.replica_id),
    )
    .map_err(|_| InputError::new("replica id is not a valid field element"))?;
    Ok(filecoin_proofs::SealCommitPhase1Output {
        vanilla_proofs: c1.vanilla_proofs.into_inner(),
        comm_r: c1.comm_r,
        comm_d: c1.comm_d,
        replica_id,
        seed: c1.seed,
        ticket: c1.ticket,
    })
}
