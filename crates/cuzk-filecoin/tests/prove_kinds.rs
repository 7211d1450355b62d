//! Each kind at 2 KiB proves on the CPU backend and verifies with filecoin-proofs' verifier.

mod common;

use common::fixtures;
use cuzk_filecoin::verify::verify_assembled;
use cuzk_filecoin::{plan, prove_plan, Error, ProofKind, ProveOptions};
use cuzk_groth16::CpuBackend;

fn prove(kind: ProofKind, use_pce: bool) -> Vec<u8> {
    let f = fixtures();
    let req = f.manifest.request(&f.dir, kind).unwrap();
    let p = plan(&req).unwrap();
    let out = prove_plan(
        p.as_ref(),
        &f.store,
        &CpuBackend::new(),
        ProveOptions { use_pce },
    )
    .unwrap();
    assert_eq!(out.proof.len(), p.partitions() * 192);
    // prove_plan verified already; ask filecoin-proofs once more, explicitly.
    assert!(
        p.verify(&out.proof).unwrap(),
        "{kind} proof rejected by filecoin-proofs"
    );
    // Each partition passes the check the engine makes when a device returns it, against the
    // inputs its synthesis computed; a partition with a byte changed does not.
    let work = cuzk_filecoin::FilecoinWork::new(p.clone(), &f.store, false).unwrap();
    for (k, part) in out.proof.chunks(192).enumerate() {
        let syn = cuzk_engine::ProofWork::synthesize(&work, k).unwrap();
        assert!(
            cuzk_engine::ProofWork::verify_partition(&work, k, &syn, part).unwrap(),
            "{kind}: partition {k} fails the work's check"
        );
        let mut bad = part.to_vec();
        bad[5] ^= 1;
        assert!(
            !cuzk_engine::ProofWork::verify_partition(&work, k, &syn, &bad).unwrap(),
            "{kind}: a changed partition {k} passes the work's check"
        );
    }
    out.proof
}

#[test]
fn porep_proves_and_verifies() {
    prove(ProofKind::PoRep, true);
}

#[test]
fn snap_proves_and_verifies() {
    prove(ProofKind::SnapDeals, true);
}

#[test]
fn window_post_proves_and_verifies_with_and_without_pce() {
    prove(ProofKind::WindowPoSt, true);
    prove(ProofKind::WindowPoSt, false);
}

#[test]
fn winning_post_proves_and_verifies_with_and_without_pce() {
    prove(ProofKind::WinningPoSt, true);
    prove(ProofKind::WinningPoSt, false);
}

#[test]
fn a_changed_byte_is_reported_with_its_partition() {
    let proof = prove(ProofKind::WindowPoSt, true);
    let f = fixtures();
    let p = plan(&f.manifest.request(&f.dir, ProofKind::WindowPoSt).unwrap()).unwrap();
    for pos in [10, 100, 180] {
        let mut bad = proof.clone();
        bad[pos] ^= 0x01;
        match verify_assembled(p.as_ref(), &bad) {
            Err(Error::Verification { bad_partitions }) => {
                assert_eq!(bad_partitions, vec![0], "byte {pos}")
            }
            other => panic!("byte {pos}: expected a verification failure, got {other:?}"),
        }
    }
    verify_assembled(p.as_ref(), &proof).unwrap();
}

#[test]
fn wrapped_c1_plans_the_same_proof() {
    let f = fixtures();
    let mut req = f.manifest.request(&f.dir, ProofKind::PoRep).unwrap();
    let plain = plan(&req).unwrap();
    req.vanilla_proof = std::fs::read(f.dir.join(&f.manifest.porep.c1_wrapped)).unwrap();
    req.sector_number = 0; // taken from the wrapper
    let wrapped = plan(&req).unwrap();
    assert_eq!(plain.partitions(), wrapped.partitions());
    assert_eq!(
        plain.public_inputs(0).unwrap(),
        wrapped.public_inputs(0).unwrap()
    );
}

#[test]
fn parameters_are_charged_to_the_budget_and_evicted_least_recently_used_when_unreferenced() {
    use cuzk_filecoin::{CircuitSpec, CircuitStore, SectorSize, Tier};
    let f = fixtures();
    let win = CircuitSpec::of(ProofKind::WinningPoSt, SectorSize::S2KiB).unwrap();
    let win_bytes = std::fs::metadata(f.dir.join("params").join(win.params_file_name()))
        .unwrap()
        .len();
    let window = CircuitSpec::of(ProofKind::WindowPoSt, SectorSize::S2KiB).unwrap();
    // Room for the WinningPoSt parameters and little else.
    let budget = cuzk_engine::MemoryBudget::new("host", win_bytes + 1000);
    let store =
        CircuitStore::new(f.dir.join("params"), &f.dir.join("cache")).with_budget(budget.clone());
    let held = store.params(&win).unwrap();
    assert_eq!(budget.used(), win_bytes);
    let st = store.srs_status();
    assert_eq!((st.len(), st[0].tier, st[0].refs), (1, Tier::Hot, 1));
    let err = store.params(&window).unwrap_err();
    assert!(err.to_string().contains("nothing evictable"), "{err}");
    drop(held);
    store.params(&window).unwrap();
    assert!(!store.params_loaded(&win), "unreferenced entry evicted");
    assert!(store.params_loaded(&window));
    assert!(store.evict_params(&window).is_some());
    assert_eq!(budget.used(), 0);
}

/// PoRep's witness is synthesized a challenge at a time in parallel on the PCE path; the
/// assignment must equal direct (sequential) synthesis of the whole circuit.
#[test]
fn porep_witness_by_challenge_equals_sequential_synthesis() {
    let f = fixtures();
    let req = f.manifest.request(&f.dir, ProofKind::PoRep).unwrap();
    let p = plan(&req).unwrap();
    let pce = f.store.pce(p.circuit()).unwrap();
    let split = p.synthesize(0, Some(&pce)).unwrap().assignment;
    let direct = p.synthesize(0, None).unwrap().assignment;
    assert_eq!(split.witness.inputs, direct.witness.inputs);
    assert_eq!(split.witness.aux, direct.witness.aux);
    assert!(split.a == direct.a && split.b == direct.b && split.c == direct.c);
}

/// NI-PoRep: 13 partitions proved, aggregated with SnarkPack, verified by filecoin-proofs'
/// `verify_seal`; a bad partition is named before aggregation and a changed aggregate byte is
/// rejected.
#[test]
fn ni_porep_aggregates_and_verifies_and_names_a_bad_partition() {
    use cuzk_filecoin::prove_partitions;
    use cuzk_filecoin::verify::assemble_verified;
    let f = fixtures();
    let req = f
        .manifest
        .porep_request(&f.dir, &f.manifest.porep_ni)
        .unwrap();
    let p = plan(&req).unwrap();
    assert_eq!(p.partitions(), 13);
    assert!(p.aggregated());
    let (parts, _) = prove_partitions(
        p.as_ref(),
        &f.store,
        &CpuBackend::new(),
        ProveOptions::default(),
    )
    .unwrap();
    assert_eq!(parts.len(), 13 * 192);
    let proof = assemble_verified(p.as_ref(), &parts).unwrap();
    assert_ne!(proof.len(), parts.len(), "the output is the aggregate");
    assert!(
        p.verify(&proof).unwrap(),
        "NI-PoRep rejected by verify_seal"
    );

    let mut bad_parts = parts.clone();
    bad_parts[5 * 192 + 20] ^= 0x01;
    match assemble_verified(p.as_ref(), &bad_parts) {
        Err(Error::Verification { bad_partitions }) => assert_eq!(bad_partitions, vec![5]),
        other => panic!("expected partition 5 named, got {other:?}"),
    }
    let mut bad = proof.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x01;
    assert!(
        matches!(
            verify_assembled(p.as_ref(), &bad),
            Err(Error::Verification { .. })
        ),
        "a changed aggregate byte must not verify"
    );
}
