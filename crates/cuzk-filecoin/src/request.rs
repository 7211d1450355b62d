//! A proof request as clients send it, before decoding: the fields of cuzk.v1's
//! `SubmitProofRequest` that describe the proof.

use crate::registry::ProofKind;

/// The raw description of one proof to make.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProofRequest {
    /// What to prove.
    pub kind: Option<ProofKind>,
    /// Registered proof number (seal, PoSt or update numbering by kind).
    pub registered_proof: Option<u64>,
    /// Sector size in bytes; 0 when the client leaves it to the registered proof.
    pub sector_size: u64,
    /// PoRep: the C1 output JSON, or the `{SectorNum, Phase1Out, SectorSize}` wrapper.
    pub vanilla_proof: Vec<u8>,
    /// PoSt: one bincode `FallbackPoStSectorProof` per sector; SnapDeals: one bincode
    /// `PartitionProof` per partition.
    pub vanilla_proofs: Vec<Vec<u8>>,
    /// PoRep: the sector number (0 = take it from the wrapper).
    pub sector_number: u64,
    /// The miner actor id.
    pub miner_id: u64,
    /// PoSt: 32 bytes of randomness.
    pub randomness: Vec<u8>,
    /// WindowPoSt: the partition index.
    pub partition_index: u32,
    /// SnapDeals: old sealed commitment.
    pub comm_r_old: Vec<u8>,
    /// SnapDeals: new sealed commitment.
    pub comm_r_new: Vec<u8>,
    /// SnapDeals: new data commitment.
    pub comm_d_new: Vec<u8>,
}
