//! Ordinary CPU work steps aside while urgent work runs.
//!
//! Ordinary synthesis runs in the synthesis threads and rayon's global pool; the urgent lanes
//! run in pools of their own, whose threads are exempt from
//! [`cuzk_groth16::gate`]. A [`Hold`] closes that gate: ordinary witness synthesis and PCE
//! products stop at their next checkpoint (every allocation, every block of rows), and a
//! broadcast task stops every global-pool thread at its next task boundary, for work that
//! passes no checkpoint. The stop is capped at `max_wait` per held period (see the gate's
//! docs): a paused thread may hold something the urgent work needs.

use std::time::Duration;

use cuzk_groth16::gate::{self, GateHold};

/// While alive, ordinary synthesis and the global pool pause (see the module docs).
pub(crate) struct Hold {
    _gate: GateHold,
}

/// Opens a hold. Must be called from outside the global pool (it would pause its own caller).
pub(crate) fn hold(max_wait: Duration) -> Hold {
    let g = gate::hold(max_wait);
    rayon::spawn_broadcast(|_| gate::checkpoint());
    Hold { _gate: g }
}

/// Marks the calling thread as one that does urgent work.
pub(crate) fn exempt_this_thread() {
    gate::exempt_this_thread();
}

// One test for the module: the gate is per process, so tests in one process share it.
#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Instant;

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
    fn global_pool_pauses_while_a_hold_is_open_resumes_after_and_at_most_max_wait() {
        let (done, stop) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let worker = busy_global_pool(done.clone(), stop.clone());
        std::thread::sleep(Duration::from_millis(50));
        assert!(done.load(Ordering::SeqCst) > 0, "the pool never ran");

        let h = hold(Duration::from_secs(30));
        // Tasks already started finish; then every pool thread waits.
        std::thread::sleep(Duration::from_millis(100));
        let before = done.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            done.load(Ordering::SeqCst),
            before,
            "pool kept working under a hold"
        );

        drop(h);
        std::thread::sleep(Duration::from_millis(100));
        assert!(done.load(Ordering::SeqCst) > before, "pool did not resume");
        stop.store(true, Ordering::SeqCst);
        worker.join().unwrap();

        let _h = hold(Duration::from_millis(50));
        let t = Instant::now();
        // A task queued behind the pause runs once the cap ends the wait.
        let v: usize = (0..1000usize).into_par_iter().sum();
        assert_eq!(v, 499_500);
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
