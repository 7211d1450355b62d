//! PoRep C2: one circuit per partition from the C1 output's vanilla proofs.

use std::marker::PhantomData;

use bellperson::groth16::aggregate::AggregateVersion;
use blstrs::Scalar;
use cuzk_groth16::Pce;
use filecoin_hashers::{poseidon::PoseidonHasher, sha256::Sha256Domain, Domain};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::{
    DefaultPieceHasher, MerkleTreeTrait, PoRepConfig, SealCommitOutput, VanillaSealProof,
};
use storage_proofs_core::api_version::ApiFeature;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::parameter_cache::parameter_cache_srs_key_path;
use storage_proofs_core::sector::SectorId;
use storage_proofs_porep::stacked::{
    self, generate_replica_id, StackedCircuit, StackedCompound, StackedDrg, Tau,
};

use super::{synthesize_circuit, synthesize_units, ProofPlan, Synthesized};
use crate::circuit::CircuitSpec;
use crate::decode::{
    bytes32, decode_c1, peek_c1_registered_proof, poseidon_commitment, sha_commitment,
};
use crate::error::{Error, InputError, Result};
use crate::registry::{prover_id, ProofKind, SealProof};
use crate::request::ProofRequest;

type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
type PubInputs<Tree> = stacked::PublicInputs<
    <<Tree as MerkleTreeTrait>::Hasher as filecoin_hashers::Hasher>::Domain,
    Sha256Domain,
>;

pub(super) struct PoRepPlan<Tree: 'static + MerkleTreeTrait> {
    spec: CircuitSpec,
    content: cuzk_engine::ContentDigest,
    config: PoRepConfig,
    pub_in: PubInputs<Tree>,
    pub_params: stacked::PublicParams<Tree>,
    vanilla: Vec<Vec<VanillaSealProof<Tree>>>,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
    ticket: [u8; 32],
    seed: [u8; 32],
    prover_id: [u8; 32],
    sector_id: u64,
    timing_only: bool,
    _tree: PhantomData<Tree>,
}

/// The registered proof of a PoRep request: the request's number, checked against the name
/// in the C1 output; or, when the request gives none, the C1 output's.
pub(super) fn resolve_registered_proof(req: &ProofRequest) -> Result<SealProof, InputError> {
    let name = peek_c1_registered_proof(&req.vanilla_proof)?;
    let from_json = (0..20)
        .map(|id| SealProof::from_id(id).expect("0..20 are registered"))
        .find(|p| p.name() == name)
        .ok_or_else(|| {
            InputError::new(format!("C1 output names unknown registered proof '{name}'"))
        })?;
    match req.registered_proof {
        None => Ok(from_json),
        Some(id) => {
            let p = SealProof::from_id(id)?;
            if p != from_json {
                return Err(InputError::new(format!(
                    "registered proof {id} ({}) does not match the C1 output's {name}",
                    p.name()
                )));
            }
            Ok(p)
        }
    }
}

impl<Tree: 'static + MerkleTreeTrait> PoRepPlan<Tree> {
    pub(super) fn new(req: &ProofRequest, proof: SealProof) -> Result<Self> {
        let input = decode_c1::<Tree>(&req.vanilla_proof)?;
        let c1 = input.c1;
        if c1.vanilla_proofs.size_label() != proof.size.label() {
            return Err(InputError::new(format!(
                "C1 vanilla proofs are for {} sectors, the registered proof is {}",
                c1.vanilla_proofs.size_label(),
                proof.size
            ))
            .into());
        }
        let mut sector_id = req.sector_number;
        if let Some((num, size)) = input.wrapper {
            if size != proof.size.bytes() {
                return Err(InputError::new(format!(
                    "wrapper SectorSize {size} does not match the registered proof's {}",
                    proof.size.bytes()
                ))
                .into());
            }
            if sector_id != 0 && sector_id != num {
                return Err(InputError::new(format!(
                    "sector number {sector_id} differs from the wrapper's SectorNum {num}"
                ))
                .into());
            }
            sector_id = num;
        }
        if req.miner_id == 0 {
            return Err(InputError::new("miner id is missing").into());
        }
        let comm_r_safe = poseidon_commitment(&c1.comm_r, "comm_r")?;
        let comm_d_safe = sha_commitment(&c1.comm_d, "comm_d")?;
        // NI-PoRep draws its challenges without the interactive seed, which may be zero.
        let seed = if proof.non_interactive() {
            c1.seed
        } else {
            bytes32(&c1.seed, "seed")?
        };
        let ticket = c1.ticket;
        let config = proof.porep_config();
        let prover_id = prover_id(req.miner_id);

        // The replica id binds miner, sector number, ticket and comm_d: a wrong miner id or
        // sector number is caught here, before any proving.
        let replica_id = generate_replica_id::<PoseidonHasher, _>(
            &prover_id,
            sector_id,
            &ticket,
            comm_d_safe,
            &config.porep_id,
        );
        if crate::decode::domain_bytes(&replica_id) != crate::decode::domain_bytes(&c1.replica_id) {
            return Err(InputError::new(format!(
                "miner id {} and sector number {sector_id} do not match the C1 output's replica id",
                req.miner_id
            ))
            .into());
        }

        let partitions = usize::from(config.partitions);
        let vanilla = c1.vanilla_proofs.into_inner();
        if vanilla.len() != partitions {
            return Err(InputError::new(format!(
                "C1 output has {} partitions of vanilla proofs, {} needs {partitions}",
                vanilla.len(),
                proof.name()
            ))
            .into());
        }
        let per_partition = config.minimum_challenges().div_ceil(partitions);
        if let Some((k, p)) = vanilla
            .iter()
            .enumerate()
            .find(|(_, p)| p.len() != per_partition)
        {
            return Err(InputError::new(format!(
                "partition {k} has {} challenge proofs, expected {per_partition}",
                p.len()
            ))
            .into());
        }

        let compound = <Compound<Tree> as CompoundProof<
            StackedDrg<'_, Tree, DefaultPieceHasher>,
            _,
        >>::setup(&compound_proof::SetupParams {
            vanilla_params: setup_params(&config).map_err(Error::proofs)?,
            partitions: Some(partitions),
            priority: false,
        })
        .map_err(Error::proofs)?;
        let pub_in = stacked::PublicInputs {
            replica_id: <Tree::Hasher as filecoin_hashers::Hasher>::Domain::try_from_bytes(
                &crate::decode::domain_bytes(&c1.replica_id),
            )
            .map_err(|_| InputError::new("replica id is not a valid field element"))?,
            tau: Some(Tau {
                comm_d: comm_d_safe,
                comm_r: <Tree::Hasher as filecoin_hashers::Hasher>::Domain::try_from_bytes(
                    &crate::decode::domain_bytes(&comm_r_safe),
                )
                .map_err(|_| InputError::new("comm_r is not a valid field element"))?,
            }),
            k: None,
            seed: Some(seed),
        };
        Ok(PoRepPlan {
            spec: CircuitSpec::of(ProofKind::PoRep, proof.size)?,
            content: req.content_digest(),
            config,
            pub_in,
            pub_params: compound.vanilla_params,
            vanilla,
            comm_r: c1.comm_r,
            comm_d: c1.comm_d,
            ticket,
            seed,
            prover_id,
            sector_id,
            timing_only: ticket == super::TIMING_ONLY_MARK,
            _tree: PhantomData,
        })
    }
}

impl<Tree: 'static + MerkleTreeTrait> PoRepPlan<Tree> {
    /// Partition `k`'s circuit over the given challenge proofs.
    fn circuit(
        &self,
        k: usize,
        challenges: &Vec<VanillaSealProof<Tree>>,
    ) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
        <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::circuit(
            &self.pub_in,
            (),
            challenges,
            &self.pub_params,
            Some(k),
        )
        .map_err(|e| {
            InputError::new(format!(
                "partition {k}: the vanilla proofs do not form a circuit: {e:#}"
            ))
            .into()
        })
    }
}

impl<Tree: 'static + MerkleTreeTrait> ProofPlan for PoRepPlan<Tree> {
    fn content(&self) -> cuzk_engine::ContentDigest {
        self.content
    }
    fn kind(&self) -> ProofKind {
        ProofKind::PoRep
    }

    fn circuit(&self) -> &CircuitSpec {
        &self.spec
    }

    fn partitions(&self) -> usize {
        self.vanilla.len()
    }

    fn synthesize(&self, k: usize, pce: Option<&Pce>) -> Result<Synthesized> {
        let started = std::time::Instant::now();
        let challenges = &self.vanilla[k];
        match pce {
            // The circuit is a header (replica id, commitments) followed by one independent
            // unit per challenge: the witness is synthesized a challenge at a time in
            // parallel, each unit from a circuit of that challenge alone.
            Some(pce) if challenges.len() > 1 => {
                let circuits = challenges
                    .iter()
                    .map(|c| self.circuit(k, &vec![c.clone()]))
                    .collect::<Result<Vec<_>>>()?;
                synthesize_units(circuits, pce, started)
            }
            _ => synthesize_circuit(self.circuit(k, challenges)?, pce, started),
        }
    }

    fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::generate_public_inputs(
            &self.pub_in,
            &self.pub_params,
            Some(k),
        )
        .map_err(Error::proofs)
    }

    fn aggregated(&self) -> bool {
        self.config.feature_enabled(ApiFeature::NonInteractivePoRep)
    }

    /// NI-PoRep's output is the SnarkPack (v2) aggregate of the partition proofs, padded to a
    /// power of two, with filecoin-proofs' transcript (hash of comm_r); it needs the
    /// inner-product SRS from the parameter directory.
    fn assemble(&self, partition_proofs: &[u8]) -> Result<Vec<u8>> {
        if !self.aggregated() {
            return Ok(partition_proofs.to_vec());
        }
        let srs = parameter_cache_srs_key_path(&self.spec.identifier, self.partitions());
        if !srs.exists() {
            return Err(Error::Params {
                circuit: self.spec.srs_id(),
                path: srs,
                reason: "NI-PoRep aggregation needs the inner-product SRS file (fetched with \
                         the parameters)"
                    .into(),
            });
        }
        filecoin_proofs::aggregate_seal_commit_proofs::<Tree>(
            &self.config,
            &[self.comm_r],
            &[self.seed],
            &[SealCommitOutput {
                proof: partition_proofs.to_vec(),
            }],
            AggregateVersion::V2,
        )
        .map_err(|e| Error::proofs(format!("aggregating the NI-PoRep partition proofs: {e:#}")))
    }

    fn timing_only(&self) -> bool {
        self.timing_only
    }

    fn verify(&self, proof: &[u8]) -> Result<bool> {
        filecoin_proofs::verify_seal::<Tree>(
            &self.config,
            self.comm_r,
            self.comm_d,
            self.prover_id,
            SectorId::from(self.sector_id),
            self.ticket,
            self.seed,
            proof,
        )
        .map_err(Error::proofs)
    }
}
