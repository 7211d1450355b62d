//! `cuzk client ...`: the cuzk.v1 service from the command line, over TCP or a unix socket.

// tonic's Status is the error type its interceptors return.
#![allow(clippy::result_large_err)]

use std::path::PathBuf;

use cuzk_server::proto::proving_engine_client::ProvingEngineClient;
use cuzk_server::proto::{self, await_proof_response::Status as AwaitStatus};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

use crate::prove_cmd::RequestArgs;
use crate::CliError;

/// Arguments shared by every client command.
#[derive(Debug, clap::Args)]
pub struct Conn {
    /// The daemon: unix:///path or host:port.
    #[arg(long, default_value = "unix:///run/cuzk/cuzk.sock")]
    addr: String,
    /// Bearer token, when the daemon requires one.
    #[arg(long)]
    token: Option<String>,
}

/// What to do.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Submit and wait for the proof; write it to --out.
    Prove {
        #[command(flatten)]
        request: RequestArgs,
        /// Client request id (default: a fresh one).
        #[arg(long)]
        request_id: Option<String>,
        /// low, normal, high or critical (default: the kind's).
        #[arg(long)]
        priority: Option<String>,
        /// Where to write the proof bytes.
        #[arg(long)]
        out: PathBuf,
    },
    /// Submit a proof; print the job id.
    Submit {
        #[command(flatten)]
        request: RequestArgs,
        /// Client request id (default: a fresh one).
        #[arg(long)]
        request_id: Option<String>,
        /// low, normal, high or critical (default: the kind's).
        #[arg(long)]
        priority: Option<String>,
    },
    /// Wait for a job; write its proof to --out.
    Await {
        /// Job id.
        #[arg(long)]
        job: String,
        /// Milliseconds to wait (0: no limit).
        #[arg(long, default_value_t = 0)]
        timeout_ms: u64,
        /// Where to write the proof bytes.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Cancel a job.
    Cancel {
        /// Job id.
        #[arg(long)]
        job: String,
    },
    /// Devices, parameters, queues.
    Status,
    /// Prometheus text.
    Metrics,
    /// Load a circuit's parameters ("porep-32g", "winning-2k", ...).
    Preload {
        /// Circuit id.
        #[arg(long)]
        circuit: String,
    },
    /// Drop a circuit's parameters from memory.
    Evict {
        /// Circuit id.
        #[arg(long)]
        circuit: String,
    },
    /// Probe a device and return it to service if it passes ("cuda:0000:c1:00.0", "cpu").
    Probe {
        /// Device id, as `status` lists it.
        #[arg(long)]
        device: String,
    },
}

/// Arguments of `cuzk client`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: Conn,
    #[command(subcommand)]
    action: Action,
}

/// Adds the bearer token to every call.
type AuthFn =
    Box<dyn FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Send>;
type Client = ProvingEngineClient<InterceptedService<Channel, AuthFn>>;

async fn connect(conn: &Conn) -> Result<Client, CliError> {
    let channel = if let Some(path) = conn.addr.strip_prefix("unix://") {
        let path = PathBuf::from(path);
        // The URI is required by the API and unused: the connector dials the socket.
        Endpoint::from_static("http://localhost")
            .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
                let path = path.clone();
                async move {
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                        tokio::net::UnixStream::connect(path).await?,
                    ))
                }
            }))
            .await
    } else {
        let uri = if conn.addr.starts_with("http") {
            conn.addr.clone()
        } else {
            format!("http://{}", conn.addr)
        };
        Endpoint::from_shared(uri)
            .map_err(|e| CliError::input(format!("--addr: {e}")))?
            .connect()
            .await
    }
    .map_err(|e| CliError::internal(format!("cannot connect to {}: {e}", conn.addr)))?;
    let header = match &conn.token {
        Some(t) => Some(
            format!("Bearer {t}")
                .parse::<tonic::metadata::MetadataValue<_>>()
                .map_err(|_| CliError::input("--token has characters a header cannot carry"))?,
        ),
        None => None,
    };
    let auth: AuthFn = Box::new(move |mut req: tonic::Request<()>| {
        if let Some(h) = &header {
            req.metadata_mut().insert("authorization", h.clone());
        }
        Ok(req)
    });
    Ok(ProvingEngineClient::with_interceptor(channel, auth)
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX))
}

fn status_err(s: tonic::Status) -> CliError {
    let input = matches!(
        s.code(),
        tonic::Code::InvalidArgument | tonic::Code::NotFound | tonic::Code::Unauthenticated
    );
    let msg = format!("{:?}: {}", s.code(), s.message());
    if input {
        CliError::input(msg)
    } else {
        CliError::internal(msg)
    }
}

fn wire(
    request: &RequestArgs,
    request_id: &Option<String>,
    priority: &Option<String>,
) -> Result<proto::SubmitProofRequest, CliError> {
    let (kind, r) = request.request()?;
    let priority = match priority.as_deref() {
        None => proto::Priority::Unspecified,
        Some("low") => proto::Priority::Low,
        Some("normal") => proto::Priority::Normal,
        Some("high") => proto::Priority::High,
        Some("critical") => proto::Priority::Critical,
        Some(p) => {
            return Err(CliError::input(format!(
                "--priority {p:?}: expected low, normal, high or critical"
            )))
        }
    };
    let request_id = request_id.clone().unwrap_or_else(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("cli-{}-{nanos}", std::process::id())
    });
    Ok(cuzk_server::convert::submit_request(
        &request_id,
        kind,
        &r,
        priority,
    ))
}

fn finish(r: &proto::AwaitProofResponse, out: Option<&PathBuf>) -> Result<(), CliError> {
    let status = AwaitStatus::try_from(r.status).unwrap_or(AwaitStatus::Unknown);
    println!(
        "{}: {:?} (queue {} ms, synthesis {} ms, device {} ms, total {} ms)",
        r.job_id, status, r.queue_wait_ms, r.synthesis_ms, r.gpu_compute_ms, r.total_ms
    );
    match status {
        AwaitStatus::Completed => {
            if let Some(out) = out {
                std::fs::write(out, &r.proof).map_err(|e| {
                    CliError::internal(format!("cannot write {}: {e}", out.display()))
                })?;
                println!("{} bytes written to {}", r.proof.len(), out.display());
            }
            Ok(())
        }
        AwaitStatus::Timeout => Err(CliError::internal("timed out; the job is still running")),
        _ => Err(CliError::internal(format!(
            "job {}: {:?}: {}",
            r.job_id, status, r.error_message
        ))),
    }
}

/// Runs `cuzk client`.
pub fn run(args: Args) -> Result<(), CliError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::internal(format!("tokio runtime: {e}")))?;
    rt.block_on(async move {
        let mut c = connect(&args.conn).await?;
        match args.action {
            Action::Prove {
                request,
                request_id,
                priority,
                out,
            } => {
                let submit = wire(&request, &request_id, &priority)?;
                let r = c
                    .prove(proto::ProveRequest {
                        submit: Some(submit),
                    })
                    .await
                    .map_err(status_err)?
                    .into_inner()
                    .result
                    .ok_or_else(|| CliError::internal("empty response"))?;
                finish(&r, Some(&out))
            }
            Action::Submit {
                request,
                request_id,
                priority,
            } => {
                let s = c
                    .submit_proof(wire(&request, &request_id, &priority)?)
                    .await
                    .map_err(status_err)?
                    .into_inner();
                println!("{} (queue position {})", s.job_id, s.queue_position);
                Ok(())
            }
            Action::Await {
                job,
                timeout_ms,
                out,
            } => {
                let r = c
                    .await_proof(proto::AwaitProofRequest {
                        job_id: job,
                        timeout_ms,
                    })
                    .await
                    .map_err(status_err)?
                    .into_inner();
                finish(&r, out.as_ref())
            }
            Action::Cancel { job } => {
                let r = c
                    .cancel_proof(proto::CancelProofRequest {
                        job_id: job.clone(),
                    })
                    .await
                    .map_err(status_err)?
                    .into_inner();
                println!(
                    "{job}: cancelled{}",
                    if r.was_running { " (was running)" } else { "" }
                );
                Ok(())
            }
            Action::Status => {
                let s = c
                    .get_status(proto::GetStatusRequest {})
                    .await
                    .map_err(status_err)?
                    .into_inner();
                println!(
                    "uptime {} s, {} proofs completed, {} failed",
                    s.uptime_seconds, s.total_proofs_completed, s.total_proofs_failed
                );
                for g in &s.gpus {
                    let health = if g.health_reason.is_empty() {
                        g.health.clone()
                    } else {
                        format!("{} ({})", g.health, g.health_reason)
                    };
                    println!(
                        "device {} [{}] {}: {}, {} faults, {} of {} bytes free, job {:?} {}",
                        g.device_id,
                        g.ordinal,
                        g.name,
                        health,
                        g.faults,
                        g.vram_free_bytes,
                        g.vram_total_bytes,
                        g.current_job_id,
                        g.current_proof_kind
                    );
                }
                for e in &s.loaded_srs {
                    println!(
                        "srs {} tier {} {} bytes, {} refs",
                        e.circuit_id, e.tier, e.size_bytes, e.ref_count
                    );
                }
                for q in &s.queues {
                    println!(
                        "queue {}: {} pending, {} running",
                        q.proof_kind, q.pending, q.in_progress
                    );
                }
                Ok(())
            }
            Action::Metrics => {
                let m = c
                    .get_metrics(proto::GetMetricsRequest {})
                    .await
                    .map_err(status_err)?
                    .into_inner();
                print!("{}", m.prometheus_text);
                Ok(())
            }
            Action::Preload { circuit } => {
                let r = c
                    .preload_srs(proto::PreloadSrsRequest {
                        circuit_id: circuit.clone(),
                    })
                    .await
                    .map_err(status_err)?
                    .into_inner();
                println!(
                    "{circuit}: {}",
                    if r.already_loaded {
                        "already loaded".to_owned()
                    } else {
                        format!("loaded in {} ms", r.load_time_ms)
                    }
                );
                Ok(())
            }
            Action::Probe { device } => {
                let r = c
                    .probe_device(proto::ProbeDeviceRequest {
                        device_id: device.clone(),
                    })
                    .await
                    .map_err(status_err)?
                    .into_inner();
                if r.healthy {
                    println!("{device}: healthy, taking work");
                    Ok(())
                } else {
                    Err(CliError::internal(format!(
                        "{device}: still quarantined: {}",
                        r.reason
                    )))
                }
            }
            Action::Evict { circuit } => {
                let r = c
                    .evict_srs(proto::EvictSrsRequest {
                        circuit_id: circuit.clone(),
                    })
                    .await
                    .map_err(status_err)?
                    .into_inner();
                println!(
                    "{circuit}: {}",
                    if r.was_loaded {
                        format!("evicted, {} bytes freed", r.freed_bytes)
                    } else {
                        "was not loaded".to_owned()
                    }
                );
                Ok(())
            }
        }
    })
}
