//! Timing-only inputs (PoRep C1 and SnapDeals with arbitrary values of a production shape):
//! made at 2 KiB here, where the real circuit's PCE exists, they synthesize into exactly the
//! real circuit's variables; `plan` refuses them, benchmarks' `plan_for_timing` takes them,
//! and a proof made from them does not verify.

mod common;

use common::fixtures;
use cuzk_filecoin::timing_inputs::{porep_request, snap_request};
use cuzk_filecoin::{
    plan, plan_for_timing, prove_partitions_with, ProofKind, ProofRequest, SealProof, SectorSize,
    UpdateProof,
};
use cuzk_groth16::{random_point_parameters, CpuBackend};
use filecoin_proofs::{SectorShape32GiB, SectorShapeBase};
use rand::SeedableRng;

fn timing_request(kind: ProofKind) -> ProofRequest {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    match kind {
        ProofKind::PoRep => {
            porep_request::<SectorShapeBase>(SealProof::of(SectorSize::S2KiB, 1), 1000, 3, &mut rng)
        }
        _ => snap_request::<SectorShapeBase>(UpdateProof::of(SectorSize::S2KiB), &mut rng),
    }
    .unwrap()
}

fn check(kind: ProofKind) {
    let f = fixtures();
    let req = timing_request(kind);
    let e = plan(&req).err().expect("plan refuses a timing-only input");
    assert!(e.to_string().contains("timing-only"), "{e}");

    let p = plan_for_timing(&req).unwrap();
    assert!(p.timing_only());
    let real = plan(&f.manifest.request(&f.dir, kind).unwrap()).unwrap();
    assert!(!real.timing_only());
    assert_eq!(p.circuit(), real.circuit());
    assert_eq!(p.partitions(), real.partitions());

    // The real circuit's PCE evaluates the timing-only witness: the same inputs and aux
    // variables, in the same layout.
    let pce = f.store.pce(p.circuit()).unwrap();
    let syn = p.synthesize(0, Some(&pce)).unwrap();
    let real_syn = real.synthesize(0, Some(&pce)).unwrap();
    assert_eq!(syn.assignment.witness.inputs.len(), pce.num_inputs());
    assert_eq!(syn.assignment.witness.aux.len(), pce.num_aux());
    assert_eq!(syn.assignment.a.len(), real_syn.assignment.a.len());
    // Direct synthesis agrees on the shape too (no PCE involved).
    let direct = p.synthesize(0, None).unwrap();
    assert_eq!(direct.assignment.witness.aux.len(), pce.num_aux());

    // It proves against random-point parameters of the circuit's sizes, and the result is
    // not a valid proof.
    let params = random_point_parameters(&pce, 1).unwrap();
    let (proof, _) =
        prove_partitions_with(p.as_ref(), &params, Some(&pce), &CpuBackend::new()).unwrap();
    assert_eq!(proof.len(), p.partitions() * 192);
    assert!(
        !p.verify(&proof).unwrap_or(false),
        "{kind}: a timing-only proof verified"
    );
}

#[test]
fn timing_only_porep_has_the_real_shape_and_is_refused_outside_benchmarks() {
    check(ProofKind::PoRep);
}

#[test]
fn timing_only_snap_deals_has_the_real_shape_and_is_refused_outside_benchmarks() {
    check(ProofKind::SnapDeals);
}

/// At 32 GiB the inputs decode into plans of the registered proofs' partition counts (10 PoRep
/// partitions of 18 challenges, 16 SnapDeals partitions), with the replica id and the
/// SnapDeals encoding consistent, and are refused outside benchmarks.
#[test]
fn timing_only_inputs_at_32_gib_plan_with_the_real_partition_counts() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let proof = SealProof::of(SectorSize::S32GiB, 1);
    let req = porep_request::<SectorShape32GiB>(proof, 1000, 5, &mut rng).unwrap();
    assert!(plan(&req).is_err());
    let p = plan_for_timing(&req).unwrap();
    assert_eq!(p.partitions(), 10);

    let req =
        snap_request::<SectorShape32GiB>(UpdateProof::of(SectorSize::S32GiB), &mut rng).unwrap();
    assert!(plan(&req).is_err());
    assert_eq!(plan_for_timing(&req).unwrap().partitions(), 16);
}
