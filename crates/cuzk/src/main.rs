//! `cuzk`: the proving daemon's command-line entry point.
//!
//! Exit codes: 0 success, 1 internal failure, 2 bad input (usage errors included). Errors are
//! one line on stderr.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod backends;
mod bench;
mod client;
mod daemon;
mod faultcheck;
mod from_curio;
mod paths;
mod pce_cmd;
mod progress;
mod prove_cmd;
mod selftest;
mod socket;
mod stats;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "cuzk", version, about = "Filecoin Groth16 proving engine")]
struct Cli {
    /// Cache folder for PCEs, fixtures and benchmark parameters (default: $XDG_CACHE_HOME/cuzk or ~/.cache/cuzk).
    #[arg(long, global = true)]
    cache: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Talk to a running daemon: prove, submit, await, cancel, status, metrics, preload, evict.
    Client(client::Args),
    /// Run the proving daemon (gRPC cuzk.v1) until SIGTERM or SIGINT.
    Daemon(daemon::Args),
    /// Configuration tools.
    Config {
        #[command(subcommand)]
        which: ConfigCommand,
    },
    /// Prove one Filecoin proof on the CPU, verify it, write it.
    Prove(prove_cmd::ProveArgs),
    /// Generate (or check) test fixtures: a sealed sector, client inputs, insecure parameters.
    Fixtures(prove_cmd::FixturesArgs),
    /// Extract (or load) a circuit's pre-compiled constraint system into a cache folder and
    /// report its size.
    Pce(pce_cmd::Args),
    /// Prove and verify all four kinds on locally generated 2KiB fixtures.
    Demo {
        /// Synthesize without the pre-compiled constraint evaluator.
        #[arg(long)]
        no_pce: bool,
        /// Also prove the non-interactive PoRep (13 partitions, aggregated; minutes on a few
        /// cores).
        #[arg(long)]
        ni_porep: bool,
    },
    /// Run the backend conformance suite and 2 KiB proofs of every kind through a backend.
    Selftest(selftest::Args),
    /// Benchmarks, each side by side with the peer implementation on the same input.
    Bench {
        #[command(subcommand)]
        which: bench::Which,
    },
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Print this daemon's configuration for a Curio cuzk.toml (docs/MIGRATING.md).
    FromCurio(from_curio::Args),
}

/// A command failure: bad input (exit 2) or anything else (exit 1).
#[derive(Debug)]
pub struct CliError {
    input: bool,
    /// The one-line message.
    pub message: String,
}

impl CliError {
    /// The caller's input is at fault.
    pub fn input(msg: impl Into<String>) -> Self {
        CliError {
            input: true,
            message: msg.into(),
        }
    }
    /// Something else failed.
    pub fn internal(msg: impl Into<String>) -> Self {
        CliError {
            input: false,
            message: msg.into(),
        }
    }
}

impl From<cuzk_filecoin::Error> for CliError {
    fn from(e: cuzk_filecoin::Error) -> Self {
        CliError {
            input: e.is_input(),
            message: e.to_string(),
        }
    }
}

impl From<cuzk_filecoin::InputError> for CliError {
    fn from(e: cuzk_filecoin::InputError) -> Self {
        CliError::input(e.to_string())
    }
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        CliError::internal(format!("{e:#}"))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let cache = paths::cache_dir(cli.cache);
    let result = match cli.command {
        Command::Daemon(args) => daemon::run(args),
        Command::Client(args) => client::run(args),
        Command::Config {
            which: ConfigCommand::FromCurio(args),
        } => from_curio::run(args),
        Command::Prove(args) => prove_cmd::prove(args, &cache),
        Command::Fixtures(args) => prove_cmd::fixtures(args),
        Command::Pce(args) => pce_cmd::run(args),
        Command::Demo { no_pce, ni_porep } => prove_cmd::demo(&cache, !no_pce, ni_porep),
        Command::Selftest(args) => selftest::run(&args, &cache),
        Command::Bench { which } => bench::run(which, &cache).map_err(CliError::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", e.message.replace('\n', " "));
            ExitCode::from(if e.input { 2 } else { 1 })
        }
    }
}
