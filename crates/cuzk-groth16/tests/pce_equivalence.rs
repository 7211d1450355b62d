//! The PCE path (record once, witness-only synthesis, sparse products) must produce exactly
//! what direct evaluation of every linear combination produces.

use cuzk_groth16::synthetic::SyntheticCircuit;
use cuzk_groth16::{synthesize_direct, synthesize_witness, Pce};
use proptest::prelude::*;

fn check(circuit: SyntheticCircuit) -> Result<(), TestCaseError> {
    let pce = Pce::extract("synthetic", circuit).expect("records");
    let witness = synthesize_witness(circuit).expect("witness");
    let direct = synthesize_direct(circuit).expect("direct");

    // Witness layout equals the recording's layout and the direct system's.
    prop_assert_eq!(witness.inputs.len(), pce.num_inputs());
    prop_assert_eq!(witness.aux.len(), pce.num_aux());
    prop_assert_eq!(&witness, &direct.witness);
    prop_assert_eq!(pce.num_inputs(), circuit.num_public_inputs() + 1);
    prop_assert_eq!(
        pce.num_constraints(),
        circuit.constraints + pce.num_inputs(),
        "circuit constraints plus one per input"
    );

    let evaluated = pce.evaluate(witness).expect("evaluates");
    prop_assert_eq!(&evaluated.a, &direct.a);
    prop_assert_eq!(&evaluated.b, &direct.b);
    prop_assert_eq!(&evaluated.c, &direct.c);
    prop_assert_eq!(&*evaluated.density, &*direct.density);
    // A satisfied circuit: a * b = c on every constraint.
    for ((a, b), c) in evaluated.a.iter().zip(&evaluated.b).zip(&evaluated.c) {
        prop_assert_eq!(*a * b, *c);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn pce_matches_direct_evaluation(
        constraints in 0usize..400,
        inputs in 0usize..6,
        parts in 1usize..5,
        seed in any::<u64>(),
    ) {
        check(SyntheticCircuit { constraints, inputs, parts, seed })?;
    }
}

#[test]
fn extensible_synthesis_maps_child_one_onto_parent_one() {
    // Four parts synthesized as child systems, each with inputs allocated before and after
    // its constraints; each child's temporary ONE must become the parent's input 0.
    let circuit = SyntheticCircuit {
        constraints: 1000,
        inputs: 3,
        parts: 4,
        seed: 11,
    };
    check(circuit).unwrap();
    let pce = Pce::extract("x", circuit).unwrap();
    assert_eq!(pce.num_inputs(), 1 + 12);
}

#[test]
fn witness_that_does_not_fit_is_refused() {
    let small = SyntheticCircuit {
        constraints: 10,
        inputs: 1,
        parts: 1,
        seed: 1,
    };
    let big = SyntheticCircuit {
        constraints: 20,
        inputs: 1,
        parts: 1,
        seed: 1,
    };
    let pce = Pce::extract("small", small).unwrap();
    let err = pce.evaluate(synthesize_witness(big).unwrap()).unwrap_err();
    assert!(
        err.to_string().contains("witness layout does not match"),
        "{err}"
    );
}

#[test]
fn coefficients_are_compact() {
    let pce = Pce::extract("c", SyntheticCircuit::filling_domain(12, 3)).unwrap();
    let stats = pce.stats();
    assert_eq!(
        pce.matrices()[0].coeff_index_bytes(),
        2,
        "narrow indices for small tables"
    );
    assert!(stats.bytes_per_nonzero() < 12.0, "{stats:?}");
}

/// An extraction asks for its memory before allocating it: with room it records the same PCE
/// as a plain extraction, its peak ask at least the bytes the PCE holds and within a few
/// times of them; with too little it stops with an error naming the refusal.
#[test]
fn extraction_asks_for_its_memory_first_and_stops_when_refused() {
    let circuit = SyntheticCircuit::filling_domain(12, 3);
    let plain = Pce::extract("c", circuit).unwrap();
    let mut asked = 0u64;
    let mut count = |b: u64| {
        asked = asked.max(b);
        Ok(())
    };
    let within = Pce::extract_within("c", circuit, &mut count).unwrap();
    assert_eq!(within.fingerprint(), plain.fingerprint());
    let held = plain.stats().bytes as u64;
    assert!(
        asked >= held,
        "asked for {asked} bytes, the PCE holds {held}"
    );

    let mut left = held / 4;
    let mut tight = |b: u64| {
        left = left
            .checked_sub(b)
            .ok_or_else(|| format!("{b} bytes do not fit"))?;
        Ok(())
    };
    let e = Pce::extract_within("c", circuit, &mut tight)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("host memory refused") && e.contains("do not fit"),
        "{e}"
    );
}
