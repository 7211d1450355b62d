//! PoSt vanilla proofs at production sector sizes without sealing a sector.
//!
//! A PoSt vanilla proof opens challenged leaves of a sector's `tree_r_last` and shows
//! `comm_r = H(comm_c, comm_r_last)`. Neither the verifier nor the circuit looks at leaves
//! that are not challenged, so a sector whose tree holds zero everywhere except at its
//! challenged leaves is as valid as a sealed one: every subtree without a challenged leaf is
//! the hash of an empty subtree of its height, computed once per height, and only the nodes
//! on the paths of challenged leaves are hashed. A 32 GiB sector of 2^30 leaves then costs a
//! few hundred hashes per challenge instead of a sealed replica.
//!
//! The challenged leaves come from filecoin-proofs' own challenge derivation
//! ([`generate_fallback_sector_challenges`]), the nodes from the tree's own hash function and
//! arities (base, sub-tree, top-tree), the proofs through storage-proofs' own
//! [`MerkleProof::from_parts`]: filecoin-proofs' vanilla verifier accepts them.

use std::collections::{BTreeMap, BTreeSet};

use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::{generate_fallback_sector_challenges, FallbackPoStSectorProof, PoStConfig};
use filecoin_proofs::{ChallengeSeed, MerkleTreeTrait};
use merkletree::hash::Algorithm;
use rand::RngCore;
use storage_proofs_core::merkle::MerkleProof;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback::{Proof, SectorProof};
use typenum::Unsigned;

use crate::error::{Error, InputError, Result};

type Node<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;
type Func<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Function;
type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

/// The tree's shape: its arities (0 where a level is absent) and its base trees' height.
struct Shape {
    base: usize,
    sub: usize,
    top: usize,
    base_height: usize,
    base_leaves: u64,
}

impl Shape {
    fn of<Tree: MerkleTreeTrait>(leaves: u64) -> Result<Self> {
        let base = Tree::Arity::to_usize();
        let sub = Tree::SubTreeArity::to_usize();
        let top = Tree::TopTreeArity::to_usize();
        let trees = (sub.max(1) * top.max(1)) as u64;
        let base_leaves = leaves / trees;
        let mut base_height = 0;
        let mut n = 1u64;
        while n < base_leaves {
            n *= base as u64;
            base_height += 1;
        }
        if base < 2 || n != base_leaves || base_leaves * trees != leaves {
            return Err(Error::Input(InputError::new(format!(
                "{leaves} leaves do not form a tree of arities {base}/{sub}/{top}"
            ))));
        }
        Ok(Shape {
            base,
            sub,
            top,
            base_height,
            base_leaves,
        })
    }
}

/// The arities of the levels of a tree of `Tree`'s shape over `leaves` leaves, leaf level
/// first: its base levels, then the sub-tree level and the top-tree level where it has them
/// (the order of an inclusion path's elements).
pub(crate) fn level_arities<Tree: MerkleTreeTrait>(leaves: u64) -> Result<Vec<usize>> {
    let s = Shape::of::<Tree>(leaves)?;
    let mut v = vec![s.base; s.base_height];
    v.extend([s.sub, s.top].into_iter().filter(|&a| a > 0));
    Ok(v)
}

fn hash<Tree: MerkleTreeTrait>(nodes: &[Node<Tree>], height: usize) -> Node<Tree> {
    Func::<Tree>::default().multi_node(nodes, height)
}

/// One sector's tree_r_last with only its challenged leaves set.
struct SparseTree<Tree: MerkleTreeTrait> {
    shape: Shape,
    /// Per base tree with a challenged leaf: its nodes by level, (index in level -> node).
    bases: BTreeMap<u64, Vec<BTreeMap<u64, Node<Tree>>>>,
    /// The hash of an empty subtree of each height, leaves (height 0) included.
    empty: Vec<Node<Tree>>,
    /// The roots of the base trees, then of the sub-tree groups (empty where untouched).
    base_roots: Vec<Node<Tree>>,
    sub_roots: Vec<Node<Tree>>,
    root: Node<Tree>,
}

impl<Tree: MerkleTreeTrait> SparseTree<Tree> {
    fn new(shape: Shape, leaves: &BTreeMap<u64, Node<Tree>>) -> Self {
        let mut empty = vec![Node::<Tree>::default()];
        for h in 0..shape.base_height {
            empty.push(hash::<Tree>(&vec![empty[h]; shape.base], h));
        }
        let mut bases: BTreeMap<u64, Vec<BTreeMap<u64, Node<Tree>>>> = BTreeMap::new();
        for (&i, &v) in leaves {
            let levels = bases
                .entry(i / shape.base_leaves)
                .or_insert_with(|| vec![BTreeMap::new()]);
            levels[0].insert(i % shape.base_leaves, v);
        }
        let a = shape.base as u64;
        for levels in bases.values_mut() {
            for h in 0..shape.base_height {
                let parents: BTreeSet<u64> = levels[h].keys().map(|i| i / a).collect();
                let next = parents
                    .into_iter()
                    .map(|p| {
                        let kids: Vec<Node<Tree>> = (0..a)
                            .map(|c| levels[h].get(&(p * a + c)).copied().unwrap_or(empty[h]))
                            .collect();
                        (p, hash::<Tree>(&kids, h))
                    })
                    .collect();
                levels.push(next);
            }
        }
        let trees = (shape.sub.max(1) * shape.top.max(1)) as u64;
        let base_roots: Vec<Node<Tree>> = (0..trees)
            .map(|t| {
                bases
                    .get(&t)
                    .map_or(empty[shape.base_height], |l| l[shape.base_height][&0])
            })
            .collect();
        // Sub-tree and top-tree levels hash at height 0, as the verifier's paths do.
        let sub_roots: Vec<Node<Tree>> = if shape.sub > 0 {
            base_roots
                .chunks(shape.sub)
                .map(|g| hash::<Tree>(g, 0))
                .collect()
        } else {
            base_roots.clone()
        };
        let root = if shape.top > 0 {
            hash::<Tree>(&sub_roots, 0)
        } else {
            sub_roots[0]
        };
        SparseTree {
            shape,
            bases,
            empty,
            base_roots,
            sub_roots,
            root,
        }
    }

    /// The inclusion proof of leaf `i` (one of the set leaves).
    fn proof(&self, i: u64) -> TreeProof<Tree> {
        let s = &self.shape;
        let a = s.base as u64;
        let t = i / s.base_leaves;
        let levels = &self.bases[&t];
        let mut local = i % s.base_leaves;
        let siblings = |nodes: &[Node<Tree>], at: usize| -> (Vec<Node<Tree>>, usize) {
            let mut v = nodes.to_vec();
            v.remove(at);
            (v, at)
        };
        let mut path = Vec::new();
        for (h, level) in levels.iter().take(s.base_height).enumerate() {
            let p = local / a;
            let kids: Vec<Node<Tree>> = (0..a)
                .map(|c| level.get(&(p * a + c)).copied().unwrap_or(self.empty[h]))
                .collect();
            path.push(siblings(&kids, (local % a) as usize));
            local = p;
        }
        if let Some(g) = (t as usize).checked_div(s.sub) {
            let group = &self.base_roots[g * s.sub..(g + 1) * s.sub];
            path.push(siblings(group, t as usize % s.sub));
            if s.top > 0 {
                path.push(siblings(&self.sub_roots, g));
            }
        }
        let leaf = levels[0][&(i % s.base_leaves)];
        MerkleProof::from_parts(leaf, self.root, path)
    }
}

/// One sector's vanilla proof for `challenges` (leaf indices of a tree of `leaves` leaves),
/// with random leaf values and a random `comm_c`; also the sector's `comm_r`.
pub fn sector_proof<Tree: 'static + MerkleTreeTrait>(
    sector_id: SectorId,
    leaves: u64,
    challenges: &[u64],
    rng: &mut impl RngCore,
) -> Result<FallbackPoStSectorProof<Tree>> {
    let shape = Shape::of::<Tree>(leaves)?;
    let mut set = BTreeMap::new();
    for &c in challenges {
        if c >= leaves {
            return Err(Error::Input(InputError::new(format!(
                "challenge {c} is outside a tree of {leaves} leaves"
            ))));
        }
        set.entry(c)
            .or_insert_with(|| Node::<Tree>::random(&mut *rng));
    }
    let tree = SparseTree::<Tree>::new(shape, &set);
    let comm_c = Node::<Tree>::random(&mut *rng);
    let comm_r_last = tree.root;
    let comm_r = Func::<Tree>::hash2(&comm_c, &comm_r_last);
    let inclusion_proofs = challenges.iter().map(|&c| tree.proof(c)).collect();
    Ok(FallbackPoStSectorProof {
        sector_id,
        comm_r,
        vanilla_proof: Proof {
            sectors: vec![SectorProof {
                inclusion_proofs,
                comm_c,
                comm_r_last,
            }],
        },
    })
}

/// Vanilla proofs of `sectors` for a PoSt of `config` with `randomness`, challenged as
/// filecoin-proofs challenges them.
pub fn sector_proofs<Tree: 'static + MerkleTreeTrait>(
    config: &PoStConfig,
    randomness: &ChallengeSeed,
    prover_id: [u8; 32],
    sectors: &[SectorId],
    rng: &mut impl RngCore,
) -> Result<Vec<FallbackPoStSectorProof<Tree>>> {
    let leaves = u64::from(config.sector_size) / 32;
    let challenges =
        generate_fallback_sector_challenges::<Tree>(config, randomness, sectors, prover_id)
            .map_err(Error::proofs)?;
    sectors
        .iter()
        .map(|id| {
            let c = challenges
                .get(id)
                .ok_or_else(|| Error::proofs(format!("no challenges for sector {id:?}")))?;
            sector_proof::<Tree>(*id, leaves, c, rng)
        })
        .collect()
}
