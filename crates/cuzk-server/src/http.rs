//! The HTTP side: `/metrics` (Prometheus text), `/status` (JSON) and `/` (a page that shows
//! each device's activity, the queues, memory and recent jobs, refreshing itself).

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;
use cuzk_engine::{Engine, JobStatus};
use cuzk_filecoin::CircuitStore;

use crate::placement::{placement, tier_name};
use serde_json::{json, Value};

#[derive(Clone)]
struct AppState {
    engine: Arc<Engine>,
    store: Arc<CircuitStore>,
}

/// The engine's state as the `/status` JSON document.
pub fn status_json(engine: &Engine, store: &CircuitStore) -> Value {
    let s = engine.status();
    let devices: Vec<Value> = s
        .devices
        .iter()
        .map(|d| {
            let activity: Vec<Value> = d
                .activity
                .iter()
                .map(|a| {
                    json!({
                        "job": a.job_id, "kind": a.kind, "partition": a.partition,
                        "started_ago_s": a.started_ago.as_secs_f64(),
                        "ended_ago_s": a.ended_ago.map(|e| e.as_secs_f64()),
                    })
                })
                .collect();
            json!({
                "id": d.info.id,
                "name": d.info.name,
                "ordinal": d.info.ordinal,
                "memory_total_bytes": d.info.memory_total,
                "memory_budget_bytes": d.memory_budget,
                "memory_reserved_bytes": d.memory_used,
                "memory_free_bytes": d.memory_free,
                "busy_seconds": d.busy.as_secs_f64(),
                "busy_fraction": if s.uptime.is_zero() { 0.0 } else { (d.busy.as_secs_f64() / s.uptime.as_secs_f64()).min(1.0) },
                "busy_last_minute": d.busy_last_minute,
                "current_job": d.current_job.as_ref().map(|j| j.0.clone()),
                "current_kind": d.current_job.as_ref().map(|j| j.1.clone()),
                "activity": activity,
                "health": crate::convert::health_name(&d.health),
                "health_reason": match &d.health {
                    cuzk_engine::Health::Healthy => None,
                    cuzk_engine::Health::Quarantined { reason, .. } => Some(reason.clone()),
                },
                "faults": d.faults,
                "fallback": d.fallback,
            })
        })
        .collect();
    let mut queues: Vec<Value> = s
        .queues
        .iter()
        .map(|(k, (p, r))| json!({"kind": k, "pending": p, "running": r}))
        .collect();
    queues.sort_by(|a, b| a["kind"].as_str().cmp(&b["kind"].as_str()));
    let srs: Vec<Value> = store
        .srs_status()
        .into_iter()
        .map(|e| {
            let at = placement(&e, &s.devices);
            json!({
                "circuit_id": e.srs_id,
                "tier": tier_name(at.tier),
                "devices": at.devices,
                "bytes": e.bytes,
                "refs": e.refs,
            })
        })
        .collect();
    let jobs: Vec<Value> = engine
        .recent_jobs(50)
        .into_iter()
        .map(|j| {
            let (status, error) = match &j.status {
                JobStatus::Queued => ("queued", None),
                JobStatus::Running => ("running", None),
                JobStatus::Completed(_) => ("completed", None),
                JobStatus::Failed(e) => ("failed", Some(e.clone())),
                JobStatus::Cancelled => ("cancelled", None),
            };
            json!({
                "id": j.id, "request_id": j.request_id, "kind": j.kind, "status": status, "error": error,
                "devices": j.devices,
                "params_load_ms": j.timings.params_load.as_millis() as u64,
                "queue_wait_ms": j.timings.queue_wait.as_millis() as u64,
                "synthesis_ms": j.timings.synthesis.as_millis() as u64,
                "device_wait_ms": j.timings.device_wait.as_millis() as u64,
                "device_ms": j.timings.device.as_millis() as u64,
                "total_ms": j.timings.total.as_millis() as u64,
            })
        })
        .collect();
    json!({
        "uptime_seconds": s.uptime.as_secs(),
        "devices": devices,
        "queues": queues,
        "host_memory": {"used_bytes": s.host_memory.0, "total_bytes": s.host_memory.1},
        "srs": srs,
        "recent_jobs": jobs,
        "totals": {
            "completed": s.metrics.values().map(|m| m.completed).sum::<u64>(),
            "failed": s.metrics.values().map(|m| m.failed).sum::<u64>(),
            "cancelled": s.metrics.values().map(|m| m.cancelled).sum::<u64>(),
            "abandoned": s.metrics.values().map(|m| m.abandoned).sum::<u64>(),
        },
    })
}

async fn metrics(State(st): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        crate::prometheus::render(&st.engine.status()),
    )
}

async fn status(State(st): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        status_json(&st.engine, &st.store).to_string(),
    )
}

async fn page() -> Html<&'static str> {
    Html(include_str!("status.html"))
}

/// The HTTP routes over `engine` and `store`.
pub fn router(engine: Arc<Engine>, store: Arc<CircuitStore>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/metrics", get(metrics))
        .route("/status", get(status))
        .with_state(AppState { engine, store })
}

/// Serves the HTTP routes on `listener` until `shutdown` resolves.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    engine: Arc<Engine>,
    store: Arc<CircuitStore>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(engine, store))
        .with_graceful_shutdown(shutdown)
        .await
}
