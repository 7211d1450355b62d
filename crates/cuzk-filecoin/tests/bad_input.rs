//! Every kind of bad input gets its own clear error, and no input makes the decoders panic.

mod common;

use common::fixtures;
use cuzk_filecoin::{plan, ProofKind, ProofRequest};
use proptest::prelude::*;

fn request(kind: ProofKind) -> ProofRequest {
    let f = fixtures();
    f.manifest.request(&f.dir, kind).unwrap()
}

fn err_of(req: &ProofRequest) -> String {
    match plan(req) {
        Ok(_) => panic!("accepted a bad request: {req:?}"),
        Err(e) => {
            assert!(e.is_input(), "not reported as bad input: {e}");
            e.to_string()
        }
    }
}

fn expect(req: &ProofRequest, needle: &str) {
    let e = err_of(req);
    assert!(e.contains(needle), "expected '{needle}' in: {e}");
}

#[test]
fn valid_fixture_requests_plan() {
    for kind in ProofKind::ALL {
        plan(&request(kind)).unwrap();
    }
}

#[test]
fn porep_bad_inputs() {
    let good = request(ProofKind::PoRep);
    let mut r = good.clone();
    r.vanilla_proof.truncate(r.vanilla_proof.len() / 2);
    expect(&r, "not valid JSON");
    let mut r = good.clone();
    r.vanilla_proof =
        b"{\"SectorNum\":1,\"Phase1Out\":\"%%%not base64%%%\",\"SectorSize\":2048}".to_vec();
    expect(&r, "Phase1Out is not valid base64");
    let mut r = good.clone();
    r.registered_proof = Some(8); // 32GiB V1_1
    expect(&r, "does not match the C1 output's StackedDrg2KiBV1_1");
    let mut r = good.clone();
    r.sector_size = 32 << 30;
    expect(&r, "sector size 34359738368 does not match");
    let mut r = good.clone();
    r.miner_id = 1001;
    expect(&r, "do not match the C1 output's replica id");
    let mut r = good.clone();
    r.miner_id = 0;
    expect(&r, "miner id is missing");
    let mut r = good.clone();
    r.vanilla_proof.clear();
    expect(&r, "is empty");
    let mut r = good.clone();
    r.kind = None;
    expect(&r, "proof kind is missing");
    let mut r = good;
    r.registered_proof = Some(99);
    expect(&r, "registered seal proof 99 does not exist");
}

#[test]
fn porep_zero_commitment_is_refused() {
    let f = fixtures();
    let json = std::fs::read_to_string(f.dir.join(&f.manifest.porep.c1_json)).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["comm_r"] = serde_json::json!(vec![0u8; 32]);
    let mut r = request(ProofKind::PoRep);
    r.vanilla_proof = serde_json::to_vec(&v).unwrap();
    expect(&r, "comm_r is all zeros");
}

#[test]
fn post_bad_inputs() {
    let good = request(ProofKind::WindowPoSt);
    let mut r = good.clone();
    r.randomness.truncate(31);
    expect(&r, "randomness must be 32 bytes, got 31");
    let mut r = good.clone();
    r.randomness = vec![0xff; 32];
    expect(&r, "randomness is not a valid field element");
    let mut r = good.clone();
    r.vanilla_proofs.clear();
    expect(&r, "no vanilla proofs given");
    let mut r = good.clone();
    r.vanilla_proofs[0].truncate(100);
    expect(
        &r,
        "vanilla proof 0 (FallbackPoStSectorProof) is not valid bincode",
    );
    let mut r = good.clone();
    r.vanilla_proofs.reverse();
    expect(&r, "sector ids must be unique and ascending");
    let mut r = good.clone();
    r.registered_proof = Some(13); // 32GiB window
    expect(
        &r,
        "vanilla proof 0 is not for 32GiB sectors (registered proof 13)",
    );
    let mut r = good.clone();
    r.registered_proof = Some(2);
    expect(&r, "registered PoSt proof 2 is not a window-post proof");
    let mut r = request(ProofKind::WinningPoSt);
    r.vanilla_proofs.push(r.vanilla_proofs[0].clone());
    expect(&r, "WinningPoSt takes 1 sector proof(s), got 2");
    // An index that would size the verifier's inputs from a client's number.
    let mut r = good.clone();
    r.partition_index = u32::MAX;
    expect(&r, "partition index 4294967295 is out of range");
    let mut r = good.clone();
    r.partition_index = 3000;
    expect(&r, "a deadline has at most 3000 partitions");
    let mut r = good;
    r.vanilla_proofs.push(r.vanilla_proofs[0].clone());
    expect(&r, "holds at most 2 sectors, got 3");
}

#[test]
fn snap_bad_inputs() {
    let good = request(ProofKind::SnapDeals);
    let mut r = good.clone();
    r.comm_r_old = vec![0; 32];
    expect(&r, "comm_r_old is all zeros");
    let mut r = good.clone();
    r.comm_d_new = vec![1; 31];
    expect(&r, "comm_d_new must be 32 bytes, got 31");
    let mut r = good.clone();
    r.vanilla_proofs.push(r.vanilla_proofs[0].clone());
    expect(&r, "have 1 partitions, got 2 vanilla partition proofs");
    let mut r = good.clone();
    r.vanilla_proofs[0] = vec![7; 10];
    expect(&r, "vanilla proof 0 (PartitionProof) is not valid bincode");
    let mut r = good;
    r.registered_proof = Some(5);
    expect(&r, "registered update proof 5 does not exist");
}

fn mutate(mut bytes: Vec<u8>, ops: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(pos, op, val) in ops {
        if bytes.is_empty() {
            bytes.push(val);
            continue;
        }
        let i = pos % bytes.len();
        match op % 4 {
            0 => bytes[i] ^= val | 1,
            1 => bytes.truncate(i),
            2 => bytes.insert(i, val),
            _ => {
                bytes.remove(i);
            }
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2500, failure_persistence: None, .. ProptestConfig::default() })]

    // 4 x 2,500 = 10,000 mutated or random inputs, across all four decoders.
    #[test]
    fn decoders_never_panic(
        kind in 0usize..4,
        ops in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..6),
        random in prop::option::of(prop::collection::vec(any::<u8>(), 0..300)),
    ) {
        let kind = ProofKind::ALL[kind];
        let mut r = request(kind);
        let target = match kind {
            ProofKind::PoRep => &mut r.vanilla_proof,
            _ => &mut r.vanilla_proofs[0],
        };
        *target = match random {
            Some(bytes) => bytes,
            None => mutate(std::mem::take(target), &ops),
        };
        // Ok or a clean error; a panic fails the test.
        let _ = plan(&r);
    }
}
