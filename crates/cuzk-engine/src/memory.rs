//! A byte budget with RAII reservations.
//!
//! `acquire` blocks until the bytes are free (no lost wake-ups: every release notifies under
//! the same mutex the waiters check); a request larger than the whole budget is an error at
//! once, never a wait that cannot end.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::error::EngineError;

#[derive(Debug)]
struct State {
    used: u64,
    /// The most ever reserved at once.
    peak: u64,
}

/// A named budget of bytes.
#[derive(Debug)]
pub struct MemoryBudget {
    name: String,
    total: u64,
    state: Mutex<State>,
    freed: Condvar,
}

/// Bytes held from a budget until dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl MemoryBudget {
    /// A budget of `total` bytes.
    pub fn new(name: impl Into<String>, total: u64) -> Arc<Self> {
        Arc::new(MemoryBudget {
            name: name.into(),
            total,
            state: Mutex::new(State { used: 0, peak: 0 }),
            freed: Condvar::new(),
        })
    }

    /// Total bytes.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        self.lock().used
    }

    /// The most bytes ever reserved at once (never above [`MemoryBudget::total`]).
    pub fn peak(&self) -> u64 {
        self.lock().peak
    }

    /// The budget's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Checks a request could ever be granted.
    pub fn check_fits(&self, bytes: u64) -> Result<(), EngineError> {
        if bytes > self.total {
            return Err(EngineError::TooLarge(format!(
                "needs {bytes} bytes of {} memory, the whole budget is {} bytes",
                self.name, self.total
            )));
        }
        Ok(())
    }

    /// Reserves `bytes`, waiting while they are in use; `give_up` is polled while waiting.
    pub fn acquire(
        self: &Arc<Self>,
        bytes: u64,
        give_up: &dyn Fn() -> bool,
    ) -> Result<Reservation, EngineError> {
        self.check_fits(bytes)?;
        let mut st = self.lock();
        while st.used + bytes > self.total {
            if give_up() {
                return Err(EngineError::Cancelled);
            }
            st = self
                .freed
                .wait_timeout(st, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        st.used += bytes;
        st.peak = st.peak.max(st.used);
        Ok(Reservation {
            budget: self.clone(),
            bytes,
        })
    }

    /// Waits until some reservation is released or `max` passes.
    pub fn wait_for_release(&self, max: Duration) {
        let st = self.lock();
        let _ = self.freed.wait_timeout(st, max);
    }

    /// Reserves `bytes` if free now.
    pub fn try_acquire(self: &Arc<Self>, bytes: u64) -> Result<Option<Reservation>, EngineError> {
        self.check_fits(bytes)?;
        let mut st = self.lock();
        if st.used + bytes > self.total {
            return Ok(None);
        }
        st.used += bytes;
        st.peak = st.peak.max(st.used);
        Ok(Some(Reservation {
            budget: self.clone(),
            bytes,
        }))
    }
}

impl Reservation {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Takes over `other`'s bytes: one reservation of both; an error (both kept apart)
    /// when `other` is of another budget.
    pub fn absorb(&mut self, mut other: Reservation) -> Result<(), Reservation> {
        if !Arc::ptr_eq(&self.budget, &other.budget) {
            return Err(other);
        }
        self.bytes += other.bytes;
        // Its bytes are now this reservation's: its drop returns nothing.
        other.bytes = 0;
        Ok(())
    }

    /// Returns the bytes beyond `bytes` to the budget (nothing when it holds no more).
    pub fn shrink_to(&mut self, bytes: u64) {
        if bytes >= self.bytes {
            return;
        }
        let mut st = self.budget.lock();
        st.used -= self.bytes - bytes;
        drop(st);
        self.bytes = bytes;
        self.budget.freed.notify_all();
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut st = self.budget.lock();
        st.used -= self.bytes;
        drop(st);
        self.budget.freed.notify_all();
    }
}

/// The host budget "auto" resolves to: the cgroup memory limit when one is set, else
/// MemTotal, minus `margin` bytes.
pub fn auto_host_budget(margin: u64) -> u64 {
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    let total = match (cgroup, meminfo) {
        (Some(c), Some(m)) => c.min(m),
        (Some(c), None) => c,
        (None, Some(m)) => m,
        (None, None) => 8 << 30,
    };
    total.saturating_sub(margin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absorbed_and_shrunk_reservations_return_exactly_what_they_hold() {
        let b = MemoryBudget::new("t", 100);
        let mut r = b.try_acquire(30).unwrap().unwrap();
        r.absorb(b.try_acquire(50).unwrap().unwrap()).unwrap();
        assert_eq!((r.bytes(), b.used()), (80, 80));
        r.shrink_to(20);
        assert_eq!((r.bytes(), b.used()), (20, 20));
        let other = MemoryBudget::new("u", 10);
        assert!(r.absorb(other.try_acquire(5).unwrap().unwrap()).is_err());
        assert_eq!((b.used(), other.used()), (20, 0));
        drop(r);
        assert_eq!(b.used(), 0);
    }

    #[test]
    fn reservations_release_on_drop_and_wake_waiters() {
        let b = MemoryBudget::new("host", 100);
        let r = b.acquire(80, &|| false).unwrap();
        assert_eq!(b.used(), 80);
        assert!(b.try_acquire(30).unwrap().is_none());
        let b2 = b.clone();
        let t = std::thread::spawn(move || b2.acquire(30, &|| false).map(|r| r.bytes()));
        std::thread::sleep(Duration::from_millis(100));
        drop(r);
        assert_eq!(t.join().unwrap().unwrap(), 30);
        assert_eq!(b.used(), 0);
    }

    #[test]
    fn a_request_larger_than_the_budget_is_an_error_not_a_wait() {
        let b = MemoryBudget::new("host", 100);
        assert!(matches!(
            b.acquire(101, &|| false),
            Err(EngineError::TooLarge(_))
        ));
    }

    #[test]
    fn auto_budget_is_positive() {
        assert!(auto_host_budget(0) > 0);
    }
}
