//! A process-wide gate at which ordinary synthesis steps aside for urgent work.
//!
//! While a [`GateHold`] is open, every thread that is not [exempt](exempt_this_thread) and
//! reaches a [`checkpoint`] waits until no hold is open. [`WitnessCs`](crate::WitnessCs)
//! passes a checkpoint at every allocation and the PCE products between row blocks, so
//! ordinary synthesis stops within microseconds, also in the middle of a long witness task.
//! Threads that do urgent work mark themselves exempt.
//!
//! The wait is bounded: a paused thread may hold something the urgent work needs (a lazy
//! initializer, a shared cache's lock). Each continuous period with a hold open has a deadline
//! (the `max_wait` of the hold that opened it); past it, checkpoints pass until every hold has
//! closed, so a missed dependency costs at most `max_wait`, never a deadlock.
//!
//! The gate is per process because the cores are: two engines in one process share them.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Holds open now; checked without a lock on every checkpoint.
static OPEN: AtomicUsize = AtomicUsize::new(0);
/// The deadline of the current held period (None when no hold is open).
static DEADLINE: Mutex<Option<Instant>> = Mutex::new(None);
static CLOSED: Condvar = Condvar::new();

thread_local! {
    static EXEMPT: Cell<bool> = const { Cell::new(false) };
}

/// While alive, non-exempt threads wait at their next checkpoint (see the module docs).
#[must_use = "the gate closes again when the hold is dropped"]
#[derive(Debug)]
pub struct GateHold(());

/// Opens a hold. When it opens a new held period, that period's checkpoints wait at most
/// `max_wait` from now.
pub fn hold(max_wait: Duration) -> GateHold {
    let mut deadline = lock();
    if OPEN.fetch_add(1, Ordering::SeqCst) == 0 {
        *deadline = Some(Instant::now() + max_wait);
    }
    GateHold(())
}

/// Marks the calling thread as doing urgent work: checkpoints never stop it.
pub fn exempt_this_thread() {
    EXEMPT.with(|e| e.set(true));
}

/// Whether the calling thread is exempt.
pub fn is_exempt() -> bool {
    EXEMPT.with(Cell::get)
}

/// Waits while a hold is open, unless this thread is exempt or the held period's deadline has
/// passed. One relaxed load when no hold is open.
#[inline]
pub fn checkpoint() {
    if OPEN.load(Ordering::Relaxed) != 0 {
        wait();
    }
}

#[cold]
fn wait() {
    if is_exempt() {
        return;
    }
    let mut deadline = lock();
    while OPEN.load(Ordering::SeqCst) > 0 {
        let Some(until) = *deadline else { return };
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        deadline = match CLOSED.wait_timeout(deadline, left) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        };
    }
}

fn lock() -> MutexGuard<'static, Option<Instant>> {
    DEADLINE.lock().unwrap_or_else(|p| p.into_inner())
}

impl Drop for GateHold {
    fn drop(&mut self) {
        let mut deadline = lock();
        if OPEN.fetch_sub(1, Ordering::SeqCst) == 1 {
            *deadline = None;
            CLOSED.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// Passes checkpoints in a loop until `stop`, counting them.
    fn checkpoint_loop(
        exempt: bool,
        done: Arc<AtomicUsize>,
        stop: Arc<AtomicBool>,
    ) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            if exempt {
                exempt_this_thread();
            }
            while !stop.load(Ordering::SeqCst) {
                checkpoint();
                done.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    }

    // One test: the gate is process-wide, so parallel tests in one process would share it.
    #[test]
    fn a_hold_stops_ordinary_threads_not_exempt_ones_and_at_most_max_wait() {
        let stop = Arc::new(AtomicBool::new(false));
        let (ordinary, urgent) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let t1 = checkpoint_loop(false, ordinary.clone(), stop.clone());
        let t2 = checkpoint_loop(true, urgent.clone(), stop.clone());
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            ordinary.load(Ordering::SeqCst) > 0,
            "ordinary thread never ran"
        );

        let h = hold(Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(20));
        let (o0, u0) = (
            ordinary.load(Ordering::SeqCst),
            urgent.load(Ordering::SeqCst),
        );
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            ordinary.load(Ordering::SeqCst),
            o0,
            "ordinary work ran under a hold"
        );
        assert!(
            urgent.load(Ordering::SeqCst) > u0,
            "exempt work was stopped"
        );

        drop(h);
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            ordinary.load(Ordering::SeqCst) > o0,
            "ordinary work did not resume"
        );

        // A hold left open past its deadline stops nobody after the deadline.
        let h = hold(Duration::from_millis(100));
        std::thread::sleep(Duration::from_millis(300));
        let o1 = ordinary.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            ordinary.load(Ordering::SeqCst) > o1,
            "ordinary work stayed stopped past max_wait"
        );
        drop(h);
        stop.store(true, Ordering::SeqCst);
        t1.join().unwrap();
        t2.join().unwrap();
    }
}
