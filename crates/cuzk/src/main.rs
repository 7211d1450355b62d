//! `cuzk`: the proving daemon's command-line entry point.
//!
//! Exit codes: 0 success, 1 internal failure, 2 bad input (usage errors included).

#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod bench;
mod paths;
mod stats;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "cuzk", version, about = "Filecoin Groth16 proving engine")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Benchmarks, each side by side with the peer implementation on the same input.
    Bench {
        #[command(subcommand)]
        which: bench::Which,
        /// Cache folder for generated parameters (default: $XDG_CACHE_HOME/cuzk or ~/.cache/cuzk).
        #[arg(long, global = true)]
        cache: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench { which, cache } => bench::run(which, &paths::cache_dir(cache)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
