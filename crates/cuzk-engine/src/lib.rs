//! The cuzk proving engine: jobs, priorities, the partition pipeline across devices, memory
//! budgets and metrics.
//!
//! # What this crate owns
//!
//! - **Jobs** ([`Engine::submit`], [`Engine::await_job`], [`Engine::cancel`]): named by the
//!   client's request id *and* a digest of their content (a repeat of both attaches to the
//!   same job; the same id with other content is another job; a failed or cancelled job is
//!   never reused; finished results are kept for a retention time), with per-job timings.
//!   Waiting is asynchronous ([`Waiter`]), and a job whose every waiting caller gave up is
//!   cancelled. A job is never lost: it completes, fails with a reason, or is cancelled.
//! - **Scheduling**: priority queues for synthesis and for devices, so higher-priority work
//!   overtakes at partition boundaries; a bounded queue.
//! - **Devices** ([`Device`]): each owns its lock and VRAM budget; memory is allocated only
//!   through the lock's guard. [`sim`] has simulated devices that check those invariants
//!   and inject faults.
//! - **Memory** ([`MemoryBudget`]): RAII reservations for the host budget.
//!
//! It does no cryptography: work arrives as [`ProofWork`] trait objects.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod device;
mod engine;
mod error;
mod faults;
mod job;
mod memory;
mod metrics;
mod pause;
mod pipeline;
mod queue;
pub mod sim;
mod table;
mod waiter;
mod work;

pub use cuzk_groth16::VramReservation;
pub use device::{Activity, Device, DeviceInfo, Health, Lease, ProbeError};
pub use engine::{
    check_request_id, DeviceStatus, Engine, EngineConfig, EngineStatus, Submitted,
    MAX_REQUEST_ID_BYTES,
};
pub use error::EngineError;
pub use job::{JobStatus, JobTimings, JobView, Priority};
pub use memory::{auto_host_budget, MemoryBudget, Reservation};
pub use metrics::{Histogram, KindMetrics, LATENCY_BUCKETS};
pub use waiter::{Caller, Waiter};
pub use work::{ContentDigest, ProofWork, Synthesized, WorkError};
