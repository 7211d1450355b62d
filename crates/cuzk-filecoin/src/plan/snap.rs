//! SnapDeals: one circuit per partition from the vanilla partition proofs.

use blstrs::Scalar;
use cuzk_groth16::Pce;
use filecoin_proofs::{
    MerkleTreeTrait, PartitionProof, PoRepConfig, SectorUpdateConfig, TreeRHasher,
};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PublicInputs,
    PublicParams, SetupParams,
};

use super::{synthesize_circuit, ProofPlan, Synthesized};
use crate::circuit::CircuitSpec;
use crate::decode::{bytes32, decode_update_vanilla, poseidon_commitment, sha_commitment};
use crate::error::{Error, InputError, Result};
use crate::registry::{ProofKind, UpdateProof};
use crate::request::ProofRequest;

type Compound<Tree> = EmptySectorUpdateCompound<Tree>;

pub(super) struct SnapPlan<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> {
    spec: CircuitSpec,
    content: cuzk_engine::ContentDigest,
    config: PoRepConfig,
    pub_inputs: PublicInputs,
    pub_params: PublicParams,
    vanilla: Vec<PartitionProof<Tree>>,
    comm_r_old: [u8; 32],
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> SnapPlan<Tree> {
    pub(super) fn new(req: &ProofRequest, proof: UpdateProof) -> Result<Self> {
        let config = proof.porep_config();
        let update = SectorUpdateConfig::from_porep_config(&config);
        let partitions = usize::from(update.update_partitions);
        let comm_r_old = bytes32(&req.comm_r_old, "comm_r_old")?;
        let comm_r_new = bytes32(&req.comm_r_new, "comm_r_new")?;
        let comm_d_new = bytes32(&req.comm_d_new, "comm_d_new")?;
        let vanilla: Vec<PartitionProof<Tree>> = decode_update_vanilla(&req.vanilla_proofs)?;
        if vanilla.len() != partitions {
            return Err(InputError::new(format!(
                "{} SnapDeals proofs have {partitions} partitions, got {} vanilla partition proofs",
                proof.size,
                vanilla.len()
            ))
            .into());
        }
        let pub_inputs = PublicInputs {
            k: partitions,
            comm_r_old: poseidon_commitment(&comm_r_old, "comm_r_old")?,
            comm_d_new: sha_commitment(&comm_d_new, "comm_d_new")?,
            comm_r_new: poseidon_commitment(&comm_r_new, "comm_r_new")?,
            h: update.h,
        };
        let compound = <Compound<Tree> as CompoundProof<
            EmptySectorUpdate<Tree>,
            EmptySectorUpdateCircuit<Tree>,
        >>::setup(&compound_proof::SetupParams {
            vanilla_params: SetupParams {
                sector_bytes: u64::from(update.sector_size),
            },
            partitions: Some(partitions),
            priority: false,
        })
        .map_err(Error::proofs)?;
        Ok(SnapPlan {
            spec: CircuitSpec::of(ProofKind::SnapDeals, proof.size)?,
            content: req.content_digest(),
            config,
            pub_inputs,
            pub_params: compound.vanilla_params,
            vanilla,
            comm_r_old,
            comm_r_new,
            comm_d_new,
        })
    }
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> ProofPlan for SnapPlan<Tree> {
    fn content(&self) -> cuzk_engine::ContentDigest {
        self.content
    }
    fn kind(&self) -> ProofKind {
        ProofKind::SnapDeals
    }

    fn circuit(&self) -> &CircuitSpec {
        &self.spec
    }

    fn partitions(&self) -> usize {
        self.vanilla.len()
    }

    fn synthesize(&self, k: usize, pce: Option<&Pce>) -> Result<Synthesized> {
        let started = std::time::Instant::now();
        let circuit: EmptySectorUpdateCircuit<Tree> = <Compound<Tree> as CompoundProof<
            EmptySectorUpdate<Tree>,
            EmptySectorUpdateCircuit<Tree>,
        >>::circuit(
            &self.pub_inputs,
            (),
            &self.vanilla[k],
            &self.pub_params,
            Some(k),
        )
        .map_err(|e| {
            InputError::new(format!(
                "partition {k}: the vanilla proof does not form a circuit: {e:#}"
            ))
        })?;
        synthesize_circuit(circuit, pce, started)
    }

    fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        <Compound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, EmptySectorUpdateCircuit<Tree>>>::generate_public_inputs(
            &self.pub_inputs,
            &self.pub_params,
            Some(k),
        )
        .map_err(Error::proofs)
    }

    fn timing_only(&self) -> bool {
        self.comm_d_new == super::TIMING_ONLY_MARK
    }

    fn verify(&self, proof: &[u8]) -> Result<bool> {
        filecoin_proofs::verify_empty_sector_update_proof::<Tree>(
            &self.config,
            proof,
            self.comm_r_old,
            self.comm_r_new,
            self.comm_d_new,
        )
        .map_err(Error::proofs)
    }
}
