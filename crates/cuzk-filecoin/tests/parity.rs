//! filecoin-proofs' own provers on the same inputs (and the same insecure parameters) also
//! verify, and their proofs have our proofs' length and layout.

mod common;

use common::fixtures;
use cuzk_filecoin::fixtures::unhex;
use cuzk_filecoin::registry::prover_id;
use cuzk_filecoin::{
    decode_c1_for_filecoin_proofs, plan, prove_plan, PoStProof, ProofKind, ProveOptions, SealProof,
    UpdateProof,
};
use cuzk_groth16::{CpuBackend, Proof};
use filecoin_proofs::{FallbackPoStSectorProof, PartitionProof, SectorShapeBase};
use storage_proofs_core::sector::SectorId;

fn ours(kind: ProofKind) -> Vec<u8> {
    let f = fixtures();
    let p = plan(&f.manifest.request(&f.dir, kind).unwrap()).unwrap();
    prove_plan(
        p.as_ref(),
        &f.store,
        &CpuBackend::new(),
        ProveOptions::default(),
    )
    .unwrap()
    .proof
}

fn same_layout(a: &[u8], b: &[u8]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.chunks(192).zip(b.chunks(192)) {
        Proof::from_bytes(x).unwrap();
        Proof::from_bytes(y).unwrap();
    }
}

fn h32(s: &str) -> [u8; 32] {
    unhex(s).unwrap().try_into().unwrap()
}

#[test]
fn porep_parity() {
    let f = fixtures();
    let m = &f.manifest;
    let bytes = std::fs::read(f.dir.join(&m.porep.c1_json)).unwrap();
    let c1 = decode_c1_for_filecoin_proofs::<SectorShapeBase>(&bytes).unwrap();
    let (ticket, seed) = (c1.ticket, c1.seed);
    let config = SealProof::from_id(m.porep.registered_proof)
        .unwrap()
        .porep_config();
    let sector = SectorId::from(m.porep.sector_number);
    let prover = prover_id(m.miner_id);
    let theirs = filecoin_proofs::seal_commit_phase2(&config, c1, prover, sector)
        .unwrap()
        .proof;
    assert!(filecoin_proofs::verify_seal::<SectorShapeBase>(
        &config,
        h32(&m.porep.comm_r),
        h32(&m.porep.comm_d),
        prover,
        sector,
        ticket,
        seed,
        &theirs
    )
    .unwrap());
    same_layout(&ours(ProofKind::PoRep), &theirs);
}

fn post_vanilla(files: &[String]) -> Vec<FallbackPoStSectorProof<SectorShapeBase>> {
    let f = fixtures();
    files
        .iter()
        .map(|v| bincode::deserialize(&std::fs::read(f.dir.join(v)).unwrap()).unwrap())
        .collect()
}

#[test]
fn winning_post_parity() {
    let f = fixtures();
    let w = &f.manifest.winning;
    let cfg = PoStProof::from_id(w.registered_proof, ProofKind::WinningPoSt)
        .unwrap()
        .post_config();
    let vanilla = post_vanilla(&w.vanilla);
    let replicas = [(
        vanilla[0].sector_id,
        filecoin_proofs::PublicReplicaInfo::new(
            filecoin_hashers::Domain::into_bytes(&vanilla[0].comm_r)
                .try_into()
                .unwrap(),
        )
        .unwrap(),
    )];
    let prover = prover_id(f.manifest.miner_id);
    let theirs = filecoin_proofs::generate_winning_post_with_vanilla(
        &cfg,
        &h32(&w.randomness),
        prover,
        vanilla,
    )
    .unwrap();
    assert!(filecoin_proofs::verify_winning_post::<SectorShapeBase>(
        &cfg,
        &h32(&w.randomness),
        &replicas,
        prover,
        &theirs
    )
    .unwrap());
    same_layout(&ours(ProofKind::WinningPoSt), &theirs);
}

#[test]
fn window_post_parity() {
    let f = fixtures();
    let w = &f.manifest.window;
    let cfg = PoStProof::from_id(w.registered_proof, ProofKind::WindowPoSt)
        .unwrap()
        .post_config();
    let vanilla = post_vanilla(&w.vanilla);
    let replicas = vanilla
        .iter()
        .map(|v| {
            (
                v.sector_id,
                filecoin_proofs::PublicReplicaInfo::new(
                    filecoin_hashers::Domain::into_bytes(&v.comm_r)
                        .try_into()
                        .unwrap(),
                )
                .unwrap(),
            )
        })
        .collect();
    let prover = prover_id(f.manifest.miner_id);
    let theirs = filecoin_proofs::generate_single_window_post_with_vanilla(
        &cfg,
        &h32(&w.randomness),
        prover,
        vanilla,
        0,
    )
    .unwrap()
    .0;
    assert!(filecoin_proofs::verify_window_post::<SectorShapeBase>(
        &cfg,
        &h32(&w.randomness),
        &replicas,
        prover,
        &theirs
    )
    .unwrap());
    same_layout(&ours(ProofKind::WindowPoSt), &theirs);
}

#[test]
fn snap_parity() {
    let f = fixtures();
    let s = &f.manifest.snap;
    let config = UpdateProof::from_id(s.registered_proof)
        .unwrap()
        .porep_config();
    let vanilla: Vec<PartitionProof<SectorShapeBase>> = s
        .vanilla
        .iter()
        .map(|v| bincode::deserialize(&std::fs::read(f.dir.join(v)).unwrap()).unwrap())
        .collect();
    let (old, new, d) = (h32(&s.comm_r_old), h32(&s.comm_r_new), h32(&s.comm_d_new));
    let theirs = filecoin_proofs::generate_empty_sector_update_proof_with_vanilla(
        &config, vanilla, old, new, d,
    )
    .unwrap()
    .0;
    assert!(
        filecoin_proofs::verify_empty_sector_update_proof::<SectorShapeBase>(
            &config, &theirs, old, new, d
        )
        .unwrap()
    );
    same_layout(&ours(ProofKind::SnapDeals), &theirs);
}

/// NI-PoRep parity: filecoin-proofs' `seal_commit_phase2` (13 partitions, aggregated) on the
/// same C1 also verifies, and its aggregate has our aggregate's length. Ignored by default:
/// filecoin-proofs' prover takes about 9 minutes for it on 2 cores; run it with
/// `cargo nextest run -p cuzk-filecoin --run-ignored only ni_porep_parity`.
#[test]
#[ignore]
fn ni_porep_parity() {
    let f = fixtures();
    let m = &f.manifest;
    let bytes = std::fs::read(f.dir.join(&m.porep_ni.c1_json)).unwrap();
    let c1 = decode_c1_for_filecoin_proofs::<SectorShapeBase>(&bytes).unwrap();
    let (ticket, seed) = (c1.ticket, c1.seed);
    let config = SealProof::from_id(m.porep_ni.registered_proof)
        .unwrap()
        .porep_config();
    let sector = SectorId::from(m.porep_ni.sector_number);
    let prover = prover_id(m.miner_id);
    let theirs = filecoin_proofs::seal_commit_phase2(&config, c1, prover, sector)
        .unwrap()
        .proof;
    assert!(filecoin_proofs::verify_seal::<SectorShapeBase>(
        &config,
        h32(&m.porep_ni.comm_r),
        h32(&m.porep_ni.comm_d),
        prover,
        sector,
        ticket,
        seed,
        &theirs
    )
    .unwrap());
    let p = plan(&m.porep_request(&f.dir, &m.porep_ni).unwrap()).unwrap();
    let ours = prove_plan(
        p.as_ref(),
        &f.store,
        &CpuBackend::new(),
        ProveOptions::default(),
    )
    .unwrap()
    .proof;
    assert_eq!(ours.len(), theirs.len());
}
