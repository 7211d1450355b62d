//! Waiting for a job without a thread: a [`Waiter`] is a future's handle on one job.
//!
//! Each waiter counts itself on its job while it lives. A waiter made for a caller that
//! proves and waits in one call ([`Caller::Waits`] with `cancel_if_abandoned`) cancels the
//! job when it is dropped unfinished (the caller's deadline passed or it disconnected) and
//! it was the last waiter, unless some caller submitted the job to come back for it later
//! ([`Caller::Detached`]). So nobody is left proving for a client that is gone.

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
    /// Set for a waiter whose giving up may cancel the job.
    cancels: Option<Arc<Inner>>,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiter")
            .field("job", &self.job.id)
            .field("cancels", &self.cancels.is_some())
            .finish()
    }
}

impl Waiter {
    /// Counts a waiter on `job`; call under the job table's lock.
    pub(crate) fn new(job: Arc<Job>, cancels: Option<Arc<Inner>>) -> Self {
        job.waiters.fetch_add(1, Ordering::SeqCst);
        let rx = job.done.subscribe();
        Waiter { job, rx, cancels }
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
        match &self.cancels {
            // Under the job table's lock, where submissions attach: a caller attaching now
            // either counts before this check or finds the job cancelled and proves anew.
            Some(inner) => inner.release_waiter(&self.job),
            None => {
                self.job.waiters.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}
