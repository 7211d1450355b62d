//! `cuzk bench ...`: side-by-side benchmarks against the peer implementations.

mod devices;
mod engine;
mod gpu;
#[cfg(feature = "cuda")]
mod gpu_split;
mod groth16;
mod porep;
mod scale;
mod scale_stream;
mod timeline;

use std::path::Path;

use clap::Subcommand;

/// Which benchmark to run.
#[derive(Debug, Subcommand)]
pub enum Which {
    /// Synthetic circuits: our CPU prover (PCE warm) against bellperson's CPU prover.
    Groth16(groth16::Args),
    /// 2 KiB PoRep C2 on the CPU: ours against filecoin-proofs' seal_commit_phase2.
    Porep(porep::Args),
    /// MSM and NTT kernels on one GPU (binaries built with the cuda feature).
    Gpu(gpu::Args),
    /// The engine on the CPU backend: PoRep stream with the pipeline on and off, WinningPoSt
    /// latency idle and under load.
    Engine(engine::Args),
    /// The engine over every GPU (and simulated devices beside them): a mixed load of all
    /// four kinds with guard checks, then PoRep throughput on one GPU against all.
    Devices(devices::Args),
    /// Production-size PoSt (32 GiB, 64 GiB) on one backend: PCE, stage times, CPU
    /// core-seconds, peak host and device memory.
    Scale(scale::Args),
}

/// Runs the chosen benchmark.
pub fn run(which: Which, cache: &Path) -> anyhow::Result<()> {
    match which {
        Which::Groth16(args) => groth16::run(&args, cache),
        Which::Porep(args) => porep::run(&args),
        Which::Engine(args) => engine::run(&args),
        Which::Gpu(args) => gpu::run(&args),
        Which::Devices(args) => devices::run(&args),
        Which::Scale(args) => scale::run(&args),
    }
}
