//! Damaged PCE and parameter files are refused with an error, never a panic.

use bellperson::groth16 as bp;
use blstrs::Bls12;
use cuzk_groth16::synthetic::SyntheticCircuit;
use cuzk_groth16::{Error, Parameters, Pce, PointCheck, VerifyingKey};
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use std::sync::OnceLock;

fn sample_pce() -> &'static (Pce, Vec<u8>) {
    static PCE: OnceLock<(Pce, Vec<u8>)> = OnceLock::new();
    PCE.get_or_init(|| {
        let circuit = SyntheticCircuit {
            constraints: 300,
            inputs: 3,
            parts: 2,
            seed: 21,
        };
        let pce = Pce::extract("porep-test", circuit).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.pce");
        pce.save(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        (pce, bytes)
    })
}

fn load_bytes(bytes: &[u8], id: Option<&str>) -> Result<Pce, Error> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("y.pce");
    std::fs::write(&path, bytes).unwrap();
    Pce::load(&path, id)
}

#[test]
fn pce_round_trips() {
    let (pce, bytes) = sample_pce();
    let loaded = load_bytes(bytes, Some("porep-test")).unwrap();
    assert_eq!(loaded.fingerprint(), pce.fingerprint());
    assert_eq!(loaded.matrices(), pce.matrices());
    assert_eq!(loaded.coefficients(), pce.coefficients());
    assert_eq!(loaded.density(), pce.density());
    assert_eq!(loaded.stats(), pce.stats());
    // In memory: the file's body, plus each matrix's index of one start per 64 rows.
    let index = 3 * 4 * ((pce.num_constraints() as u64).div_ceil(64) + 1);
    assert_eq!(
        bytes.len() as u64 + index,
        144 + 10 + pce.stats().bytes as u64
    );
}

#[test]
fn pce_for_another_circuit_is_refused() {
    let (_, bytes) = sample_pce();
    let err = load_bytes(bytes, Some("wpost-test")).unwrap_err();
    assert!(err.to_string().contains("expected 'wpost-test'"), "{err}");
}

#[test]
fn pce_of_another_version_is_refused() {
    let (_, bytes) = sample_pce();
    let mut b = bytes.clone();
    let other = cuzk_groth16::PCE_FORMAT_VERSION + 1;
    b[8..12].copy_from_slice(&other.to_le_bytes());
    let err = load_bytes(&b, None).unwrap_err();
    assert!(
        err.to_string().contains(&format!("format version {other}")),
        "{err}"
    );
}

/// Regression: a changed circuit-id or reserved header byte was once not covered by any check.
#[test]
fn pce_with_any_header_byte_changed_is_refused() {
    let (_, bytes) = sample_pce();
    for i in 0..144 + "porep-test".len() {
        let mut b = bytes.clone();
        b[i] ^= 0x01;
        assert!(
            load_bytes(&b, None).is_err(),
            "header byte {i} changed and still accepted"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn pce_with_one_byte_changed_is_refused(pos in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let (_, bytes) = sample_pce();
        let mut b = bytes.clone();
        let i = pos.index(b.len());
        b[i] ^= flip;
        prop_assert!(load_bytes(&b, None).is_err(), "byte {} changed and still accepted", i);
    }

    #[test]
    fn truncated_pce_is_refused(len in any::<prop::sample::Index>()) {
        let (_, bytes) = sample_pce();
        let n = len.index(bytes.len());
        let err = load_bytes(&bytes[..n], None).unwrap_err();
        prop_assert!(matches!(err, Error::PceFile { .. }), "{}", err);
    }
}

fn sample_params() -> &'static Vec<u8> {
    static P: OnceLock<Vec<u8>> = OnceLock::new();
    P.get_or_init(|| {
        let circuit = SyntheticCircuit {
            constraints: 50,
            inputs: 2,
            parts: 1,
            seed: 3,
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let p = bp::generate_random_parameters::<Bls12, _, _>(circuit, &mut rng).unwrap();
        let mut bytes = Vec::new();
        p.write(&mut bytes).unwrap();
        bytes
    })
}

#[test]
fn params_file_round_trips_and_vk_file_reads() {
    let bytes = sample_params();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.params");
    std::fs::write(&path, bytes).unwrap();
    let p = Parameters::read_file(&path, PointCheck::Subgroup).unwrap();
    let mut out = Vec::new();
    p.write(&mut out).unwrap();
    assert_eq!(&out, bytes);

    let vk_path = dir.path().join("p.vk");
    let mut vk_bytes = Vec::new();
    p.vk.write(&mut vk_bytes).unwrap();
    std::fs::write(&vk_path, &vk_bytes).unwrap();
    assert_eq!(VerifyingKey::read_file(&vk_path).unwrap(), p.vk);
    assert!(VerifyingKey::read(&vk_bytes[..vk_bytes.len() - 1]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn truncated_params_are_an_error(len in any::<prop::sample::Index>()) {
        let bytes = sample_params();
        let n = len.index(bytes.len());
        let err = Parameters::read_bytes(&bytes[..n], "t.params", PointCheck::OnCurve).unwrap_err();
        prop_assert!(err.to_string().contains("t.params"), "{}", err);
    }

    #[test]
    fn corrupted_params_never_panic(pos in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let mut b = sample_params().clone();
        let i = pos.index(b.len());
        b[i] ^= flip;
        // Some flips leave a valid point (e.g. in a coordinate that stays on the curve only
        // by chance, essentially never); what matters is an error instead of a panic.
        let _ = Parameters::read_bytes(&b, "c.params", PointCheck::OnCurve);
    }
}

#[test]
fn params_with_trailing_bytes_are_refused() {
    let mut b = sample_params().clone();
    b.extend_from_slice(&[0, 0, 0]);
    let err = Parameters::read_bytes(&b, "x.params", PointCheck::OnCurve).unwrap_err();
    assert!(err.to_string().contains("3 unexpected bytes"), "{err}");
}
