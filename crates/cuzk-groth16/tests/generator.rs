//! Our parameter generator against bellperson's, trapdoor for trapdoor.

use bellperson::groth16 as bp;
use blstrs::{Bls12, G1Projective, G2Projective};
use cuzk_groth16::synthetic::SyntheticCircuit;
use cuzk_groth16::{
    generate_insecure_parameters, generate_parameters_with, prove_random, synthesize, CpuBackend,
    Pce, PreparedVerifyingKey, Trapdoor,
};
use group::Group;
use rand_chacha::rand_core::SeedableRng;

#[test]
fn parameters_equal_bellpersons_for_the_same_trapdoor() {
    for circuit in [
        SyntheticCircuit {
            constraints: 100,
            inputs: 2,
            parts: 1,
            seed: 1,
        },
        SyntheticCircuit {
            constraints: 500,
            inputs: 3,
            parts: 3,
            seed: 2,
        },
        SyntheticCircuit::filling_domain(9, 3),
    ] {
        let t = Trapdoor::random(&mut rand_chacha::ChaCha8Rng::seed_from_u64(circuit.seed));
        let pce = Pce::extract("g", circuit).unwrap();
        let ours = generate_parameters_with(&pce, &t).unwrap();
        let theirs = bp::generate_parameters::<Bls12, _>(
            circuit,
            G1Projective::generator(),
            G2Projective::generator(),
            t.alpha,
            t.beta,
            t.gamma,
            t.delta,
            t.tau,
        )
        .unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        ours.write(&mut a).unwrap();
        theirs.write(&mut b).unwrap();
        assert_eq!(a.len(), b.len(), "{circuit:?}");
        assert!(a == b, "parameters differ for {circuit:?}");
    }
}

#[test]
fn generated_parameters_prove_and_verify() {
    let circuit = SyntheticCircuit {
        constraints: 3000,
        inputs: 4,
        parts: 2,
        seed: 9,
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let pce = Pce::extract("g", circuit).unwrap();
    let params = generate_insecure_parameters(&pce, &mut rng).unwrap();
    let pa = &synthesize(&pce, vec![circuit]).unwrap()[0];
    let proof = prove_random(&CpuBackend::new(), &params, pa, &mut rng).unwrap();
    assert!(PreparedVerifyingKey::new(&params.vk)
        .verify(&proof, pa.public_inputs())
        .unwrap());
}

#[test]
fn an_unconstrained_variable_is_refused() {
    use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
    use blstrs::Scalar;
    struct Loose;
    impl Circuit<Scalar> for Loose {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let x = cs.alloc(|| "x", || Ok(Scalar::from(3u64)))?;
            let _unused = cs.alloc(|| "y", || Ok(Scalar::from(4u64)))?;
            cs.enforce(
                || "x*x",
                |lc| lc + x,
                |lc| lc + x,
                |lc| lc + (Scalar::from(9u64), CS::one()),
            );
            Ok(())
        }
    }
    let pce = Pce::extract("loose", Loose).unwrap();
    let err = generate_insecure_parameters(&pce, &mut rand_chacha::ChaCha8Rng::seed_from_u64(1))
        .unwrap_err();
    assert!(err.to_string().contains("unconstrained"), "{err}");
}
