//! 32 GiB PoSt vanilla proofs from sparse trees: storage-proofs' vanilla verifier accepts them,
//! and rejects them once a leaf or comm_c changes.

use cuzk_filecoin::registry::{PoStProof, ProofKind, SectorSize};
use cuzk_filecoin::sparse_post::sector_proofs;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::parameters::{window_post_public_params, winning_post_public_params};
use filecoin_proofs::{
    partition_vanilla_proofs, FallbackPoStSectorProof, MerkleTreeTrait, SectorShape32GiB,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback::{FallbackPoSt, PublicInputs, PublicSector};

type Tree = SectorShape32GiB;
type D = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

fn seed(rng: &mut ChaCha20Rng) -> [u8; 32] {
    let mut b = [0u8; 32];
    rand::RngCore::fill_bytes(rng, &mut b);
    b[31] &= 0x3f;
    b
}

fn verify(
    kind: ProofKind,
    randomness: [u8; 32],
    prover: [u8; 32],
    p: &[FallbackPoStSectorProof<Tree>],
) -> bool {
    verify_sized::<Tree>(SectorSize::S32GiB, kind, randomness, prover, p)
}

fn verify_sized<T: 'static + MerkleTreeTrait>(
    size: SectorSize,
    kind: ProofKind,
    randomness: [u8; 32],
    prover: [u8; 32],
    p: &[FallbackPoStSectorProof<T>],
) -> bool {
    type Dom<T> = <<T as MerkleTreeTrait>::Hasher as Hasher>::Domain;
    let cfg = PoStProof::current(kind, size).post_config();
    let pp = if kind == ProofKind::WinningPoSt {
        winning_post_public_params::<T>(&cfg)
    } else {
        window_post_public_params::<T>(&cfg)
    }
    .unwrap();
    let sectors: Vec<PublicSector<Dom<T>>> = p
        .iter()
        .map(|s| PublicSector {
            id: s.sector_id,
            comm_r: s.comm_r,
        })
        .collect();
    let mut pi = PublicInputs {
        randomness: Dom::<T>::try_from_bytes(&randomness).unwrap(),
        prover_id: Dom::<T>::try_from_bytes(&prover).unwrap(),
        sectors,
        k: None,
    };
    // filecoin-proofs' own partitioning of vanilla proofs verifies them (an error otherwise).
    let Ok(parts) = partition_vanilla_proofs::<T>(&cfg, &pp, &pi, 1, p) else {
        return false;
    };
    if kind == ProofKind::WinningPoSt {
        // WinningPoSt's proof holds one "sector" per challenge; naming the sector once per
        // challenge makes the verifier check every one of them, not only the first.
        pi.sectors = vec![pi.sectors[0].clone(); pp.sector_count];
    }
    FallbackPoSt::<T>::verify_all_partitions(&pp, &pi, &parts).unwrap_or(false)
}

fn cfg_id(kind: ProofKind) -> u64 {
    PoStProof::current(kind, SectorSize::S32GiB).id
}

#[test]
fn winning_post_32gib_from_a_sparse_tree_verifies() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let (randomness, prover) = (seed(&mut rng), seed(&mut rng));
    let cfg = PoStProof::current(ProofKind::WinningPoSt, SectorSize::S32GiB).post_config();
    let sectors = [SectorId::from(42)];
    let mut p = sector_proofs::<Tree>(&cfg, &randomness, prover, &sectors, &mut rng).unwrap();
    assert_eq!(p[0].vanilla_proof.sectors[0].inclusion_proofs.len(), 66);
    assert!(verify(ProofKind::WinningPoSt, randomness, prover, &p));
    let req = cuzk_filecoin::ProofRequest {
        kind: Some(ProofKind::WinningPoSt),
        registered_proof: Some(cfg_id(ProofKind::WinningPoSt)),
        miner_id: 1000,
        randomness: randomness.to_vec(),
        vanilla_proofs: vec![bincode::serialize(&p[0]).unwrap()],
        ..Default::default()
    };
    assert_eq!(cuzk_filecoin::plan(&req).unwrap().partitions(), 1);

    // Another randomness challenges other leaves: the proof no longer verifies.
    assert!(!verify(ProofKind::WinningPoSt, seed(&mut rng), prover, &p));
    // Nor with another comm_c.
    p[0].vanilla_proof.sectors[0].comm_c = D::random(&mut rng);
    assert!(!verify(ProofKind::WinningPoSt, randomness, prover, &p));
}

/// 64 GiB trees have a top layer (arity 2) above the sub-tree layer.
#[test]
fn winning_post_64gib_from_a_sparse_tree_verifies() {
    type T64 = filecoin_proofs::SectorShape64GiB;
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let (randomness, prover) = (seed(&mut rng), seed(&mut rng));
    let cfg = PoStProof::current(ProofKind::WinningPoSt, SectorSize::S64GiB).post_config();
    let p =
        sector_proofs::<T64>(&cfg, &randomness, prover, &[SectorId::from(9)], &mut rng).unwrap();
    let (w, s) = (ProofKind::WinningPoSt, SectorSize::S64GiB);
    assert!(verify_sized::<T64>(s, w, randomness, prover, &p));
    assert!(!verify_sized::<T64>(s, w, seed(&mut rng), prover, &p));
}

#[test]
fn window_post_32gib_partition_of_2349_sectors_verifies() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let (randomness, prover) = (seed(&mut rng), seed(&mut rng));
    let cfg = PoStProof::current(ProofKind::WindowPoSt, SectorSize::S32GiB).post_config();
    assert_eq!(cfg.sector_count, 2349);
    let sectors: Vec<SectorId> = (0..2349u64).map(|i| SectorId::from(1000 + 3 * i)).collect();
    let mut p = sector_proofs::<Tree>(&cfg, &randomness, prover, &sectors, &mut rng).unwrap();
    assert!(verify(ProofKind::WindowPoSt, randomness, prover, &p));

    // The daemon's request validation takes them as Curio sends them: one partition.
    let req = cuzk_filecoin::ProofRequest {
        kind: Some(ProofKind::WindowPoSt),
        registered_proof: Some(cfg_id(ProofKind::WindowPoSt)),
        miner_id: 1000,
        randomness: randomness.to_vec(),
        vanilla_proofs: p.iter().map(|v| bincode::serialize(v).unwrap()).collect(),
        ..Default::default()
    };
    let plan = cuzk_filecoin::plan(&req).unwrap();
    assert_eq!(plan.partitions(), 1);

    // One changed sector's comm_r fails the whole partition.
    p[1234].comm_r = D::random(&mut rng);
    assert!(!verify(ProofKind::WindowPoSt, randomness, prover, &p));
}

/// A 32 GiB WinningPoSt from `cuzk fixtures --sector-size 32GiB`'s inputs and insecure
/// parameters proves on the CPU and verifies with filecoin-proofs.
#[test]
fn winning_post_32gib_proves_and_verifies_end_to_end() {
    use cuzk_filecoin::fixtures::{bind_fixture_dirs, fixture_store, unhex, Quiet};
    use cuzk_filecoin::fixtures_scale::{scale_fixtures, ScaleManifest, ScaleOptions};
    let dir = tempfile::tempdir().unwrap();
    bind_fixture_dirs(dir.path()).unwrap();
    let cpu = cuzk_groth16::CpuBackend::new();
    let opts = ScaleOptions {
        window_params: false,
        backend: &cpu,
    };
    let m = scale_fixtures(dir.path(), SectorSize::S32GiB, opts, &Quiet).unwrap();
    assert_eq!(ScaleManifest::load(dir.path()).unwrap(), m);
    assert_eq!(m.window.vanilla.len(), 2349);
    let w = &m.winning;
    let req = cuzk_filecoin::ProofRequest {
        kind: Some(ProofKind::WinningPoSt),
        registered_proof: Some(w.registered_proof),
        miner_id: m.miner_id,
        randomness: unhex(&w.randomness).unwrap(),
        vanilla_proofs: vec![std::fs::read(dir.path().join(&w.vanilla[0])).unwrap()],
        ..Default::default()
    };
    let plan = cuzk_filecoin::plan(&req).unwrap();
    let store = fixture_store(dir.path());
    let out = cuzk_filecoin::prove_plan(
        plan.as_ref(),
        &store,
        &cuzk_groth16::CpuBackend::new(),
        cuzk_filecoin::ProveOptions::default(),
    )
    .unwrap();
    assert_eq!(out.proof.len(), 192);
    assert!(
        plan.verify(&out.proof).unwrap(),
        "filecoin-proofs rejected it"
    );
    let mut bad = out.proof.clone();
    bad[7] ^= 1;
    assert!(!plan.verify(&bad).unwrap_or(false));
}
