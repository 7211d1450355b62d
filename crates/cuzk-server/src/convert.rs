//! Wire messages to and from the engine's and the Filecoin layer's types.

use std::time::Duration;

use cuzk_engine::{JobStatus, JobView, Priority};
use cuzk_filecoin::{ProofKind, ProofRequest, SectorSize};
use tonic::Status;

use crate::proto;

/// The Filecoin proof kind a wire kind names.
pub fn kind(k: i32) -> Result<ProofKind, Status> {
    match proto::ProofKind::try_from(k) {
        Ok(proto::ProofKind::PorepSealCommit) => Ok(ProofKind::PoRep),
        Ok(proto::ProofKind::SnapDealsUpdate) => Ok(ProofKind::SnapDeals),
        Ok(proto::ProofKind::WindowPostPartition) => Ok(ProofKind::WindowPoSt),
        Ok(proto::ProofKind::WinningPost) => Ok(ProofKind::WinningPoSt),
        Ok(proto::ProofKind::Unspecified) => {
            Err(Status::invalid_argument("proof_kind is required"))
        }
        Err(_) => Err(Status::invalid_argument(format!(
            "proof_kind {k} is not a known kind"
        ))),
    }
}

/// The engine priority a wire priority names (None: the kind's default).
pub fn priority(p: i32) -> Result<Option<Priority>, Status> {
    match proto::Priority::try_from(p) {
        Ok(proto::Priority::Unspecified) => Ok(None),
        Ok(proto::Priority::Low) => Ok(Some(Priority::Low)),
        Ok(proto::Priority::Normal) => Ok(Some(Priority::Normal)),
        Ok(proto::Priority::High) => Ok(Some(Priority::High)),
        Ok(proto::Priority::Critical) => Ok(Some(Priority::Critical)),
        Err(_) => Err(Status::invalid_argument(format!(
            "priority {p} is not a known priority"
        ))),
    }
}

/// The Filecoin request a wire request describes. PoRep's registered proof 0 means "take it
/// from the C1 output" (the field cannot be told apart from unset); other kinds use the
/// number as given.
pub fn request(r: &proto::SubmitProofRequest) -> Result<ProofRequest, Status> {
    into_request(r.clone())
}

/// [`request`], moving the proof bytes out of the wire message instead of copying them.
pub fn into_request(r: proto::SubmitProofRequest) -> Result<ProofRequest, Status> {
    let kind = kind(r.proof_kind)?;
    let registered_proof = match (kind, r.registered_proof) {
        (ProofKind::PoRep, 0) => None,
        (_, n) => Some(n),
    };
    Ok(ProofRequest {
        kind: Some(kind),
        registered_proof,
        sector_size: r.sector_size,
        vanilla_proof: r.vanilla_proof,
        vanilla_proofs: r.vanilla_proofs,
        sector_number: r.sector_number,
        miner_id: r.miner_id,
        randomness: r.randomness,
        partition_index: r.partition_index,
        comm_r_old: r.comm_r_old,
        comm_r_new: r.comm_r_new,
        comm_d_new: r.comm_d_new,
    })
}

/// A proof kind's name as Curio's cuzk daemon spells it in GetStatus queues ("porep-c2",
/// "snap-update", "window-post", "winning-post"), for tools written against that daemon;
/// other names pass through.
pub fn curio_kind_name(kind: &str) -> &str {
    match kind {
        "porep" => "porep-c2",
        "snap" => "snap-update",
        k => k,
    }
}

/// "healthy" or "quarantined".
pub fn health_name(h: &cuzk_engine::Health) -> &'static str {
    match h {
        cuzk_engine::Health::Healthy => "healthy",
        cuzk_engine::Health::Quarantined { .. } => "quarantined",
    }
}

/// The wire kind of a Filecoin proof kind.
pub fn wire_kind(kind: ProofKind) -> proto::ProofKind {
    match kind {
        ProofKind::PoRep => proto::ProofKind::PorepSealCommit,
        ProofKind::SnapDeals => proto::ProofKind::SnapDealsUpdate,
        ProofKind::WindowPoSt => proto::ProofKind::WindowPostPartition,
        ProofKind::WinningPoSt => proto::ProofKind::WinningPost,
    }
}

/// The wire request for `r` (what clients send): the inverse of [`request`]. An unset
/// registered proof goes out as 0.
pub fn submit_request(
    request_id: &str,
    kind: ProofKind,
    r: &ProofRequest,
    priority: proto::Priority,
) -> proto::SubmitProofRequest {
    proto::SubmitProofRequest {
        request_id: request_id.to_owned(),
        proof_kind: wire_kind(kind) as i32,
        sector_size: r.sector_size,
        registered_proof: r.registered_proof.unwrap_or(0),
        priority: priority as i32,
        vanilla_proof: r.vanilla_proof.clone(),
        vanilla_proofs: r.vanilla_proofs.clone(),
        sector_number: r.sector_number,
        miner_id: r.miner_id,
        randomness: r.randomness.clone(),
        partition_index: r.partition_index,
        comm_r_old: r.comm_r_old.clone(),
        comm_r_new: r.comm_r_new.clone(),
        comm_d_new: r.comm_d_new.clone(),
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

/// A job's state as AwaitProof reports it; a job still queued or running is TIMEOUT (the
/// caller's wait ended first).
pub fn await_response(v: &JobView) -> proto::AwaitProofResponse {
    use proto::await_proof_response::Status as S;
    let (status, proof, error_message) = match &v.status {
        JobStatus::Completed(p) => (S::Completed, p.clone(), String::new()),
        JobStatus::Failed(e) => (S::Failed, Vec::new(), e.clone()),
        JobStatus::Cancelled => (S::Cancelled, Vec::new(), "cancelled".to_owned()),
        JobStatus::Queued | JobStatus::Running => (
            S::Timeout,
            Vec::new(),
            "the job did not finish within timeout_ms".to_owned(),
        ),
    };
    proto::AwaitProofResponse {
        job_id: v.id.clone(),
        status: status as i32,
        proof,
        error_message,
        queue_wait_ms: ms(v.timings.queue_wait),
        srs_load_ms: ms(v.timings.params_load),
        synthesis_ms: ms(v.timings.synthesis),
        gpu_compute_ms: ms(v.timings.device),
        total_ms: ms(v.timings.total),
    }
}

/// The circuit an SRS id names ("porep-32g", "winning-2k", ...).
pub fn circuit(srs_id: &str) -> Result<cuzk_filecoin::CircuitSpec, Status> {
    for size in SectorSize::ALL {
        for kind in ProofKind::ALL {
            if let Ok(spec) = cuzk_filecoin::CircuitSpec::of(kind, size) {
                if spec.srs_id() == srs_id {
                    return Ok(spec);
                }
            }
        }
    }
    Err(Status::invalid_argument(format!(
        "{srs_id:?} names no circuit (expected e.g. porep-32g, snap-32g, wpost-32g, winning-32g)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_missing_kinds_are_invalid() {
        assert_eq!(kind(0).unwrap_err().code(), tonic::Code::InvalidArgument);
        assert_eq!(kind(9).unwrap_err().code(), tonic::Code::InvalidArgument);
        assert_eq!(kind(4).unwrap(), ProofKind::WinningPoSt);
        assert_eq!(
            priority(7).unwrap_err().code(),
            tonic::Code::InvalidArgument
        );
        assert_eq!(priority(0).unwrap(), None);
    }

    #[test]
    fn submit_request_is_the_inverse_of_request() {
        for kind in ProofKind::ALL {
            let r = ProofRequest {
                kind: Some(kind),
                registered_proof: Some(3),
                sector_size: 2048,
                vanilla_proof: vec![1, 2],
                vanilla_proofs: vec![vec![3], vec![4, 5]],
                sector_number: 7,
                miner_id: 1000,
                randomness: vec![9; 32],
                partition_index: 2,
                comm_r_old: vec![1; 32],
                comm_r_new: vec![2; 32],
                comm_d_new: vec![3; 32],
            };
            let w = submit_request("id", kind, &r, proto::Priority::High);
            assert_eq!(w.request_id, "id");
            assert_eq!(priority(w.priority).unwrap(), Some(Priority::High));
            assert_eq!(request(&w).unwrap(), r, "{kind}");
        }
    }

    #[test]
    fn queue_names_are_spelled_as_curios_daemon_spells_them() {
        let names: Vec<&str> = ProofKind::ALL
            .iter()
            .map(|k| curio_kind_name(k.name()))
            .collect();
        assert_eq!(
            names,
            ["porep-c2", "snap-update", "window-post", "winning-post"]
        );
    }

    #[test]
    fn srs_ids_name_circuits() {
        assert_eq!(circuit("porep-2k").unwrap().srs_id(), "porep-2k");
        assert_eq!(circuit("winning-32g").unwrap().srs_id(), "winning-32g");
        assert!(circuit("porep-3k").is_err());
    }
}
