//! Circuit shapes: which circuit a (kind, sector size) proves with, its parameter file names,
//! and its recorded constraint system.
//!
//! A shape's identifier is storage-proofs' parameter cache identifier (the part of the v28
//! file name after `v28-`), so a PCE, a `.params` file and a `.vk` file of one circuit share
//! one name. Registered proofs that differ only in API version or features (V1, V1_1,
//! synthetic, non-interactive PoRep; Window V1 and V1_1) share their circuit.

use cuzk_groth16::{Grow, Pce};
use filecoin_proofs::parameters::{
    public_params, window_post_public_params, winning_post_public_params,
};
use filecoin_proofs::{DefaultPieceHasher, MerkleTreeTrait, TreeRHasher};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_porep::stacked::{StackedCircuit, StackedCompound, StackedDrg};
use storage_proofs_post::fallback::{FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound};
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound,
};

use crate::error::{Error, Result};
use crate::plan::with_tree;
use crate::registry::{PoStProof, ProofKind, SealProof, SectorSize};

/// The parameter-file version prefix storage-proofs 19 uses.
pub const PARAMS_VERSION: &str = "v28";

/// One circuit shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CircuitSpec {
    /// The proof kind.
    pub kind: ProofKind,
    /// The sector size.
    pub size: SectorSize,
    /// storage-proofs' cache identifier.
    pub identifier: String,
}

impl CircuitSpec {
    /// The circuit of `kind` at `size`.
    pub fn of(kind: ProofKind, size: SectorSize) -> Result<Self> {
        let identifier = with_tree!(size, identifier_of(kind, size))?;
        Ok(CircuitSpec {
            kind,
            size,
            identifier,
        })
    }

    /// The short SRS id ("porep-2k", "wpost-32g", ...).
    pub fn srs_id(&self) -> String {
        format!("{}-{}", self.kind.srs_prefix(), self.size.short())
    }

    /// `v28-<identifier>.params`
    pub fn params_file_name(&self) -> String {
        format!("{PARAMS_VERSION}-{}.params", self.identifier)
    }

    /// `v28-<identifier>.vk`
    pub fn vk_file_name(&self) -> String {
        format!("{PARAMS_VERSION}-{}.vk", self.identifier)
    }

    /// `<identifier>.pce`
    pub fn pce_file_name(&self) -> String {
        format!("{}.pce", self.identifier)
    }

    /// Records the constraint system of this circuit from storage-proofs' blank circuit (the
    /// one parameter generation synthesizes); WindowPoSt's sector groups in parallel.
    pub fn extract_pce(&self) -> Result<Pce> {
        with_tree!(self.size, extract_blank(self, None))
    }

    /// [`CircuitSpec::extract_pce`], asking `grow` for the recording's host memory before it
    /// is allocated, on one thread (see [`Pce::extract_within`]).
    pub fn extract_pce_within(&self, grow: &mut Grow<'_>) -> Result<Pce> {
        with_tree!(self.size, extract_blank(self, Some(grow)))
    }
}

fn identifier_of<Tree: 'static + MerkleTreeTrait>(
    kind: ProofKind,
    size: SectorSize,
) -> Result<String> {
    match kind {
        ProofKind::PoRep => SealProof::of(size, 1)
            .porep_config()
            .get_cache_identifier::<Tree>()
            .map_err(Error::proofs),
        ProofKind::WindowPoSt | ProofKind::WinningPoSt => PoStProof::current(kind, size)
            .post_config()
            .get_cache_identifier::<Tree>()
            .map_err(Error::proofs),
        ProofKind::SnapDeals => {
            let pp = storage_proofs_update::PublicParams::from_sector_size(size.bytes());
            Ok(update_identifier::<Tree>(&pp))
        }
    }
}

fn update_identifier<Tree: 'static + MerkleTreeTrait>(
    pp: &storage_proofs_update::PublicParams,
) -> String {
    // The update compound is only defined for Poseidon trees; every registered shape is one.
    fn inner<T: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
        pp: &storage_proofs_update::PublicParams,
    ) -> String {
        <EmptySectorUpdateCompound<T> as CacheableParameters<EmptySectorUpdateCircuit<T>, _>>::cache_identifier(pp)
    }
    inner::<PoseidonTree<Tree>>(pp)
}

/// The same tree shape with its hasher pinned to Poseidon (what every registered shape uses).
type PoseidonTree<Tree> = storage_proofs_core::merkle::LCTree<
    TreeRHasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

fn extract_blank<Tree: 'static + MerkleTreeTrait>(
    spec: &CircuitSpec,
    grow: Option<&mut Grow<'_>>,
) -> Result<Pce> {
    let id = &spec.identifier;
    macro_rules! extract {
        ($c:expr) => {
            match grow {
                Some(g) => Pce::extract_within(id, $c, g)?,
                None => Pce::extract(id, $c)?,
            }
        };
    }
    let pce = match spec.kind {
        ProofKind::PoRep => {
            let pp = public_params::<Tree>(&SealProof::of(spec.size, 1).porep_config())
                .map_err(Error::proofs)?;
            let c: StackedCircuit<Tree, DefaultPieceHasher> =
                <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
                    StackedDrg<'_, Tree, DefaultPieceHasher>,
                    _,
                >>::blank_circuit(&pp);
            extract!(c)
        }
        ProofKind::WindowPoSt | ProofKind::WinningPoSt => {
            let cfg = PoStProof::current(spec.kind, spec.size).post_config();
            let pp = if spec.kind == ProofKind::WindowPoSt {
                window_post_public_params::<Tree>(&cfg)
            } else {
                winning_post_public_params::<Tree>(&cfg)
            }
            .map_err(Error::proofs)?;
            let c: FallbackPoStCircuit<Tree> = <FallbackPoStCompound<Tree> as CompoundProof<
                FallbackPoSt<'_, Tree>,
                _,
            >>::blank_circuit(&pp);
            extract!(c)
        }
        ProofKind::SnapDeals => {
            let pp = storage_proofs_update::PublicParams::from_sector_size(spec.size.bytes());
            let c: EmptySectorUpdateCircuit<PoseidonTree<Tree>> =
                <EmptySectorUpdateCompound<PoseidonTree<Tree>> as CompoundProof<
                    EmptySectorUpdate<PoseidonTree<Tree>>,
                    _,
                >>::blank_circuit(&pp);
            extract!(c)
        }
    };
    Ok(pce)
}

/// Every circuit of a sector size, in a fixed order.
pub fn all_circuits(size: SectorSize) -> Result<Vec<CircuitSpec>> {
    ProofKind::ALL
        .into_iter()
        .map(|k| CircuitSpec::of(k, size))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A budgeted extraction records sequentially, the unbudgeted one builds WindowPoSt's
    /// sector groups as child systems in parallel and merges them: the two PCEs must be the
    /// same, or witnesses (synthesized through child systems) would not line up with the
    /// recorded columns.
    #[test]
    fn sequential_and_parallel_recordings_are_identical() {
        for kind in [ProofKind::WindowPoSt, ProofKind::WinningPoSt] {
            let spec = CircuitSpec::of(kind, SectorSize::S2KiB).unwrap();
            let parallel = spec.extract_pce().unwrap();
            let mut asked = 0u64;
            let sequential = spec
                .extract_pce_within(&mut |peak| {
                    asked = asked.max(peak);
                    Ok(())
                })
                .unwrap();
            assert_eq!(parallel.fingerprint(), sequential.fingerprint(), "{kind}");
            assert_eq!(parallel.stats(), sequential.stats(), "{kind}");
            assert!(
                asked > 0,
                "{kind}: the sequential recording asked for its memory"
            );
        }
    }
}
