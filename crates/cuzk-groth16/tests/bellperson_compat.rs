//! Our prover against bellperson's: same parameters, same r and s, same bytes; and proofs
//! that bellperson's verifier accepts (and rejects once tampered with).

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use cuzk_groth16::synthetic::SyntheticCircuit;
use cuzk_groth16::{
    prove, prove_random, synthesize, CpuBackend, Parameters, Pce, PointCheck, PreparedVerifyingKey,
    Proof,
};
use ff::Field;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

struct Setup {
    circuit: SyntheticCircuit,
    bp_params: bp::Parameters<Bls12>,
    params: Parameters,
    pce: Pce,
}

fn setup(circuit: SyntheticCircuit) -> Setup {
    let mut rng = ChaCha8Rng::seed_from_u64(circuit.seed);
    let bp_params = bp::generate_random_parameters::<Bls12, _, _>(circuit, &mut rng).unwrap();
    let mut bytes = Vec::new();
    bp_params.write(&mut bytes).unwrap();
    let params = Parameters::read_bytes(&bytes, "bellperson", PointCheck::Subgroup).unwrap();
    let pce = Pce::extract("synthetic", circuit).unwrap();
    Setup {
        circuit,
        bp_params,
        params,
        pce,
    }
}

fn bp_proof(p: &Proof) -> bp::Proof<Bls12> {
    bp::Proof::read(&p.to_bytes()[..]).unwrap()
}

fn public_inputs(s: &Setup) -> Vec<Scalar> {
    synthesize(&s.pce, vec![s.circuit]).unwrap()[0]
        .public_inputs()
        .to_vec()
}

fn circuits() -> Vec<SyntheticCircuit> {
    vec![
        SyntheticCircuit {
            constraints: 1,
            inputs: 0,
            parts: 1,
            seed: 1,
        },
        SyntheticCircuit {
            constraints: 200,
            inputs: 3,
            parts: 1,
            seed: 2,
        },
        // Extensible: bellperson's prover takes the child-system path, its parameter
        // generator the inline path; our recording must agree with both.
        SyntheticCircuit {
            constraints: 700,
            inputs: 2,
            parts: 3,
            seed: 3,
        },
        // Exactly filling a domain of 2^10.
        SyntheticCircuit::filling_domain(10, 4),
    ]
}

#[test]
fn proofs_are_byte_identical_to_bellperson_with_the_same_r_and_s() {
    let backend = CpuBackend::new();
    for circuit in circuits() {
        let s = setup(circuit);
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let (r, sv) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let ours = prove(
            &backend,
            &s.params,
            &synthesize(&s.pce, vec![circuit]).unwrap()[0],
            r,
            sv,
        )
        .unwrap();
        let theirs = bp::create_proof(circuit, &s.bp_params, r, sv).unwrap();
        let mut theirs_bytes = Vec::new();
        theirs.write(&mut theirs_bytes).unwrap();
        assert_eq!(ours.to_bytes().to_vec(), theirs_bytes, "{circuit:?}");
    }
}

#[test]
fn bellperson_verifies_our_random_proofs_and_rejects_tampering() {
    let backend = CpuBackend::new();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for circuit in circuits() {
        let s = setup(circuit);
        let pa = &synthesize(&s.pce, vec![circuit]).unwrap()[0];
        let proof = prove_random(&backend, &s.params, pa, &mut rng).unwrap();
        let inputs = public_inputs(&s);
        let bp_pvk = bp::prepare_verifying_key(&s.bp_params.vk);
        assert!(
            bp::verify_proof(&bp_pvk, &bp_proof(&proof), &inputs).unwrap(),
            "{circuit:?}"
        );
        let pvk = PreparedVerifyingKey::new(&s.params.vk);
        assert!(pvk.verify(&proof, &inputs).unwrap());

        // Tampered proof: swap A for another valid point.
        let mut bad = proof;
        bad.a = (proof.a * Scalar::from(2u64)).into();
        assert!(!bp::verify_proof(&bp_pvk, &bp_proof(&bad), &inputs).unwrap());
        assert!(!pvk.verify(&bad, &inputs).unwrap());

        // Tampered public input.
        if !inputs.is_empty() {
            let mut wrong = inputs.clone();
            wrong[0] += Scalar::ONE;
            assert!(!bp::verify_proof(&bp_pvk, &bp_proof(&proof), &wrong).unwrap());
            assert!(!pvk.verify(&proof, &wrong).unwrap());
        }
        // Wrong number of inputs is an error, not a verdict.
        let mut extra = inputs.clone();
        extra.push(Scalar::ONE);
        assert!(pvk.verify(&proof, &extra).is_err());
    }
}

#[test]
fn a_flipped_proof_byte_is_rejected_or_undecodable() {
    let backend = CpuBackend::new();
    let s = setup(circuits()[1]);
    let pa = &synthesize(&s.pce, vec![s.circuit]).unwrap()[0];
    let proof = prove_random(&backend, &s.params, pa, &mut ChaCha8Rng::seed_from_u64(8)).unwrap();
    let pvk = PreparedVerifyingKey::new(&s.params.vk);
    let inputs = public_inputs(&s);
    let bytes = proof.to_bytes();
    for pos in [0, 20, 47, 48, 100, 143, 144, 191] {
        let mut b = bytes;
        b[pos] ^= 0x04;
        match Proof::from_bytes(&b) {
            Err(_) => {}
            Ok(p) => assert!(!pvk.verify(&p, &inputs).unwrap(), "byte {pos}"),
        }
    }
    assert!(Proof::from_bytes(&bytes[..191]).is_err());
    assert_eq!(Proof::from_bytes(&bytes).unwrap(), proof);
}

#[test]
fn parameters_of_another_circuit_are_refused() {
    let backend = CpuBackend::new();
    let a = setup(circuits()[1]);
    let b = setup(circuits()[2]);
    let pa = &synthesize(&a.pce, vec![a.circuit]).unwrap()[0];
    let err = prove(&backend, &b.params, pa, Scalar::ONE, Scalar::ONE).unwrap_err();
    assert!(err.to_string().contains("parameters do not match"), "{err}");
}

#[test]
fn parameters_round_trip_through_our_writer() {
    let s = setup(circuits()[1]);
    let mut ours = Vec::new();
    s.params.write(&mut ours).unwrap();
    let mut theirs = Vec::new();
    s.bp_params.write(&mut theirs).unwrap();
    assert_eq!(ours, theirs);
}
