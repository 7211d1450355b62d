//! Waiting for a job without a thread: a [`Waiter`] is a future's handle on one job.
//!
//! Each waiter counts itself on its job while it lives. Once a caller that proves and waits
//! in one call ([`Caller::Waits`] with `cancel_if_abandoned`) has waited on a job, the last
//! waiter of any kind to be dropped while the job is unfinished (a deadline passed, a client
//! disconnected, an AwaitProof timed out) cancels it, unless some caller submitted the job to
//! come back for it later ([`Caller::Detached`]). So nobody is left proving for a client that
//! is gone, and a wait that outlives the prover's caller keeps the job only while it waits.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::engine::Inner;
use crate::job::{Job, JobView};

/// How a submitting caller will collect the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// Submits now and asks for the result later (SubmitProof, then AwaitProof): the job is
    /// never cancelled for lack of waiters.
    Detached,
    /// Waits for the result in the same call (Prove). With `cancel_if_abandoned`, the job is
    /// cancelled when this caller and every other waiter give up first.
    Waits {
        /// Cancel the job when the last waiter gives up (see the module docs).
        cancel_if_abandoned: bool,
    },
}

/// A wait on one job's result, costing no thread (see the module docs).
pub struct Waiter {
    job: Arc<Job>,
    rx: tokio::sync::watch::Receiver<bool>,
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiter")
            .field("job", &self.job.id)
            .finish_non_exhaustive()
    }
}

impl Waiter {
    /// Counts a waiter on `job`, for a caller whose giving up may cancel it when `cancels`;
    /// call under the job table's lock.
    pub(crate) fn new(job: Arc<Job>, inner: Arc<Inner>, cancels: bool) -> Self {
        job.waiters.fetch_add(1, Ordering::SeqCst);
        if cancels {
            job.cancel_when_abandoned.store(true, Ordering::SeqCst);
        }
        let rx = job.done.subscribe();
        Waiter { job, rx, inner }
    }

    /// The job's id.
    pub fn job_id(&self) -> &str {
        &self.job.id
    }

    /// Resolves when the job is completed, failed or cancelled, with its final view.
    pub async fn finished(&mut self) -> JobView {
        // The sender lives in the job this waiter holds, so the wait ends only with the job.
        let _ = self.rx.wait_for(|done| *done).await;
        self.job.view()
    }

    /// The job as it stands now.
    pub fn view(&self) -> JobView {
        self.job.view()
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // Under the job table's lock, where submissions attach: a caller attaching now
        // either counts before this check or finds the job cancelled and proves anew.
        self.inner.release_waiter(&self.job);
    }
}
