//! A gate at which ordinary synthesis steps aside for urgent work.
//!
//! A [`Gate`] is an object its owner (the engine) makes and hands to the threads that do
//! ordinary work: [`Gate::install_on_this_thread`] in each of them (a thread pool's start
//! handler, a synthesis thread's first line). While a [`GateHold`] on it is open, such a
//! thread waits at its next [`checkpoint`]. [`WitnessCs`](crate::WitnessCs) passes a
//! checkpoint at every allocation and the PCE products between row blocks, so ordinary
//! synthesis stops within microseconds, also in the middle of a long witness task. Threads
//! with no gate installed (urgent lanes, every other library's threads) never stop: there is
//! no process-wide state.
//!
//! The wait is bounded: a paused thread may hold something the urgent work needs (a lazy
//! initializer, a shared cache's lock). Each continuous period with a hold open has a deadline
//! (the `max_wait` of the hold that opened it); past it, checkpoints pass until every hold has
//! closed, so a missed dependency costs at most `max_wait`, never a deadlock.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A gate (see the module docs).
#[derive(Debug, Default)]
pub struct Gate {
    /// Holds open now; checked without a lock on every checkpoint.
    open: AtomicUsize,
    periods: Mutex<Periods>,
    closed: Condvar,
}

thread_local! {
    /// The gate the calling thread's checkpoints obey, if any.
    static INSTALLED: RefCell<Option<Arc<Gate>>> = const { RefCell::new(None) };
}

/// The held periods of a gate.
#[derive(Debug, Default)]
struct Periods {
    /// The start and deadline of the current held period (None when no hold is open).
    current: Option<(Instant, Instant)>,
    /// How long the closed periods could stop a thread: each one's length, capped at its
    /// deadline.
    stopping_before: Duration,
}

/// While alive, threads with the gate installed wait at their next checkpoint.
#[must_use = "the gate closes again when the hold is dropped"]
#[derive(Debug)]
pub struct GateHold(Arc<Gate>);

impl Gate {
    /// A gate with no hold open.
    pub fn new() -> Arc<Self> {
        Arc::new(Gate::default())
    }

    /// Opens a hold. When it opens a new held period, that period's checkpoints wait at
    /// most `max_wait` from now.
    pub fn hold(self: &Arc<Self>, max_wait: Duration) -> GateHold {
        let mut periods = self.lock();
        if self.open.fetch_add(1, Ordering::SeqCst) == 0 {
            let now = Instant::now();
            periods.current = Some((now, now + max_wait));
        }
        GateHold(self.clone())
    }

    /// Makes the calling thread's checkpoints obey `gate` (`None`: obey none).
    pub fn install_on_this_thread(gate: Option<Arc<Gate>>) {
        INSTALLED.with(|g| *g.borrow_mut() = gate);
    }

    /// Whether a hold is open now.
    pub fn is_held(&self) -> bool {
        self.open.load(Ordering::SeqCst) > 0
    }

    /// How long, in all, a thread that passes checkpoints continuously could have been
    /// stopped since the gate was made: what a deadline on gated work discounts.
    pub fn stopping_time(&self) -> Duration {
        let p = self.lock();
        let now = Instant::now();
        p.stopping_before
            + p.current
                .map_or(Duration::ZERO, |(start, until)| now.min(until) - start)
    }

    fn lock(&self) -> MutexGuard<'_, Periods> {
        self.periods.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[cold]
    fn wait(&self) {
        let mut periods = self.lock();
        while self.open.load(Ordering::SeqCst) > 0 {
            let Some((_, until)) = periods.current else {
                return;
            };
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            periods = match self.closed.wait_timeout(periods, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }
}

/// Waits while a hold is open on the gate installed on this thread, unless the held period's
/// deadline has passed. A thread-local read and one relaxed load when no hold is open.
#[inline]
pub fn checkpoint() {
    INSTALLED.with(|g| {
        if let Some(g) = &*g.borrow() {
            if g.open.load(Ordering::Relaxed) != 0 {
                g.wait();
            }
        }
    });
}

impl Drop for GateHold {
    fn drop(&mut self) {
        let g = &self.0;
        let mut periods = g.lock();
        if g.open.fetch_sub(1, Ordering::SeqCst) == 1 {
            if let Some((start, until)) = periods.current.take() {
                periods.stopping_before += Instant::now().min(until) - start;
            }
            g.closed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// Passes checkpoints in a loop until `stop`, counting them, with `gate` installed.
    fn checkpoint_loop(
        gate: Option<Arc<Gate>>,
        done: Arc<AtomicUsize>,
        stop: Arc<AtomicBool>,
    ) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            Gate::install_on_this_thread(gate);
            while !stop.load(Ordering::SeqCst) {
                checkpoint();
                done.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    }

    #[test]
    fn a_hold_stops_threads_of_its_gate_only_and_at_most_max_wait() {
        let gate = Gate::new();
        let other = Gate::new();
        let stop = Arc::new(AtomicBool::new(false));
        let counters: Vec<Arc<AtomicUsize>> =
            (0..3).map(|_| Arc::new(AtomicUsize::new(0))).collect();
        let threads = [
            checkpoint_loop(Some(gate.clone()), counters[0].clone(), stop.clone()),
            checkpoint_loop(None, counters[1].clone(), stop.clone()),
            checkpoint_loop(Some(other.clone()), counters[2].clone(), stop.clone()),
        ];
        let now = |i: usize| counters[i].load(Ordering::SeqCst);
        // Whether counter `i` passes `than` within 20 s (a starved machine only slows it).
        let grows = |i: usize, than: usize| {
            let t = Instant::now();
            while now(i) <= than {
                if t.elapsed() > Duration::from_secs(20) {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            true
        };
        assert!(grows(0, 0), "the gated thread never ran");

        let h = gate.hold(Duration::from_secs(30));
        assert!(gate.is_held() && !other.is_held());
        std::thread::sleep(Duration::from_millis(20));
        let before: Vec<usize> = (0..3).map(now).collect();
        assert!(grows(1, before[1]), "a thread without a gate was stopped");
        assert!(grows(2, before[2]), "a thread of another gate was stopped");
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(now(0), before[0], "work of the held gate ran");

        drop(h);
        let first = gate.stopping_time();
        assert!(first >= Duration::from_millis(220), "{first:?}");
        assert_eq!(other.stopping_time(), Duration::ZERO);
        assert!(grows(0, before[0]), "work did not resume");
        assert_eq!(gate.stopping_time(), first, "time without a hold counted");

        // A hold left open past its deadline stops nobody after the deadline.
        let h = gate.hold(Duration::from_millis(100));
        std::thread::sleep(Duration::from_millis(300));
        let o1 = now(0);
        assert!(grows(0, o1), "work stayed stopped past max_wait");
        drop(h);
        let second = gate.stopping_time() - first;
        assert!(
            second >= Duration::from_millis(100) && second < Duration::from_millis(150),
            "a period counts up to its deadline only: {second:?}"
        );
        stop.store(true, Ordering::SeqCst);
        for t in threads {
            t.join().unwrap();
        }
    }
}
