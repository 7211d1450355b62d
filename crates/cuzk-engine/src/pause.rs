//! Ordinary CPU work steps aside while urgent work runs.
//!
//! Ordinary synthesis, and the proofs of devices that compute on the host, run in the
//! engine's ordinary pools, every thread of which has the engine's [`Gate`] installed; the
//! urgent lanes run in pools of their own without it, and every other thread in the process
//! (rayon's global pool, other libraries) never sees it. A [`Hold`] closes the gate:
//! ordinary witness synthesis and PCE products stop at their next checkpoint (every
//! allocation, every block of rows), and a broadcast task stops every ordinary-pool thread
//! that next looks for work (idle, or waiting on a join), for work that passes no
//! checkpoint. The stop is capped at `max_wait` per held period (see the gate's docs): a
//! paused thread may hold something the urgent work needs.
//!
//! One pool per lane (a synthesis thread, a device worker), never one shared by lanes: a
//! pool thread waiting on a join steals queued work, and in a shared pool that can be another
//! lane's whole partition, stacked on top of its own and blocked on whatever the partition
//! below holds (a lazy initializer it is running): a deadlock. In a pool of its own a lane's
//! threads only ever steal pieces of its own partition.

use std::sync::Arc;
use std::time::Duration;

use cuzk_groth16::gate::{self, Gate, GateHold};

/// The ordinary lanes' pools, and the gate that pauses them.
pub(crate) struct Ordinary {
    gate: Arc<Gate>,
    pools: Vec<Arc<rayon::ThreadPool>>,
}

impl Ordinary {
    /// A gate with no lanes yet.
    pub fn new() -> Self {
        Ordinary {
            gate: Gate::new(),
            pools: Vec::new(),
        }
    }

    /// A new lane: a pool named `name` of one thread per core, each with the gate installed.
    pub fn add_lane(&mut self, name: String) -> Result<Arc<rayon::ThreadPool>, String> {
        let p = Arc::new(pool(name, Some(&self.gate))?);
        self.pools.push(p.clone());
        Ok(p)
    }

    /// Installs the gate on the calling thread (a synthesis thread that feeds a pool).
    pub fn join_this_thread(&self) {
        Gate::install_on_this_thread(Some(self.gate.clone()));
    }

    /// How long, in all, the gate could have stopped work in these pools.
    pub fn stopping_time(&self) -> Duration {
        self.gate.stopping_time()
    }

    /// Closes the gate until the hold is dropped (see the module docs). Must not be called
    /// from an ordinary pool (it would pause its own caller).
    pub fn hold(&self, max_wait: Duration) -> Hold {
        let g = self.gate.hold(max_wait);
        for p in &self.pools {
            p.spawn_broadcast(|_| gate::checkpoint());
        }
        Hold { _gate: g }
    }
}

/// A pool named `name` of one thread per core, its threads named `<name>-<i>`; with `gate`,
/// every thread has it installed (an ordinary lane), without, nothing stops it (an urgent
/// lane).
pub(crate) fn pool(name: String, gate: Option<&Arc<Gate>>) -> Result<rayon::ThreadPool, String> {
    let g = gate.cloned();
    let thread_name = name.clone();
    rayon::ThreadPoolBuilder::new()
        .thread_name(move |i| format!("{thread_name}-{i}"))
        .start_handler(move |_| {
            if let Some(g) = &g {
                Gate::install_on_this_thread(Some(g.clone()));
            }
        })
        .build()
        .map_err(|e| format!("cannot start thread pool {name}: {e}"))
}

/// While alive, ordinary synthesis pauses (see the module docs).
pub(crate) struct Hold {
    _gate: GateHold,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Instant;

    /// Many small tasks, each passing a checkpoint as witness synthesis does, counted, until
    /// `stop`.
    fn busy(done: &AtomicUsize, stop: &AtomicBool) {
        while !stop.load(Ordering::SeqCst) {
            (0..64).into_par_iter().for_each(|_| {
                gate::checkpoint();
                std::thread::sleep(Duration::from_millis(1));
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
    }

    #[test]
    fn ordinary_pools_pause_under_a_hold_and_the_global_pool_does_not() {
        let mut o = Ordinary::new();
        let (a, b) = (
            o.add_lane("a".into()).unwrap(),
            o.add_lane("b".into()).unwrap(),
        );
        let stop = AtomicBool::new(false);
        let (ordinary, global) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let now = |c: &AtomicUsize| c.load(Ordering::SeqCst);
        // Waits (up to 20 s, so a starved machine only slows it) until `c` passes `than`.
        let passes = |c: &AtomicUsize, than: usize| {
            let t = Instant::now();
            while now(c) <= than {
                if t.elapsed() > Duration::from_secs(20) {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            true
        };
        // Tasks past their checkpoint when the hold begins may still finish: at most one per
        // pool thread. A pool that ignored the hold would finish hundreds.
        let in_flight = a.current_num_threads() + b.current_num_threads();
        // Observed inside the scope, asserted after it: a failed assertion must not leave
        // the workers running and the scope waiting on them.
        let seen = std::thread::scope(|s| {
            s.spawn(|| a.install(|| busy(&ordinary, &stop)));
            s.spawn(|| b.install(|| busy(&ordinary, &stop)));
            s.spawn(|| busy(&global, &stop));
            let started = passes(&ordinary, 0);

            let h = o.hold(Duration::from_secs(30));
            let at_hold = now(&ordinary);
            let g0 = now(&global);
            let global_ran = passes(&global, g0);
            std::thread::sleep(Duration::from_millis(400));
            let held = now(&ordinary);

            drop(h);
            let resumed = passes(&ordinary, held);
            stop.store(true, Ordering::SeqCst);
            (started, at_hold, held, global_ran, resumed)
        });
        let (started, at_hold, held, global_ran, resumed) = seen;
        assert!(started, "the pool never ran");
        assert!(
            held - at_hold <= in_flight,
            "the pool kept working under a hold ({} tasks, {in_flight} threads)",
            held - at_hold
        );
        assert!(global_ran, "the global pool was paused");
        assert!(resumed, "the pool did not resume");

        let _h = o.hold(Duration::from_millis(50));
        let t = Instant::now();
        // A task queued behind the pause runs once the cap ends the wait.
        let v: usize = b.install(|| (0..1000usize).into_par_iter().sum());
        assert_eq!(v, 499_500);
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
