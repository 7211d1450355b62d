//! Timing-only PoRep C1 outputs and SnapDeals partition proofs of any sector size, without
//! sealing: every count, path length, layer and parent of the real shape, with random
//! field values.
//!
//! Their challenges depend on sealed data, so real ones cannot be made without a sealed
//! sector; these cannot verify. Each carries [`TIMING_ONLY_MARK`] (the PoRep ticket, the
//! SnapDeals `comm_d_new`), so `plan` refuses them and only benchmarks accept them
//! ([`crate::plan_for_timing`]). The values synthesis itself checks are kept consistent:
//! one `comm_c` and one `comm_r_last` per PoRep proof, the replica id derived from the
//! ticket, SnapDeals' new leaves encoded from the old ones (`r_new = r_old + d_new * rho`)
//! and one partition path per SnapDeals partition.

use filecoin_hashers::poseidon::{PoseidonDomain, PoseidonHasher};
use filecoin_hashers::sha256::{Sha256Domain, Sha256Hasher};
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::{
    MerkleTreeTrait, PartitionProof, SectorUpdateConfig, TreeRHasher, VanillaSealProof,
};
use rand::{Rng, RngCore};
use rand_chacha::ChaCha8Rng;
use storage_proofs_core::merkle::MerkleProof;
use storage_proofs_porep::stacked::{
    generate_replica_id, ColumnProof, EncodingProof, LabelingProof, ReplicaColumnProof,
    TOTAL_PARENTS,
};
use storage_proofs_update::{ChallengeProof, Challenges};
use typenum::U2;

use crate::decode::{C1Output, C1VanillaProofs};
use crate::error::{Error, Result};
use crate::plan::TIMING_ONLY_MARK;
use crate::registry::{prover_id, ProofKind, SealProof, UpdateProof};
use crate::request::ProofRequest;
use crate::sparse_post::level_arities;

type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;
type Node<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// A path of random siblings to leaf `i` through levels of the given arities (leaf level
/// first); the indices are `i`'s digits.
fn random_path<D: Domain>(
    arities: &[usize],
    mut i: u64,
    rng: &mut ChaCha8Rng,
) -> Vec<(Vec<D>, usize)> {
    arities
        .iter()
        .map(|&a| {
            let at = (i % a as u64) as usize;
            i /= a as u64;
            ((1..a).map(|_| D::random(rng)).collect(), at)
        })
        .collect()
}

/// Levels of the binary tree over `nodes` leaves (tree D).
fn binary_levels(nodes: u64) -> Vec<usize> {
    vec![2; nodes.trailing_zeros() as usize]
}

/// The C1 output JSON of a timing-only PoRep of `proof` (interactive) for `miner_id`'s
/// sector `sector` (see the module docs).
pub fn porep_c1_json<Tree: 'static + MerkleTreeTrait>(
    proof: SealProof,
    miner_id: u64,
    sector: u64,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<u8>> {
    if proof.non_interactive() {
        return Err(Error::proofs(format!(
            "timing-only inputs are made for interactive PoRep, not {}",
            proof.name()
        )));
    }
    let config = proof.porep_config();
    let setup = setup_params(&config).map_err(Error::proofs)?;
    let nodes = proof.size.bytes() / 32;
    let r_levels = level_arities::<Tree>(nodes)?;
    let d_levels = binary_levels(nodes);
    let partitions = usize::from(config.partitions);
    let per_partition = config.minimum_challenges().div_ceil(partitions);

    let comm_d = Sha256Domain::random(rng);
    let ticket = TIMING_ONLY_MARK;
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed[..31]);
    seed[0] |= 1;
    let replica_id = generate_replica_id::<PoseidonHasher, _>(
        &prover_id(miner_id),
        sector,
        &ticket,
        comm_d,
        &config.porep_id,
    );
    let comm_c = Node::<Tree>::random(rng);
    let comm_r_last = Node::<Tree>::random(rng);
    let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&comm_c, &comm_r_last);

    let column = |node: u64, root: Node<Tree>, rng: &mut ChaCha8Rng| {
        let rows = (0..setup.num_layers)
            .map(|_| Node::<Tree>::random(rng))
            .collect();
        let path = random_path(&r_levels, node, rng);
        ColumnProof::new(
            node as u32,
            rows,
            TreeProof::<Tree>::from_parts(Node::<Tree>::random(rng), root, path),
        )
    };
    let challenge = |rng: &mut ChaCha8Rng| -> VanillaSealProof<Tree> {
        let c = rng.gen_range(1..nodes);
        let parents = |n: usize, rng: &mut ChaCha8Rng| -> Vec<u64> {
            (0..n).map(|_| rng.gen_range(0..nodes)).collect()
        };
        let labels = |rng: &mut ChaCha8Rng| -> Vec<Node<Tree>> {
            (0..TOTAL_PARENTS)
                .map(|_| Node::<Tree>::random(rng))
                .collect()
        };
        VanillaSealProof::<Tree> {
            comm_d_proofs: MerkleProof::<Sha256Hasher, U2>::from_parts(
                Sha256Domain::random(rng),
                comm_d,
                random_path(&d_levels, c, rng),
            ),
            comm_r_last_proof: TreeProof::<Tree>::from_parts(
                Node::<Tree>::random(rng),
                comm_r_last,
                random_path(&r_levels, c, rng),
            ),
            replica_column_proofs: ReplicaColumnProof {
                c_x: column(c, comm_c, rng),
                drg_parents: parents(setup.degree, rng)
                    .into_iter()
                    .map(|p| column(p, comm_c, rng))
                    .collect(),
                exp_parents: parents(setup.expansion_degree, rng)
                    .into_iter()
                    .map(|p| column(p, comm_c, rng))
                    .collect(),
            },
            labeling_proofs: (1..=setup.num_layers as u32)
                .map(|l| LabelingProof::new(l, c, labels(rng)))
                .collect(),
            encoding_proof: EncodingProof::new(setup.num_layers as u32, c, labels(rng)),
        }
    };
    let vanilla: Vec<Vec<VanillaSealProof<Tree>>> = (0..partitions)
        .map(|_| (0..per_partition).map(|_| challenge(rng)).collect())
        .collect();
    serde_json::to_vec(&C1Output::<Tree> {
        registered_proof: proof.name(),
        vanilla_proofs: C1VanillaProofs::for_size(proof.size, vanilla),
        comm_r: comm_r.into_bytes().try_into().expect("32-byte domain"),
        comm_d: comm_d.into_bytes().try_into().expect("32-byte domain"),
        replica_id,
        seed,
        ticket,
    })
    .map_err(|e| Error::proofs(format!("encoding C1 output: {e}")))
}

/// The request a client would send for a timing-only PoRep (see [`porep_c1_json`]).
pub fn porep_request<Tree: 'static + MerkleTreeTrait>(
    proof: SealProof,
    miner_id: u64,
    sector: u64,
    rng: &mut ChaCha8Rng,
) -> Result<ProofRequest> {
    let c1 = porep_c1_json::<Tree>(proof, miner_id, sector, rng)?;
    Ok(porep_request_of(proof.id, c1, sector, miner_id))
}

/// A PoRep request from its registered proof, C1 output, sector number and miner id.
pub(crate) fn porep_request_of(
    registered_proof: u64,
    c1: Vec<u8>,
    sector: u64,
    miner_id: u64,
) -> ProofRequest {
    ProofRequest {
        kind: Some(ProofKind::PoRep),
        registered_proof: Some(registered_proof),
        vanilla_proof: c1,
        sector_number: sector,
        miner_id,
        ..ProofRequest::default()
    }
}

/// The request a client would send for a timing-only SnapDeals proof (see [`snap_inputs`]).
pub fn snap_request<Tree>(proof: UpdateProof, rng: &mut ChaCha8Rng) -> Result<ProofRequest>
where
    Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>,
{
    let (old, new, d, vanilla) = snap_inputs::<Tree>(proof, rng)?;
    Ok(snap_request_of(proof, [old, new, d], vanilla))
}

/// A SnapDeals request from its commitments (old, new, data) and partition proofs.
pub(crate) fn snap_request_of(
    proof: UpdateProof,
    comms: [[u8; 32]; 3],
    vanilla: Vec<Vec<u8>>,
) -> ProofRequest {
    ProofRequest {
        kind: Some(ProofKind::SnapDeals),
        registered_proof: Some(proof.id),
        vanilla_proofs: vanilla,
        comm_r_old: comms[0].to_vec(),
        comm_r_new: comms[1].to_vec(),
        comm_d_new: comms[2].to_vec(),
        ..ProofRequest::default()
    }
}

/// A timing-only SnapDeals input of `proof`: `(comm_r_old, comm_r_new, comm_d_new, one
/// bincode partition proof per partition)` (see the module docs).
pub type SnapInputs = ([u8; 32], [u8; 32], [u8; 32], Vec<Vec<u8>>);

/// Makes a timing-only SnapDeals input of `proof` (see [`SnapInputs`]).
pub fn snap_inputs<Tree>(proof: UpdateProof, rng: &mut ChaCha8Rng) -> Result<SnapInputs>
where
    Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>,
{
    let update = SectorUpdateConfig::from_porep_config(&proof.porep_config());
    let nodes = proof.size.bytes() / 32;
    let sector_nodes = nodes as usize;
    let r_levels = level_arities::<Tree>(nodes)?;
    let d_levels = binary_levels(nodes);
    let partitions = usize::from(update.update_partitions);
    let partition_bits = partitions.trailing_zeros() as usize;
    let challenge_bits = d_levels.len();
    let apex_leaves = storage_proofs_update::constants::apex_leaf_count(sector_nodes);

    let comm_d_new = Sha256Domain::try_from_bytes(&TIMING_ONLY_MARK)
        .map_err(|e| Error::proofs(format!("the timing-only mark as comm_d_new: {e}")))?;
    let comm_r_old = PoseidonDomain::random(rng);
    let comm_r_new = PoseidonDomain::random(rng);
    let phi = storage_proofs_update::phi(&comm_d_new, &comm_r_old);
    let (root_r_old, root_r_new) = (PoseidonDomain::random(rng), PoseidonDomain::random(rng));

    let mut out = Vec::with_capacity(partitions);
    for k in 0..partitions {
        // The partition's part of every tree-D path: shared by its challenges, as the
        // circuit requires.
        let part_path: Vec<(Vec<Sha256Domain>, usize)> =
            random_path(&vec![2; partition_bits], k as u64, rng);
        let challenge_proofs: Vec<ChallengeProof<Tree>> =
            Challenges::new(sector_nodes, comm_r_new, k)
                .map(|c| {
                    let c = u64::from(c);
                    let mut d_path: Vec<(Vec<Sha256Domain>, usize)> =
                        random_path(&d_levels[partition_bits..], c, rng);
                    d_path.extend(part_path.iter().cloned());
                    let leaf_d = Sha256Domain::random(rng);
                    let leaf_old = PoseidonDomain::random(rng);
                    let rho =
                        storage_proofs_update::rho(&phi, (c >> (challenge_bits - update.h)) as u32);
                    let leaf_new: PoseidonDomain = (blstrs::Scalar::from(leaf_old)
                        + blstrs::Scalar::from(leaf_d) * rho)
                        .into();
                    ChallengeProof {
                        proof_r_old: TreeProof::<Tree>::from_parts(
                            leaf_old,
                            root_r_old,
                            random_path(&r_levels, c, rng),
                        ),
                        proof_d_new: MerkleProof::<Sha256Hasher, U2>::from_parts(
                            leaf_d, comm_d_new, d_path,
                        ),
                        proof_r_new: TreeProof::<Tree>::from_parts(
                            leaf_new,
                            root_r_new,
                            random_path(&r_levels, c, rng),
                        ),
                    }
                })
                .collect();
        let p = PartitionProof::<Tree> {
            comm_c: PoseidonDomain::random(rng),
            apex_leafs: (0..apex_leaves)
                .map(|_| Sha256Domain::random(rng))
                .collect(),
            challenge_proofs,
        };
        out.push(bincode::serialize(&p).map_err(|e| Error::proofs(format!("bincode: {e}")))?);
    }
    let bytes =
        |d: PoseidonDomain| -> [u8; 32] { d.into_bytes().try_into().expect("32-byte domain") };
    Ok((bytes(comm_r_old), bytes(comm_r_new), TIMING_ONLY_MARK, out))
}
