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

impl ProofRequest {
    /// A digest of every field that determines the proof, for naming jobs (see
    /// [`cuzk_engine::ContentDigest`]): two requests with the same digest ask for the same
    /// proof. Each field is length-prefixed in a fixed order under a version tag, so no two
    /// different requests encode alike.
    pub fn content_digest(&self) -> cuzk_engine::ContentDigest {
        let mut h = blake3::Hasher::new();
        h.update(b"cuzk.v1 proof request content\0");
        let mut field = |bytes: &[u8]| {
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(self.kind.map_or("", |k| k.name()).as_bytes());
        match self.registered_proof {
            Some(n) => field(&n.to_le_bytes()),
            None => field(&[]),
        }
        field(&self.sector_size.to_le_bytes());
        field(&self.vanilla_proof);
        field(&(self.vanilla_proofs.len() as u64).to_le_bytes());
        for v in &self.vanilla_proofs {
            field(v);
        }
        field(&self.sector_number.to_le_bytes());
        field(&self.miner_id.to_le_bytes());
        field(&self.randomness);
        field(&self.partition_index.to_le_bytes());
        field(&self.comm_r_old);
        field(&self.comm_r_new);
        field(&self.comm_d_new);
        cuzk_engine::ContentDigest(*h.finalize().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ProofRequest {
        ProofRequest {
            kind: Some(ProofKind::WindowPoSt),
            registered_proof: Some(10),
            sector_size: 2048,
            vanilla_proof: Vec::new(),
            vanilla_proofs: vec![vec![1, 2, 3], vec![4]],
            sector_number: 0,
            miner_id: 1000,
            randomness: vec![7; 32],
            partition_index: 0,
            comm_r_old: Vec::new(),
            comm_r_new: Vec::new(),
            comm_d_new: Vec::new(),
        }
    }

    #[test]
    fn every_field_changes_the_content_digest() {
        let base = request();
        let d = base.content_digest();
        assert_eq!(d, request().content_digest(), "deterministic");
        type Change = Box<dyn Fn(&mut ProofRequest)>;
        let changes: Vec<Change> = vec![
            Box::new(|r| r.kind = Some(ProofKind::WinningPoSt)),
            Box::new(|r| r.kind = None),
            Box::new(|r| r.registered_proof = None),
            Box::new(|r| r.registered_proof = Some(11)),
            Box::new(|r| r.sector_size = 0),
            Box::new(|r| r.vanilla_proof = vec![0]),
            // The same bytes split differently between vanilla proofs.
            Box::new(|r| r.vanilla_proofs = vec![vec![1, 2], vec![3, 4]]),
            Box::new(|r| r.vanilla_proofs = vec![vec![1, 2, 3, 4]]),
            Box::new(|r| r.vanilla_proofs.reverse()),
            Box::new(|r| r.sector_number = 1),
            Box::new(|r| r.miner_id = 1001),
            Box::new(|r| r.randomness[31] ^= 1),
            Box::new(|r| r.partition_index = 1),
            Box::new(|r| r.comm_r_old = vec![1; 32]),
            Box::new(|r| r.comm_r_new = vec![1; 32]),
            Box::new(|r| r.comm_d_new = vec![1; 32]),
        ];
        let mut seen = vec![d];
        for (i, change) in changes.iter().enumerate() {
            let mut r = request();
            change(&mut r);
            let d2 = r.content_digest();
            assert!(!seen.contains(&d2), "change {i} collides");
            seen.push(d2);
        }
    }
}
