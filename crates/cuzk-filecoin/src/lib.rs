//! Filecoin's proof kinds as circuits for cuzk.
//!
//! # What this crate owns
//!
//! - The registered-proof numbers clients send, checked against kind, sector size and input
//!   ([`registry`]).
//! - Decoding the inputs clients send ([`ProofRequest`]) into validated [`ProofPlan`]s:
//!   PoRep C2 from C1 output, WindowPoSt and WinningPoSt from vanilla sector proofs, SnapDeals
//!   from vanilla partition proofs.
//! - Circuit shapes and their parameter file names ([`CircuitSpec`]).
//!
//! - [`FilecoinWork`]: a plan as engine work, partition by partition.
//!
//! It does no scheduling: the engine decides where partitions are synthesized and proved.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod circuit;
mod decode;
mod error;
pub mod fixtures;
pub mod fixtures_scale;
mod fixtures_seal;
pub mod plan;
mod prove;
pub mod registry;
mod request;
pub mod sparse_post;
mod store;
pub mod timing_inputs;
pub mod verify;
mod work;

pub use circuit::CircuitSpec;
pub use decode::decode_c1_for_filecoin_proofs;
pub use error::{Error, InputError, Result};
pub use plan::{plan, plan_for_timing, ProofPlan, Synthesized, TIMING_ONLY_MARK};
pub use prove::{
    prove_partition_range, prove_partitions, prove_partitions_with, prove_plan, ProofOutput,
    ProveOptions, StageTimings,
};
pub use registry::{PoStProof, ProofKind, SealProof, SectorSize, UpdateProof};
pub use request::ProofRequest;
pub use store::{bind_filecoin_parameter_dir, CircuitStore, SrsEntry, Tier, DEFAULT_PARAMETER_DIR};
pub use work::{partition_bytes, prove_partition, FilecoinWork};
