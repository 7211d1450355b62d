//! WindowPoSt (one partition) and WinningPoSt from per-sector vanilla proofs.

use std::collections::BTreeMap;

use blstrs::Scalar;
use cuzk_groth16::Pce;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use filecoin_proofs::{
    partition_vanilla_proofs, single_partition_vanilla_proofs, FallbackPoStSectorProof,
    MerkleTreeTrait, PoStConfig, PublicReplicaInfo, VanillaProof,
};
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector, Sector,
};

use super::{synthesize_circuit, synthesize_units, ProofPlan, Synthesized};
use crate::circuit::CircuitSpec;
use crate::decode::{bytes32, decode_post_vanilla};
use crate::error::{Error, InputError, Result};
use crate::registry::{prover_id, PoStProof, ProofKind};
use crate::request::ProofRequest;

type Dom<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;
type Compound<Tree> = FallbackPoStCompound<Tree>;

pub(super) struct PoStPlan<Tree: 'static + MerkleTreeTrait> {
    spec: CircuitSpec,
    content: cuzk_engine::ContentDigest,
    kind: ProofKind,
    config: PoStConfig,
    pub_params: fallback::PublicParams,
    pub_inputs: fallback::PublicInputs<Dom<Tree>>,
    partitioned: VanillaProof<Tree>,
    randomness: [u8; 32],
    prover_id: [u8; 32],
    sectors: Vec<(SectorId, [u8; 32])>,
    partition_index: usize,
}

/// Partitions in one WindowPoSt deadline at most (the network's policy).
const MAX_PARTITIONS_PER_DEADLINE: usize = 3000;

fn input_err(what: &str) -> impl Fn(anyhow::Error) -> Error + '_ {
    move |e| InputError::new(format!("{what}: {e:#}")).into()
}

impl<Tree: 'static + MerkleTreeTrait> PoStPlan<Tree> {
    pub(super) fn new(req: &ProofRequest, proof: PoStProof) -> Result<Self> {
        let kind = proof.kind();
        let config = proof.post_config();
        let vanilla: Vec<FallbackPoStSectorProof<Tree>> = decode_post_vanilla(&req.vanilla_proofs)?;
        let randomness = bytes32(&req.randomness, "randomness")?;
        let randomness_safe: Dom<Tree> = crate::decode::field_element(&randomness, "randomness")?;
        if req.miner_id == 0 {
            return Err(InputError::new("miner id is missing").into());
        }
        let prover_id = prover_id(req.miner_id);
        let prover_id_safe = Dom::<Tree>::try_from_bytes(&prover_id)
            .map_err(|_| InputError::new("invalid prover id"))?;

        let leaves = (proof.size.bytes() / 32) as usize;
        for (i, v) in vanilla.iter().enumerate() {
            let fits = v
                .vanilla_proof
                .sectors
                .iter()
                .flat_map(|s| &s.inclusion_proofs)
                .all(|p| p.path().len() == p.expected_len(leaves));
            if !fits {
                return Err(InputError::new(format!(
                    "vanilla proof {i} is not for {} sectors (registered proof {})",
                    proof.size, proof.id
                ))
                .into());
            }
        }
        let partition_index = req.partition_index as usize;
        // The verifier's inputs hold `partition_index x sectors per partition` entries: an
        // index beyond what the chain allows is refused before anything is sized from it.
        if partition_index >= MAX_PARTITIONS_PER_DEADLINE {
            return Err(InputError::new(format!(
                "partition index {partition_index} is out of range: a deadline has at most \
                 {MAX_PARTITIONS_PER_DEADLINE} partitions"
            ))
            .into());
        }
        let (vanilla_params, partitions) = match kind {
            ProofKind::WinningPoSt => {
                if partition_index != 0 {
                    return Err(InputError::new(
                        "WinningPoSt has no partitions; partition index must be 0",
                    )
                    .into());
                }
                if vanilla.len() != config.sector_count {
                    return Err(InputError::new(format!(
                        "WinningPoSt takes {} sector proof(s), got {}",
                        config.sector_count,
                        vanilla.len()
                    ))
                    .into());
                }
                (
                    winning_post_setup_params(&config).map_err(Error::proofs)?,
                    None,
                )
            }
            _ => {
                if vanilla.len() > config.sector_count {
                    return Err(InputError::new(format!(
                        "a {} WindowPoSt partition holds at most {} sectors, got {}",
                        proof.size,
                        config.sector_count,
                        vanilla.len()
                    ))
                    .into());
                }
                (window_post_setup_params(&config), None)
            }
        };
        let sectors: Vec<(SectorId, [u8; 32])> = vanilla
            .iter()
            .map(|v| (v.sector_id, crate::decode::domain_bytes(&v.comm_r)))
            .collect();
        if let Some(i) = sectors.windows(2).position(|w| w[0].0 >= w[1].0) {
            return Err(InputError::new(format!(
                "sector ids must be unique and ascending (as verifiers order them): sector {} follows {}",
                sectors[i + 1].0, sectors[i].0
            ))
            .into());
        }
        let compound = <Compound<Tree> as CompoundProof<
            FallbackPoSt<'_, Tree>,
            FallbackPoStCircuit<Tree>,
        >>::setup(&compound_proof::SetupParams {
            vanilla_params,
            partitions,
            priority: config.priority,
        })
        .map_err(Error::proofs)?;
        let pub_params = compound.vanilla_params;
        let pub_inputs = fallback::PublicInputs {
            randomness: randomness_safe,
            prover_id: prover_id_safe,
            sectors: vanilla
                .iter()
                .map(|v| PublicSector {
                    id: v.sector_id,
                    comm_r: v.comm_r,
                })
                .collect(),
            k: (kind == ProofKind::WindowPoSt).then_some(partition_index),
        };
        let partitioned = if kind == ProofKind::WindowPoSt {
            single_partition_vanilla_proofs(&config, &pub_params, &pub_inputs, &vanilla)
                .map_err(input_err("vanilla proofs do not fit this partition"))?
        } else {
            partition_vanilla_proofs(&config, &pub_params, &pub_inputs, 1, &vanilla)
                .map_err(input_err("vanilla proofs do not fit WinningPoSt"))?
                .into_iter()
                .next()
                .ok_or_else(|| InputError::new("no WinningPoSt partition"))?
        };
        Ok(PoStPlan {
            spec: CircuitSpec::of(kind, proof.size)?,
            content: req.content_digest(),
            kind,
            config,
            pub_params,
            pub_inputs,
            partitioned,
            randomness,
            prover_id,
            sectors,
            partition_index,
        })
    }

    /// Public inputs as a verifier of this partition computes them: the partition's sectors
    /// at their global position (earlier partitions' slots filled with placeholders, which
    /// the computation skips).
    fn verifier_inputs(&self) -> fallback::PublicInputs<Dom<Tree>> {
        let mut sectors = Vec::new();
        if self.kind == ProofKind::WindowPoSt {
            let first = self.pub_inputs.sectors[0].clone();
            sectors.extend(std::iter::repeat_n(
                first,
                self.partition_index * self.config.sector_count,
            ));
        }
        sectors.extend(self.pub_inputs.sectors.iter().cloned());
        fallback::PublicInputs {
            randomness: self.pub_inputs.randomness,
            prover_id: self.pub_inputs.prover_id,
            sectors,
            k: None,
        }
    }
}

impl<Tree: 'static + MerkleTreeTrait> ProofPlan for PoStPlan<Tree> {
    fn content(&self) -> cuzk_engine::ContentDigest {
        self.content
    }
    fn kind(&self) -> ProofKind {
        self.kind
    }

    fn circuit(&self) -> &CircuitSpec {
        &self.spec
    }

    fn partitions(&self) -> usize {
        1
    }

    fn synthesize(&self, k: usize, pce: Option<&Pce>) -> Result<Synthesized> {
        let started = std::time::Instant::now();
        if k != 0 {
            return Err(InputError::new(format!("partition {k} does not exist")).into());
        }
        let circuit: FallbackPoStCircuit<Tree> = <Compound<Tree> as CompoundProof<
            FallbackPoSt<'_, Tree>,
            FallbackPoStCircuit<Tree>,
        >>::circuit(
            &self.pub_inputs,
            Default::default(),
            &self.partitioned,
            &self.pub_params,
            Some(0),
        )
        .map_err(input_err("the vanilla proofs do not form a circuit"))?;
        match pce {
            // Sectors, and the challenges within a sector, are independent: the witness is
            // synthesized a unit at a time in parallel.
            Some(pce) => match units(circuit) {
                Ok(units) => synthesize_units(units, pce, started),
                Err(whole) => synthesize_circuit(whole, Some(pce), started),
            },
            None => synthesize_circuit(circuit, None, started),
        }
    }

    fn public_inputs(&self, _k: usize) -> Result<Vec<Scalar>> {
        <Compound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, FallbackPoStCircuit<Tree>>>::generate_public_inputs(
            &self.verifier_inputs(),
            &self.pub_params,
            Some(self.partition_index),
        )
        .map_err(Error::proofs)
    }

    fn verify(&self, proof: &[u8]) -> Result<bool> {
        match self.kind {
            ProofKind::WinningPoSt => {
                let (id, comm_r) = self.sectors[0];
                let replicas = [(id, PublicReplicaInfo::new(comm_r).map_err(Error::proofs)?)];
                filecoin_proofs::verify_winning_post::<Tree>(
                    &self.config,
                    &self.randomness,
                    &replicas,
                    self.prover_id,
                    proof,
                )
                .map_err(Error::proofs)
            }
            _ if self.partition_index == 0 || self.config.api_version == ApiVersion::V1_2_0 => {
                // Challenges of API 1.2 do not depend on the sector's global index, so this
                // partition verifies on its own as filecoin-proofs' partition 0.
                let replicas = self
                    .sectors
                    .iter()
                    .map(|(id, c)| Ok((*id, PublicReplicaInfo::new(*c).map_err(Error::proofs)?)))
                    .collect::<Result<BTreeMap<_, _>>>()?;
                filecoin_proofs::verify_window_post::<Tree>(
                    &self.config,
                    &self.randomness,
                    &replicas,
                    self.prover_id,
                    proof,
                )
                .map_err(Error::proofs)
            }
            _ => crate::verify::verify_partition_with_vk(self, 0, proof),
        }
    }
}

/// The circuit as independent units, each a circuit of its own sharing the header: one per
/// sector when there are several (WindowPoSt), else one per challenge of the only sector
/// (WinningPoSt: the sector's commitments and their hash are the header, each challenge's
/// inclusion proof a unit). A circuit of one sector with one challenge comes back whole.
fn units<Tree: 'static + MerkleTreeTrait>(
    c: FallbackPoStCircuit<Tree>,
) -> std::result::Result<Vec<FallbackPoStCircuit<Tree>>, FallbackPoStCircuit<Tree>> {
    let prover_id = c.prover_id;
    if c.sectors.len() > 1 {
        return Ok(c
            .sectors
            .into_iter()
            .map(|s| FallbackPoStCircuit {
                prover_id,
                sectors: vec![s],
            })
            .collect());
    }
    match c.sectors.as_slice() {
        [s] if s.leafs.len() > 1 && s.leafs.len() == s.paths.len() => Ok(s
            .leafs
            .iter()
            .zip(&s.paths)
            .map(|(leaf, path)| FallbackPoStCircuit {
                prover_id,
                sectors: vec![Sector {
                    comm_r: s.comm_r,
                    comm_c: s.comm_c,
                    comm_r_last: s.comm_r_last,
                    leafs: vec![*leaf],
                    paths: vec![path.clone()],
                    id: s.id,
                }],
            })
            .collect()),
        _ => Err(c),
    }
}
