//! The `cuzk.v1.ProvingEngine` service over an [`Engine`] and a [`CircuitStore`].
//!
//! Every handler validates its request before touching state; bad input is InvalidArgument
//! and changes nothing. Engine calls block, so they run on tokio's blocking pool.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_engine::Engine;
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
}

impl std::fmt::Debug for ProvingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvingService")
            .field("use_pce", &self.use_pce)
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
    /// A service proving with `engine`, circuits and parameters from `store`.
    pub fn new(engine: Arc<Engine>, store: Arc<CircuitStore>, use_pce: bool) -> Self {
        ProvingService {
            engine,
            store,
            use_pce,
        }
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    async fn submit(
        &self,
        r: proto::SubmitProofRequest,
    ) -> Result<proto::SubmitProofResponse, Status> {
        if r.request_id.is_empty() {
            return Err(Status::invalid_argument("request_id is required"));
        }
        let request = convert::request(&r)?;
        let priority = convert::priority(r.priority)?;
        let (engine, store, use_pce) = (self.engine.clone(), self.store.clone(), self.use_pce);
        blocking(move || {
            // A known request id attaches without decoding or loading anything again.
            if let Ok(v) = engine.await_job(&r.request_id, Some(Duration::ZERO)) {
                return Ok(proto::SubmitProofResponse {
                    job_id: v.id,
                    queue_position: 0,
                    assigned_gpu: v.devices.first().cloned().unwrap_or_default(),
                });
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
            let s = engine
                .submit(&r.request_id, Arc::new(work), priority)
                .map_err(|e| engine_status(&e))?;
            Ok(proto::SubmitProofResponse {
                job_id: s.job_id,
                queue_position: s.queue_position.min(u32::MAX as usize) as u32,
                assigned_gpu: String::new(),
            })
        })
        .await
    }

    async fn await_job(
        &self,
        job_id: String,
        timeout_ms: u64,
    ) -> Result<proto::AwaitProofResponse, Status> {
        if job_id.is_empty() {
            return Err(Status::invalid_argument("job_id is required"));
        }
        let engine = self.engine.clone();
        let timeout = (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms));
        blocking(move || {
            let v = engine
                .await_job(&job_id, timeout)
                .map_err(|e| engine_status(&e))?;
            Ok(convert::await_response(&v, Duration::ZERO))
        })
        .await
    }
}

#[tonic::async_trait]
impl ProvingEngine for ProvingService {
    async fn submit_proof(
        &self,
        request: Request<proto::SubmitProofRequest>,
    ) -> Result<Response<proto::SubmitProofResponse>, Status> {
        Ok(Response::new(self.submit(request.into_inner()).await?))
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
        let s = self.submit(submit).await?;
        let result = self.await_job(s.job_id, 0).await?;
        Ok(Response::new(proto::ProveResponse {
            result: Some(result),
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
                ordinal: i as u32,
                name: d.info.name.clone(),
                vram_total_bytes: d.info.memory_total,
                vram_free_bytes: d.info.memory_total.saturating_sub(d.memory_used),
                current_job_id: d
                    .current_job
                    .as_ref()
                    .map(|j| j.0.clone())
                    .unwrap_or_default(),
                current_proof_kind: d
                    .current_job
                    .as_ref()
                    .map(|j| j.1.clone())
                    .unwrap_or_default(),
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
                proof_kind: k.clone(),
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
