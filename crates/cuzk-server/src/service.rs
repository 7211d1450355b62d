//! The `cuzk.v1.ProvingEngine` service over an [`Engine`] and a [`CircuitStore`].
//!
//! Every handler validates its request before touching state; bad input is InvalidArgument
//! and changes nothing. Submitting (hashing, decoding, loading parameters) runs on tokio's
//! blocking pool; waiting for a result is a future on the job ([`cuzk_engine::Waiter`]) and
//! holds no thread.
//!
//! Jobs are named by request id and content (see [`cuzk_engine::Engine::submit`]). A `Prove`
//! whose caller gives up (its deadline passes or it disconnects: tonic drops the call) and
//! leaves no other waiter cancels its job, unless the job was also submitted by SubmitProof
//! or `cancel_abandoned` is off; an AwaitProof on such a job that is the last to leave
//! cancels it likewise.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_engine::{Caller, Engine, Submitted};
use cuzk_filecoin::{plan, CircuitStore, FilecoinWork};

use crate::placement::placement;
use tonic::{Request, Response, Status};

use crate::convert;
use crate::errors::{engine_status, filecoin_status};
use crate::prometheus;
use crate::proto;
use crate::proto::proving_engine_server::ProvingEngine;

/// The service state: the engine, where circuits come from, and how they are synthesized.
#[derive(Clone)]
pub struct ProvingService {
    engine: Arc<Engine>,
    store: Arc<CircuitStore>,
    use_pce: bool,
    cancel_abandoned: bool,
}

impl std::fmt::Debug for ProvingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvingService")
            .field("use_pce", &self.use_pce)
            .field("cancel_abandoned", &self.cancel_abandoned)
            .finish_non_exhaustive()
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Status> + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("worker task failed: {e}")))?
}

impl ProvingService {
    /// A service proving with `engine`, circuits and parameters from `store`. A `Prove`
    /// whose caller gives up cancels its job (see the module docs).
    pub fn new(engine: Arc<Engine>, store: Arc<CircuitStore>, use_pce: bool) -> Self {
        ProvingService {
            engine,
            store,
            use_pce,
            cancel_abandoned: true,
        }
    }

    /// Whether a `Prove` whose caller gives up cancels its job (default on); off, the job
    /// runs to its end and its result is kept for the retention time.
    pub fn cancel_abandoned(mut self, on: bool) -> Self {
        self.cancel_abandoned = on;
        self
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Attaches to the job of the same request id and content, or submits a new one.
    async fn submit(
        &self,
        r: proto::SubmitProofRequest,
        caller: Caller,
    ) -> Result<Submitted, Status> {
        if r.request_id.is_empty() {
            return Err(Status::invalid_argument("request_id is required"));
        }
        // Checked before anything is decoded or stored.
        cuzk_engine::check_request_id(&r.request_id)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let priority = convert::priority(r.priority)?;
        let request_id = r.request_id.clone();
        let request = convert::into_request(r)?;
        let (engine, store, use_pce) = (self.engine.clone(), self.store.clone(), self.use_pce);
        blocking(move || {
            // A job of the same id and content attaches without decoding or loading anything.
            let content = request.content_digest();
            if let Some(s) = engine
                .attach(caller, &request_id, &content)
                .map_err(|e| engine_status(&e))?
            {
                return Ok(s);
            }
            let p = plan(&request).map_err(|e| filecoin_status(&e))?;
            // A submit never waits for a PCE extraction: until the PCE exists, jobs of that
            // circuit are synthesized directly.
            let work = if use_pce {
                FilecoinWork::without_waiting(p, &store)
            } else {
                FilecoinWork::new(p, &store, false)
            }
            .map_err(|e| filecoin_status(&e))?;
            engine
                .submit_as(caller, &request_id, Arc::new(work), priority)
                .map_err(|e| engine_status(&e))
        })
        .await
    }

    fn waits(&self) -> Caller {
        Caller::Waits {
            cancel_if_abandoned: self.cancel_abandoned,
        }
    }

    /// Waits (without a thread) for the job `job_id` names, up to `timeout_ms` (0: no
    /// limit); a job still in progress then is TIMEOUT.
    async fn await_job(
        &self,
        job_id: String,
        timeout_ms: u64,
    ) -> Result<proto::AwaitProofResponse, Status> {
        if job_id.is_empty() {
            return Err(Status::invalid_argument("job_id is required"));
        }
        let mut waiter = self.engine.waiter(&job_id).map_err(|e| engine_status(&e))?;
        let v = match timeout_ms {
            0 => waiter.finished().await,
            ms => tokio::time::timeout(Duration::from_millis(ms), waiter.finished())
                .await
                .unwrap_or_else(|_| waiter.view()),
        };
        Ok(convert::await_response(&v))
    }
}

#[tonic::async_trait]
impl ProvingEngine for ProvingService {
    async fn submit_proof(
        &self,
        request: Request<proto::SubmitProofRequest>,
    ) -> Result<Response<proto::SubmitProofResponse>, Status> {
        let s = self.submit(request.into_inner(), Caller::Detached).await?;
        Ok(Response::new(proto::SubmitProofResponse {
            job_id: s.job_id,
            queue_position: s.queue_position.min(u32::MAX as usize) as u32,
            assigned_gpu: String::new(),
        }))
    }

    async fn await_proof(
        &self,
        request: Request<proto::AwaitProofRequest>,
    ) -> Result<Response<proto::AwaitProofResponse>, Status> {
        let r = request.into_inner();
        Ok(Response::new(self.await_job(r.job_id, r.timeout_ms).await?))
    }

    async fn prove(
        &self,
        request: Request<proto::ProveRequest>,
    ) -> Result<Response<proto::ProveResponse>, Status> {
        let submit = request
            .into_inner()
            .submit
            .ok_or_else(|| Status::invalid_argument("submit is required"))?;
        // Dropped with this call when the caller gives up: the waiter then cancels the job
        // if it was the last one (see the module docs).
        let mut waiter = self
            .submit(submit, self.waits())
            .await?
            .waiter
            .ok_or_else(|| Status::internal("a waiting submit returned no waiter"))?;
        let v = waiter.finished().await;
        Ok(Response::new(proto::ProveResponse {
            result: Some(convert::await_response(&v)),
        }))
    }

    async fn cancel_proof(
        &self,
        request: Request<proto::CancelProofRequest>,
    ) -> Result<Response<proto::CancelProofResponse>, Status> {
        let id = request.into_inner().job_id;
        if id.is_empty() {
            return Err(Status::invalid_argument("job_id is required"));
        }
        let engine = self.engine.clone();
        let was_running =
            blocking(move || engine.cancel(&id).map_err(|e| engine_status(&e))).await?;
        Ok(Response::new(proto::CancelProofResponse { was_running }))
    }

    async fn get_status(
        &self,
        _request: Request<proto::GetStatusRequest>,
    ) -> Result<Response<proto::GetStatusResponse>, Status> {
        let s = self.engine.status();
        let gpus = s
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| proto::GpuStatus {
                // The CUDA ordinal of a GPU; other devices are numbered by their position.
                ordinal: d.info.ordinal.unwrap_or(i as u32),
                name: d.info.name.clone(),
                vram_total_bytes: d.info.memory_total,
                // What the driver reports free; our budget and ledger are in /status.
                vram_free_bytes: d
                    .memory_free
                    .unwrap_or_else(|| d.info.memory_total.saturating_sub(d.memory_used)),
                current_job_id: d
                    .current_job
                    .as_ref()
                    .map(|j| j.0.clone())
                    .unwrap_or_default(),
                current_proof_kind: d
                    .current_job
                    .as_ref()
                    .map(|j| convert::curio_kind_name(&j.1).to_owned())
                    .unwrap_or_default(),
                device_id: d.info.id.clone(),
                health: convert::health_name(&d.health).to_owned(),
                health_reason: match &d.health {
                    cuzk_engine::Health::Healthy => String::new(),
                    cuzk_engine::Health::Quarantined { reason, .. } => reason.clone(),
                },
                faults: d.faults,
            })
            .collect();
        let loaded_srs = self
            .store
            .srs_status()
            .into_iter()
            .map(|e| proto::SrsStatus {
                tier: placement(&e, &s.devices).tier as i32,
                circuit_id: e.srs_id,
                size_bytes: e.bytes,
                ref_count: e.refs.min(u32::MAX as usize) as u32,
            })
            .collect();
        let mut queues: Vec<proto::QueueStatus> = s
            .queues
            .iter()
            .map(|(k, (pending, running))| proto::QueueStatus {
                proof_kind: convert::curio_kind_name(k).to_owned(),
                pending: *pending as u32,
                in_progress: *running as u32,
            })
            .collect();
        queues.sort_by(|a, b| a.proof_kind.cmp(&b.proof_kind));
        let completed = s.metrics.values().map(|m| m.completed).sum();
        let failed = s.metrics.values().map(|m| m.failed).sum();
        Ok(Response::new(proto::GetStatusResponse {
            gpus,
            loaded_srs,
            queues,
            total_proofs_completed: completed,
            total_proofs_failed: failed,
            uptime_seconds: s.uptime.as_secs(),
            // No host memory is pinned by the engine yet.
            pinned_memory_bytes: 0,
            pinned_memory_limit_bytes: 0,
        }))
    }

    async fn get_metrics(
        &self,
        _request: Request<proto::GetMetricsRequest>,
    ) -> Result<Response<proto::GetMetricsResponse>, Status> {
        Ok(Response::new(proto::GetMetricsResponse {
            prometheus_text: prometheus::render(&self.engine.status()),
        }))
    }

    async fn preload_srs(
        &self,
        request: Request<proto::PreloadSrsRequest>,
    ) -> Result<Response<proto::PreloadSrsResponse>, Status> {
        let spec = convert::circuit(&request.into_inner().circuit_id)?;
        let (store, use_pce) = (self.store.clone(), self.use_pce);
        blocking(move || {
            let already_loaded = store.params_loaded(&spec);
            let t = Instant::now();
            store.params(&spec).map_err(|e| filecoin_status(&e))?;
            // The PCE too: from the cache, or extracted in the background.
            if use_pce {
                store.pce_or_extract_in_background(&spec);
            }
            Ok(Response::new(proto::PreloadSrsResponse {
                already_loaded,
                load_time_ms: if already_loaded {
                    0
                } else {
                    t.elapsed().as_millis() as u64
                },
            }))
        })
        .await
    }

    async fn probe_device(
        &self,
        request: Request<proto::ProbeDeviceRequest>,
    ) -> Result<Response<proto::ProbeDeviceResponse>, Status> {
        let id = request.into_inner().device_id;
        if id.is_empty() {
            return Err(Status::invalid_argument("device_id is required"));
        }
        let engine = self.engine.clone();
        let health =
            blocking(move || engine.probe_device(&id).map_err(|e| engine_status(&e))).await?;
        Ok(Response::new(match health {
            cuzk_engine::Health::Healthy => proto::ProbeDeviceResponse {
                healthy: true,
                reason: String::new(),
            },
            cuzk_engine::Health::Quarantined { reason, .. } => proto::ProbeDeviceResponse {
                healthy: false,
                reason,
            },
        }))
    }

    async fn evict_srs(
        &self,
        request: Request<proto::EvictSrsRequest>,
    ) -> Result<Response<proto::EvictSrsResponse>, Status> {
        let spec = convert::circuit(&request.into_inner().circuit_id)?;
        let freed = self.store.evict_params(&spec);
        Ok(Response::new(proto::EvictSrsResponse {
            was_loaded: freed.is_some(),
            freed_bytes: freed.unwrap_or(0),
        }))
    }
}
