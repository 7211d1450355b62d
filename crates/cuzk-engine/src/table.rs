//! The job table: jobs by job id, and by the client's request id with their content.
//!
//! A job is named by its request id *and* the digest of what it proves. Clients reuse
//! request ids for different content (Curio sends every chain partition of a WindowPoSt
//! deadline under one id), so a request id alone never selects a result:
//!
//! - same request id, same content, a job queued, running or completed: attach to it;
//! - same request id, other content: a separate job with its own job id;
//! - same request id and content after a failure or cancellation: a new job that proves again.
//!
//! Job ids are `<request id>@<12 hex digits of the digest>`, with `.2`, `.3`, ... for later
//! attempts of the same content. A lookup by id takes a job id first, then a bare request id,
//! which names the newest job submitted under it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::job::Job;
use crate::work::ContentDigest;

/// Hex digits of the content digest in a job id.
const ID_DIGEST_BYTES: usize = 6;

#[derive(Default)]
pub(crate) struct JobTable {
    by_id: HashMap<String, Arc<Job>>,
    /// Jobs under each request id, oldest first.
    by_request: HashMap<String, Vec<Arc<Job>>>,
}

impl JobTable {
    /// The job `id` names: a job id, else the newest job under the request id `id`.
    pub fn get(&self, id: &str) -> Option<Arc<Job>> {
        self.by_id
            .get(id)
            .or_else(|| self.by_request.get(id).and_then(|v| v.last()))
            .cloned()
    }

    /// The job a new submission of `content` under `request_id` attaches to: the newest one
    /// with that content that has not failed or been cancelled.
    pub fn attachable(&self, request_id: &str, content: &ContentDigest) -> Option<Arc<Job>> {
        self.by_request
            .get(request_id)?
            .iter()
            .rev()
            .find(|j| j.content == *content && j.reusable())
            .cloned()
    }

    /// A job id for a new job of `content` under `request_id`, unused in the table.
    pub fn new_id(&self, request_id: &str, content: &ContentDigest) -> String {
        let base = format!("{request_id}@{}", content.short_hex(ID_DIGEST_BYTES));
        if !self.by_id.contains_key(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}.{n}"))
            .find(|id| !self.by_id.contains_key(id))
            .unwrap_or(base)
    }

    pub fn insert(&mut self, job: Arc<Job>) {
        self.by_request
            .entry(job.request_id.clone())
            .or_default()
            .push(job.clone());
        self.by_id.insert(job.id.clone(), job);
    }

    pub fn jobs(&self) -> impl Iterator<Item = &Arc<Job>> {
        self.by_id.values()
    }

    /// Drops jobs that finished more than `keep` ago, then the oldest finished jobs while
    /// more than `max_jobs` are kept or their proofs take more than `max_bytes`.
    pub fn purge(&mut self, keep: Duration, max_jobs: usize, max_bytes: u64) {
        let mut finished: Vec<(std::time::Instant, u64, String)> = Vec::new();
        let mut expired = Vec::new();
        for (id, j) in &self.by_id {
            let st = j.lock();
            if let Some(t) = st.finished_at {
                if t.elapsed() >= keep {
                    expired.push(id.clone());
                } else {
                    let bytes = match &st.status {
                        crate::job::JobStatus::Completed(p) => p.len() as u64,
                        _ => 0,
                    };
                    finished.push((t, bytes, id.clone()));
                }
            }
        }
        finished.sort();
        let (mut n, mut bytes) = (finished.len(), finished.iter().map(|f| f.1).sum::<u64>());
        for (_, b, id) in finished {
            if n <= max_jobs && bytes <= max_bytes {
                break;
            }
            expired.push(id);
            n -= 1;
            bytes -= b;
        }
        for id in expired {
            if let Some(j) = self.by_id.remove(&id) {
                if let Some(v) = self.by_request.get_mut(&j.request_id) {
                    v.retain(|x| !Arc::ptr_eq(x, &j));
                    if v.is_empty() {
                        self.by_request.remove(&j.request_id);
                    }
                }
            }
        }
    }
}
