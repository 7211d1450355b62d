//! Groth16 over BLS12-381 for bellpepper circuits, built around a pre-compiled constraint
//! evaluator.
//!
//! # What this crate owns
//!
//! - **Constraint recording** ([`Pce::extract`], [`RecordingCs`]): a circuit's A, B, C
//!   matrices in compact CSR form with a per-circuit coefficient table, plus the query
//!   densities; saved to and loaded from a checked file format ([`Pce::save`],
//!   [`Pce::load`]).
//! - **Witness-only synthesis** ([`WitnessCs`], [`synthesize_witness`]): the assignment
//!   without building a single linear combination; [`Pce::evaluate`] then computes
//!   a, b, c by parallel sparse products. [`synthesize_direct`] is the reference path that
//!   evaluates linear combinations as they are built.
//! - **Parameters** ([`Parameters`], [`VerifyingKey`], [`ParameterSource`]): Filecoin's
//!   `.params` / `.vk` files, read in parallel.
//! - **Proving** ([`prove`], [`ProvingBackend`], [`CpuBackend`]): H by NTT
//!   ([`Domain`]) and the five MSMs, behind the backend trait a device backend implements.
//! - **Proofs and verification** ([`Proof`], [`PreparedVerifyingKey`]): bellperson's
//!   192-byte encoding, so bellperson and filecoin-proofs verify our proofs.
//!
//! It does no scheduling and no I/O beyond parameter and PCE files.
//!
//! # Compatibility
//!
//! Variables, constraints and densities are laid out exactly as bellperson 0.26 lays them
//! out (constant one as input 0, one `input * 0 = 0` constraint per input after the circuit's
//! own, densities over nonzero coefficients), so proofs made here with the same `r` and `s`
//! are byte-identical to bellperson's, against the same parameters.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod assignment;
mod backend;
mod bits;
pub mod conformance;
mod device;
mod direct;
pub mod domain;
mod error;
mod field;
mod fixed_base;
pub mod gate;
mod generator;
pub mod msm;
pub mod msm_batch;
mod pce;
mod pin;
mod proof;
mod prover;
mod random_params;
mod split;
mod srs;
pub mod synthetic;
mod verify;
mod witness;

pub use assignment::{Density, ProvingAssignment, Witness};
pub use backend::{split_bases, CpuBackend, ProvingBackend};
pub use bits::DensityBits;
pub use device::{Device, DeviceGuard, DeviceInfo, Health, VramReservation};
pub use direct::{synthesize_direct, EvaluatingCs};
pub use domain::Domain;
pub use error::{Error, Result};
pub use fixed_base::{
    fixed_base_g1, fixed_base_g2, window_bits, window_table_g1, window_table_g2, SCALAR_BITS,
};
pub use generator::{
    generate_insecure_parameters, generate_parameters_on, generate_parameters_with,
    GenerationTimings, Trapdoor,
};
pub use msm::{G1Base, G2Base};
pub use pce::{
    CoeffIndices, Grow, Matrix, Pce, PceHeader, PceStats, RecordingCs, SequentialRecordingCs,
    PCE_FORMAT_VERSION,
};
pub use pin::{HostPinner, PinnedRegion, PIN_MIN_BYTES};
pub use proof::{Proof, PROOF_BYTES};
pub use prover::{
    check_params, no_yield, prove, prove_composed, prove_random, prove_timed, prove_with,
    synthesize, ComputeH, DeviceSpan, DeviceTimeline, G1Query, ProveTimings, QueryMsm, SourceMsm,
    YieldPoint,
};
pub use random_params::{random_point_parameters, random_point_parameters_bytes};
pub use split::{SplitCounts, SplitQueries, SplitScalars};
pub use srs::{ParameterSource, Parameters, PointCheck, VerifyingKey};
pub use verify::PreparedVerifyingKey;
pub use witness::{synthesize_witness, synthesize_witness_units, WitnessCs};

/// Re-exported so downstream crates name the exact curve and constraint-system versions.
pub use bellpepper_core;
pub use blstrs;
