//! Ordinary CPU work steps aside while urgent work synthesizes.
//!
//! Ordinary synthesis runs its parallel parts (witness units, PCE products) in rayon's global
//! pool; the urgent lanes have pools of their own. While an urgent partition synthesizes, a
//! [`Hold`] is open: every global-pool thread, at its next task boundary, waits until no hold
//! is open, so the urgent pool has the cores to itself. The wait is capped at
//! [`CpuPause::max_wait`]: a pool thread may be paused while it holds something the urgent work
//! needs (a lazy initializer), and then the cap is what ends the wait, not a deadlock.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The pause shared by the urgent lanes of one engine.
#[derive(Debug)]
pub(crate) struct CpuPause {
    /// Holds open now.
    open: Mutex<usize>,
    changed: Condvar,
    max_wait: Duration,
}

/// While alive, global-pool threads pause at their next task boundary.
pub(crate) struct Hold(Arc<CpuPause>);

impl CpuPause {
    pub(crate) fn new(max_wait: Duration) -> Arc<Self> {
        Arc::new(CpuPause {
            open: Mutex::new(0),
            changed: Condvar::new(),
            max_wait,
        })
    }

    /// Opens a hold and asks every thread of the global pool to wait while any is open.
    /// Must be called from outside the global pool (it would pause its own caller).
    pub(crate) fn hold(self: &Arc<Self>) -> Hold {
        *self.lock() += 1;
        let pause = self.clone();
        rayon::spawn_broadcast(move |_| pause.wait());
        Hold(self.clone())
    }

    /// Waits until no hold is open, or `max_wait`.
    fn wait(&self) {
        let until = Instant::now() + self.max_wait;
        let mut open = self.lock();
        while *open > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            open = match self.changed.wait_timeout(open, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, usize> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        *self.0.lock() -= 1;
        self.0.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// Runs many small tasks in the global pool until `stop`, counting them.
    fn busy_global_pool(
        done: Arc<AtomicUsize>,
        stop: Arc<AtomicBool>,
    ) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                (0..64).into_par_iter().for_each(|_| {
                    std::thread::sleep(Duration::from_millis(1));
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
        })
    }

    #[test]
    fn global_pool_pauses_while_a_hold_is_open_and_resumes_after() {
        let pause = CpuPause::new(Duration::from_secs(30));
        let (done, stop) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let worker = busy_global_pool(done.clone(), stop.clone());
        std::thread::sleep(Duration::from_millis(50));
        assert!(done.load(Ordering::SeqCst) > 0, "the pool never ran");

        let hold = pause.hold();
        // Tasks already started finish; then every pool thread waits.
        std::thread::sleep(Duration::from_millis(100));
        let before = done.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            done.load(Ordering::SeqCst),
            before,
            "pool kept working under a hold"
        );

        drop(hold);
        std::thread::sleep(Duration::from_millis(100));
        assert!(done.load(Ordering::SeqCst) > before, "pool did not resume");
        stop.store(true, Ordering::SeqCst);
        worker.join().unwrap();
    }

    #[test]
    fn a_hold_pauses_the_pool_at_most_max_wait() {
        let pause = CpuPause::new(Duration::from_millis(50));
        let _hold = pause.hold();
        let t = Instant::now();
        // A task queued behind the pause runs once the cap ends the wait.
        let v: usize = (0..1000usize).into_par_iter().sum();
        assert_eq!(v, 499_500);
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
