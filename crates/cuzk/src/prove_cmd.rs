//! `cuzk prove`, `cuzk fixtures` and `cuzk demo`: the Filecoin kinds on the CPU backend.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cuzk_filecoin::fixtures::{bind_fixture_dirs, ensure_fixtures, fixture_store, unhex, Manifest};
use cuzk_filecoin::{
    bind_filecoin_parameter_dir, plan, prove_plan, CircuitStore, ProofKind, ProofRequest,
    ProveOptions, SealProof, SectorSize, StageTimings,
};
use cuzk_groth16::{CpuBackend, ProvingBackend};

use crate::backends::{self, BackendArgs};
use crate::progress::Spinner;
use crate::CliError;

/// What describes one proof on the command line (`cuzk prove`, `cuzk client submit|prove`).
#[derive(Debug, clap::Args)]
pub struct RequestArgs {
    /// porep, snap, window-post or winning-post.
    #[arg(long)]
    kind: String,
    /// Input files: the C1 output (PoRep), or one vanilla proof file per sector (PoSt) or per
    /// partition (SnapDeals). Repeat for several.
    #[arg(long, required = true)]
    input: Vec<PathBuf>,
    /// Registered proof number (PoRep: taken from the C1 output when omitted).
    #[arg(long)]
    registered_proof: Option<u64>,
    /// Miner actor id.
    #[arg(long)]
    miner_id: u64,
    /// PoRep sector number (taken from a wrapped C1 input when omitted).
    #[arg(long, default_value_t = 0)]
    sector_number: u64,
    /// PoSt randomness, 32 bytes hex.
    #[arg(long)]
    randomness: Option<String>,
    /// WindowPoSt partition index.
    #[arg(long, default_value_t = 0)]
    partition_index: u32,
    /// SnapDeals comm_r_old, hex.
    #[arg(long)]
    comm_r_old: Option<String>,
    /// SnapDeals comm_r_new, hex.
    #[arg(long)]
    comm_r_new: Option<String>,
    /// SnapDeals comm_d_new, hex.
    #[arg(long)]
    comm_d_new: Option<String>,
}

impl RequestArgs {
    /// The proof kind and the request these arguments describe, with the input files read.
    pub fn request(&self) -> Result<(ProofKind, ProofRequest), CliError> {
        let kind = ProofKind::parse(&self.kind).map_err(|e| CliError::input(e.to_string()))?;
        let read = |p: &PathBuf| {
            std::fs::read(p)
                .map_err(|e| CliError::input(format!("cannot read {}: {e}", p.display())))
        };
        let mut req = ProofRequest {
            kind: Some(kind),
            registered_proof: self.registered_proof,
            miner_id: self.miner_id,
            sector_number: self.sector_number,
            randomness: hex_arg(&self.randomness, "randomness")?,
            partition_index: self.partition_index,
            comm_r_old: hex_arg(&self.comm_r_old, "comm-r-old")?,
            comm_r_new: hex_arg(&self.comm_r_new, "comm-r-new")?,
            comm_d_new: hex_arg(&self.comm_d_new, "comm-d-new")?,
            ..Default::default()
        };
        if kind == ProofKind::PoRep {
            if self.input.len() != 1 {
                return Err(CliError::input(
                    "PoRep takes exactly one --input (the C1 output)",
                ));
            }
            req.vanilla_proof = read(&self.input[0])?;
        } else {
            req.vanilla_proofs = self.input.iter().map(read).collect::<Result<_, _>>()?;
        }
        Ok((kind, req))
    }
}

/// Arguments of `cuzk prove`.
#[derive(Debug, clap::Args)]
pub struct ProveArgs {
    #[command(flatten)]
    request: RequestArgs,
    /// Parameter directory (default: $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters).
    #[arg(long)]
    params: Option<PathBuf>,
    /// Where to write the proof bytes.
    #[arg(long)]
    out: PathBuf,
    /// Synthesize without the pre-compiled constraint evaluator (for comparison).
    #[arg(long)]
    no_pce: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

fn hex_arg(v: &Option<String>, what: &str) -> Result<Vec<u8>, CliError> {
    match v {
        None => Ok(Vec::new()),
        Some(s) => unhex(s.trim_start_matches("0x"))
            .ok_or_else(|| CliError::input(format!("--{what} is not hex"))),
    }
}

/// The parameter directory: the flag, else FIL_PROOFS_PARAMETER_CACHE, else the default.
pub fn params_dir(flag: Option<PathBuf>) -> PathBuf {
    flag.or_else(|| {
        std::env::var_os("FIL_PROOFS_PARAMETER_CACHE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
    .unwrap_or_else(|| PathBuf::from(cuzk_filecoin::DEFAULT_PARAMETER_DIR))
}

/// Runs `cuzk prove`.
pub fn prove(args: ProveArgs, cache: &Path) -> Result<(), CliError> {
    let (kind, req) = args.request.request()?;
    let params = params_dir(args.params);
    bind_filecoin_parameter_dir(&params, None)?;
    let store = CircuitStore::new(&params, cache);
    let backend = backends::open(&args.backend)?;
    let (proof, timings) = prove_request(&req, &store, backend.as_ref(), !args.no_pce)?;
    std::fs::write(&args.out, &proof)
        .map_err(|e| CliError::internal(format!("cannot write {}: {e}", args.out.display())))?;
    print_timings(kind, &timings);
    println!(
        "verified: {} bytes written to {}",
        proof.len(),
        args.out.display()
    );
    Ok(())
}

fn prove_request(
    req: &ProofRequest,
    store: &CircuitStore,
    backend: &dyn ProvingBackend,
    use_pce: bool,
) -> Result<(Vec<u8>, StageTimings), CliError> {
    let p = plan(req)?;
    let out = prove_plan(p.as_ref(), store, backend, ProveOptions { use_pce })?;
    Ok((out.proof, out.timings))
}

fn print_timings(kind: ProofKind, t: &StageTimings) {
    println!("{kind}: {t}");
}

/// Arguments of `cuzk fixtures`.
#[derive(Debug, clap::Args)]
pub struct FixturesArgs {
    /// Sector size: 2KiB (a sealed sector, inputs of all four kinds, insecure parameters), or
    /// 32GiB / 64GiB (WinningPoSt and WindowPoSt inputs from sparse trees, which verify; PoRep
    /// and SnapDeals inputs of the real shape with random values, for timing only).
    #[arg(long, default_value = "2KiB")]
    sector_size: String,
    /// Output folder.
    #[arg(long)]
    out: PathBuf,
    /// With 32GiB / 64GiB: also INSECURE parameters for the WindowPoSt circuit (125M
    /// constraints at 32 GiB; minutes with --backend cuda, far longer on a CPU).
    #[arg(long)]
    window_params: bool,
    /// Where the parameters' fixed-base multiplications run (32GiB / 64GiB).
    #[command(flatten)]
    backend: BackendArgs,
}

/// Runs `cuzk fixtures`.
pub fn fixtures(args: FixturesArgs) -> Result<(), CliError> {
    let size = SectorSize::parse(&args.sector_size).map_err(|e| CliError::input(e.to_string()))?;
    if matches!(size, SectorSize::S32GiB | SectorSize::S64GiB) {
        let t = Instant::now();
        let backend = backends::open(&args.backend)?;
        let opts = cuzk_filecoin::fixtures_scale::ScaleOptions {
            window_params: args.window_params,
            backend: backend.as_ref(),
        };
        let m = cuzk_filecoin::fixtures_scale::scale_fixtures(
            &args.out,
            size,
            opts,
            &Spinner::default(),
        )?;
        println!(
            "{size} inputs in {} ({:.1} s): WinningPoSt 1 sector, WindowPoSt {} sectors (both \
             verify); PoRep C1 ({} partitions) and SnapDeals ({} partitions) TIMING ONLY; not \
             generated: {}",
            args.out.display(),
            t.elapsed().as_secs_f64(),
            m.window.sectors.len(),
            usize::from(SealProof::of(size, 1).porep_config().partitions),
            m.timing_only.as_ref().map_or(0, |t| t.snap_vanilla.len()),
            m.missing.join("; ")
        );
        return Ok(());
    }
    if args.window_params || args.backend.backend != backends::BackendKind::Cpu {
        return Err(CliError::input(
            "--window-params and --backend apply to 32GiB and 64GiB fixtures only",
        ));
    }
    bind_fixture_dirs(&args.out)?;
    let t = Instant::now();
    let m = ensure_fixtures(&args.out, size, &Spinner::default())?;
    println!(
        "fixtures for {} sectors in {} ({:.1} s); INSECURE test parameters: {}",
        size,
        args.out.display(),
        t.elapsed().as_secs_f64(),
        m.params
            .iter()
            .map(|p| format!("{} ({} constraints)", p.kind, p.constraints))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

/// Runs `cuzk demo`: fixtures in the cache folder, then all four kinds (and, asked, the
/// non-interactive PoRep) proved and verified.
pub fn demo(cache: &Path, use_pce: bool, ni_porep: bool) -> Result<(), CliError> {
    let dir = cache.join("fixtures-2KiB");
    bind_fixture_dirs(&dir)?;
    let m: Manifest = ensure_fixtures(&dir, SectorSize::S2KiB, &Spinner::default())?;
    let store = fixture_store(&dir);
    println!("| kind | constraints | partitions | synthesis (s) | prove (s) | verify (s) | total (s) | result |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut rows = vec![
        (
            "winning-post".to_owned(),
            m.request(&dir, ProofKind::WinningPoSt)?,
        ),
        (
            "window-post".to_owned(),
            m.request(&dir, ProofKind::WindowPoSt)?,
        ),
        ("snap".to_owned(), m.request(&dir, ProofKind::SnapDeals)?),
        ("porep".to_owned(), m.request(&dir, ProofKind::PoRep)?),
    ];
    if ni_porep {
        rows.push((
            "porep (NI, aggregated)".to_owned(),
            m.porep_request(&dir, &m.porep_ni)?,
        ));
    }
    for (label, req) in rows {
        let p = plan(&req)?;
        let constraints = store.pce(p.circuit())?.num_constraints();
        let out = prove_plan(
            p.as_ref(),
            &store,
            &CpuBackend::new(),
            ProveOptions { use_pce },
        )?;
        let t = out.timings;
        println!(
            "| {label} | {constraints} | {} | {:.2} | {:.2} | {:.2} | {:.2} | verified |",
            p.partitions(),
            (t.circuit_build + t.witness + t.pce_eval).as_secs_f64(),
            (t.ntt + t.msm).as_secs_f64(),
            t.verify.as_secs_f64(),
            t.total.as_secs_f64()
        );
    }
    println!(
        "\nCPU backend; 2KiB sectors sealed locally; INSECURE test parameters (fixed seed) in {}",
        dir.join("params").display()
    );
    Ok(())
}
