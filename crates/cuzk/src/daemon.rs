//! `cuzk daemon`: the engine behind the cuzk.v1 gRPC service, configured by one TOML file.
//!
//! Start: read and validate the config (a named file that is missing is an error), log the
//! effective config, open the devices, start the engine, bind the listener (a unix socket is
//! created with mode 0600), serve. SIGTERM or SIGINT: refuse new work (UNAVAILABLE), let
//! in-flight jobs finish within `shutdown.grace_secs` (or cancel them at once with
//! `shutdown.cancel_in_flight`) while callers can still collect results, then stop serving,
//! report what was cancelled, exit 0.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cuzk_engine::{Device, Engine, EngineConfig};
use cuzk_filecoin::{bind_filecoin_parameter_dir, CircuitSpec, CircuitStore};
use cuzk_server::config::{Backend, Config, Listen, LogFormat, LogLevel};
use cuzk_server::{serve, Listener, ProvingService, ServeOptions};

use crate::CliError;

/// Arguments of `cuzk daemon`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// TOML config file (docs/CONFIG.md); without it, every default.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Overrides server.listen: unix:///path or host:port.
    #[arg(long)]
    listen: Option<String>,
    /// Overrides log.level: error, warn, info, debug or trace.
    #[arg(long)]
    log_level: Option<LogLevel>,
    /// A fault drill, for testing only (docs/OPERATIONS.md): the Nth proof on each GPU first
    /// breaks that GPU's CUDA context, as a failing card does.
    #[arg(long, hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    fault_drill_at_proof: Option<u64>,
}

fn init_logging(cfg: &Config) {
    let level = match cfg.log.level {
        LogLevel::Error => tracing::Level::ERROR,
        LogLevel::Warn => tracing::Level::WARN,
        LogLevel::Info => tracing::Level::INFO,
        LogLevel::Debug => tracing::Level::DEBUG,
        LogLevel::Trace => tracing::Level::TRACE,
    };
    let b = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr);
    // A second initialisation (in-process tests) keeps the first subscriber.
    let _ = if cfg.log.format == LogFormat::Json {
        b.json().try_init()
    } else {
        b.try_init()
    };
}

fn devices(cfg: &Config, fault_drill_at: Option<u64>) -> Result<Vec<Arc<Device>>, CliError> {
    let cpu = || Arc::new(cuzk_groth16::CpuBackend::new());
    match cfg.devices.backend {
        Backend::Cpu => Ok(vec![Device::new(cpu())]),
        Backend::Cuda => {
            let mut d = cuda_devices(cfg, fault_drill_at)?;
            if cfg.devices.cpu_fallback {
                d.push(Device::fallback(cpu()));
            }
            Ok(d)
        }
    }
}

fn cuda_devices(cfg: &Config, fault_drill_at: Option<u64>) -> Result<Vec<Arc<Device>>, CliError> {
    let budget = (cfg.devices.vram_budget_bytes > 0).then_some(cfg.devices.vram_budget_bytes);
    crate::backends::cuda_engine_devices(
        &cfg.devices.cuda,
        budget,
        cfg.devices.resident_params,
        "devices.cuda",
        fault_drill_at,
    )
}

/// Blocking threads of the daemon's runtime at most (submits in progress at once).
const MAX_BLOCKING_THREADS: usize = 64;

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(args: Args) -> Result<(), CliError> {
    let mut cfg = match &args.config {
        Some(p) => Config::load(p).map_err(|e| CliError::input(e.to_string()))?,
        None => Config::default(),
    };
    if let Some(l) = args.listen {
        cfg.server.listen = l;
    }
    if let Some(l) = args.log_level {
        cfg.log.level = l;
    }
    cfg.validate().map_err(|e| CliError::input(e.to_string()))?;
    init_logging(&cfg);
    tracing::info!(config = %cfg.effective(), "effective configuration");

    let listen = cfg.listen().map_err(|e| CliError::input(e.to_string()))?;
    bind_filecoin_parameter_dir(&cfg.params.dir, None)?;
    let engine = Engine::start(
        EngineConfig {
            queue_capacity: cfg.engine.queue_capacity as usize,
            synthesis_threads: cfg.synthesis_threads(),
            urgent_synthesis_threads: cfg.engine.urgent_synthesis_threads as usize,
            workers_per_device: cfg.engine.workers_per_device as usize,
            retention: Duration::from_secs(cfg.engine.retention_secs),
            retention_max_jobs: cfg.engine.retention_max_jobs as usize,
            retention_max_bytes: cfg.engine.retention_max_bytes,
            device_timeout: (cfg.engine.device_timeout_secs > 0)
                .then(|| Duration::from_secs(cfg.engine.device_timeout_secs)),
            host_budget: cfg
                .host_memory()
                .map_err(|e| CliError::input(e.to_string()))?,
            pipeline: cfg.engine.pipeline,
            pause_for_urgent: cfg.engine.pause_for_urgent,
            hold_for_urgent: Duration::from_millis(cfg.engine.hold_for_urgent_ms),
        },
        devices(&cfg, args.fault_drill_at_proof)?,
    )
    .map_err(|e| CliError::input(e.to_string()))?;
    let engine = Arc::new(engine);
    let store = Arc::new(
        CircuitStore::new(&cfg.params.dir, &cfg.params.cache_dir)
            .with_budget(engine.host_budget().clone()),
    );
    engine.set_reclaimer(store.reclaimer());
    let preload = cfg.preload().map_err(|e| CliError::input(e.to_string()))?;
    if !preload.is_empty() {
        let (store, use_pce) = (store.clone(), cfg.params.use_pce);
        std::thread::Builder::new()
            .name("cuzk-preload".into())
            .spawn(move || preload_circuits(&store, &preload, use_pce))
            .map_err(|e| CliError::internal(format!("cannot start the preload thread: {e}")))?;
    }
    let service = ProvingService::new(engine.clone(), store.clone(), cfg.params.use_pce)
        .cancel_abandoned(cfg.server.cancel_abandoned);
    let access = cfg.access().map_err(|e| CliError::input(e.to_string()))?;
    let tls = cfg.tls().map_err(|e| CliError::input(e.to_string()))?;
    tracing::info!(rule = %access.describe(), tls = tls.is_some(), "gRPC access");
    if let Listen::Tcp(a) = &listen {
        if tls.is_none() && (!a.ip().is_loopback() || !access.trusted.is_empty()) {
            tracing::warn!(
                listen = %a,
                "gRPC over plaintext TCP: requests, proofs and any token cross the network in \
                 cleartext; set server.tls_cert_file for clients that can use TLS"
            );
        }
    }
    let opts = ServeOptions {
        max_message_bytes: cfg.server.max_message_bytes as usize,
        access,
        tls,
    };

    // Submits hash, decode and load parameters on blocking threads; waiting holds none. The
    // cap keeps the thread count bounded however many calls arrive at once.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
        .map_err(|e| CliError::internal(format!("tokio runtime: {e}")))?;
    rt.block_on(async move {
        let (listener, socket) = bind(&listen).await?;
        tracing::info!(listen = %cfg.server.listen, "serving cuzk.v1.ProvingEngine");
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        let http = match cfg
            .http_listen()
            .map_err(|e| CliError::input(e.to_string()))?
        {
            Some(a) => {
                let l = tokio::net::TcpListener::bind(a)
                    .await
                    .map_err(|e| CliError::input(format!("cannot listen on {a} (http): {e}")))?;
                tracing::info!(listen = %a, "serving /metrics, /status and the status page");
                Some(tokio::spawn(cuzk_server::http::serve_http(
                    l,
                    engine.clone(),
                    store.clone(),
                    stopped(stop_rx.clone()),
                )))
            }
            None => None,
        };
        let mut server = tokio::spawn(serve(listener, service, opts, stopped(stop_rx.clone())));
        let signal = tokio::select! {
            s = wait_for_signal() => s?,
            r = &mut server => {
                // The gRPC server ended without being asked to: exit non-zero, so the
                // supervisor restarts a daemon that no longer serves.
                let why = match r {
                    Ok(Ok(())) => "the gRPC server stopped on its own".to_string(),
                    Ok(Err(e)) => format!("the gRPC server failed: {e}"),
                    Err(e) => format!("the gRPC server task failed: {e}"),
                };
                tracing::error!(reason = %why, "stopping: cancelling in-flight jobs");
                let e = engine.clone();
                let _ = tokio::task::spawn_blocking(move || e.shutdown(Duration::ZERO, true)).await;
                return Err(CliError::internal(why));
            }
        };
        tracing::info!(
            signal,
            "stopping: no new work; in-flight jobs finish or are cancelled"
        );
        // The engine drains first, while the servers still answer: new work is refused
        // (UNAVAILABLE), and callers waiting for accepted jobs, or asking for them now, get
        // their results. Then the servers stop.
        let grace = Duration::from_secs(cfg.shutdown.grace_secs);
        let cancel = cfg.shutdown.cancel_in_flight;
        let e = engine.clone();
        tokio::task::spawn_blocking(move || e.shutdown(grace, cancel))
            .await
            .map_err(|e| CliError::internal(format!("shutdown: {e}")))?;
        let _ = stop_tx.send(true);
        match server.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "server ended with an error"),
            Err(e) => tracing::warn!(error = %e, "server task failed"),
        }
        if let Some(h) = http {
            if let Ok(Err(e)) = h.await {
                tracing::warn!(error = %e, "http server ended with an error");
            }
        }
        if let Some(p) = socket {
            let _ = std::fs::remove_file(p);
        }
        let s = engine.status();
        let cancelled: u64 = s.metrics.values().map(|m| m.cancelled).sum();
        let completed: u64 = s.metrics.values().map(|m| m.completed).sum();
        tracing::info!(completed, cancelled, "stopped");
        Ok::<(), CliError>(())
    })
}

async fn bind(listen: &Listen) -> Result<(Listener, Option<PathBuf>), CliError> {
    match listen {
        Listen::Tcp(a) => tokio::net::TcpListener::bind(a)
            .await
            .map(|l| (Listener::Tcp(l), None))
            .map_err(|e| CliError::input(format!("cannot listen on {a}: {e}"))),
        Listen::Unix(p) => {
            let l = crate::socket::bind_private(p).await?;
            Ok((Listener::Unix(l), Some(p.clone())))
        }
    }
}

async fn wait_for_signal() -> Result<&'static str, CliError> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())
        .map_err(|e| CliError::internal(format!("SIGTERM handler: {e}")))?;
    let mut int = signal(SignalKind::interrupt())
        .map_err(|e| CliError::internal(format!("SIGINT handler: {e}")))?;
    Ok(tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    })
}

/// Loads the parameters of `specs` and, with the PCE on, their PCEs (from the cache, or
/// extracted on a background thread when missing). Failures are logged: a circuit that does
/// not preload is loaded, or refused, on its first request as without preloading.
fn preload_circuits(store: &Arc<CircuitStore>, specs: &[CircuitSpec], use_pce: bool) {
    for spec in specs {
        let t = std::time::Instant::now();
        match store.params(spec) {
            Ok(_) => tracing::info!(
                circuit = %spec.srs_id(),
                secs = t.elapsed().as_secs_f64(),
                "parameters preloaded"
            ),
            Err(e) => {
                tracing::warn!(circuit = %spec.srs_id(), error = %e, "preloading parameters failed")
            }
        }
        if use_pce && store.pce_or_extract_in_background(spec).is_some() {
            tracing::info!(circuit = %spec.srs_id(), "PCE loaded from the cache");
        }
    }
}
