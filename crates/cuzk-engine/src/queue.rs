//! A blocking priority queue: highest priority first, first-in first-out within a priority,
//! with a predicate so a worker can skip items it must not take.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::job::Priority;

struct State<T> {
    items: Vec<(Priority, i64, T)>,
    /// Next sequence number at the back (increasing) and at the front (decreasing).
    back: i64,
    front: i64,
    closed: bool,
}

pub(crate) struct WorkQueue<T> {
    state: Mutex<State<T>>,
    cv: Condvar,
}

impl<T> WorkQueue<T> {
    pub fn new() -> Self {
        WorkQueue {
            state: Mutex::new(State {
                items: Vec::new(),
                back: 0,
                front: -1,
                closed: false,
            }),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `item`; once the queue is closed, drops it instead (nothing will take it, and
    /// what it holds, such as a partition's memory, must come back).
    pub fn push(&self, p: Priority, item: T) {
        let mut st = self.lock();
        if st.closed {
            drop(st);
            drop(item);
            return;
        }
        let seq = st.back;
        st.back += 1;
        st.items.push((p, seq, item));
        drop(st);
        self.cv.notify_all();
    }

    /// Puts an item back ahead of everything of its priority.
    pub fn requeue(&self, p: Priority, item: T) {
        let mut st = self.lock();
        if st.closed {
            drop(st);
            drop(item);
            return;
        }
        let seq = st.front;
        st.front -= 1;
        st.items.push((p, seq, item));
        drop(st);
        self.cv.notify_all();
    }

    /// The best item `accept` takes whose priority is above `than`, without waiting.
    pub fn pop_higher(&self, than: Priority, accept: impl Fn(&T) -> bool) -> Option<T> {
        let mut st = self.lock();
        let best = Self::best(&st.items, |p, t| p > than && accept(t))?;
        Some(st.items.swap_remove(best).2)
    }

    /// Like [`pop_higher`](Self::pop_higher), but while none is queued and `pending()` says
    /// one is on its way, waits for it until `max` has passed. `pending()` is read under the
    /// queue's lock: a producer that pushes before it stops reporting pending is never missed.
    pub fn pop_higher_waiting(
        &self,
        than: Priority,
        accept: impl Fn(&T) -> bool,
        pending: impl Fn() -> bool,
        max: Duration,
    ) -> Option<T> {
        let deadline = Instant::now() + max;
        let mut st = self.lock();
        loop {
            if let Some(i) = Self::best(&st.items, |p, t| p > than && accept(t)) {
                return Some(st.items.swap_remove(i).2);
            }
            let now = Instant::now();
            if st.closed || now >= deadline || !pending() {
                return None;
            }
            // A push wakes this at once; the short timeout notices a pending item that
            // failed instead of arriving.
            let wait = (deadline - now).min(Duration::from_millis(2));
            st = self
                .cv
                .wait_timeout(st, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The best item `accept` takes, without waiting.
    pub fn try_pop(&self, accept: impl Fn(&T) -> bool) -> Option<T> {
        let mut st = self.lock();
        let best = Self::best(&st.items, |_, t| accept(t))?;
        Some(st.items.swap_remove(best).2)
    }

    fn best(items: &[(Priority, i64, T)], accept: impl Fn(Priority, &T) -> bool) -> Option<usize> {
        items
            .iter()
            .enumerate()
            .filter(|(_, (p, _, t))| accept(*p, t))
            .max_by(|(_, a), (_, b)| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|(i, _)| i)
    }

    /// The best item `accept` takes, waiting for one; `None` once closed.
    pub fn pop(&self, accept: impl Fn(&T) -> bool) -> Option<T> {
        let mut st = self.lock();
        loop {
            if st.closed {
                return None;
            }
            if let Some(i) = Self::best(&st.items, |_, t| accept(t)) {
                return Some(st.items.swap_remove(i).2);
            }
            st = self
                .cv
                .wait_timeout(st, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Removes the items `f` rejects (they are dropped).
    pub fn retain(&self, f: impl Fn(&T) -> bool) {
        self.lock().items.retain(|(_, _, t)| f(t));
    }

    /// Counts the items `f` accepts.
    pub fn count(&self, f: impl Fn(&T) -> bool) -> usize {
        self.lock().items.iter().filter(|(_, _, t)| f(t)).count()
    }

    /// Closes the queue: waiting pops return `None`, the items still queued are dropped (their
    /// jobs have ended), and later pushes are dropped.
    pub fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        let left = std::mem::take(&mut st.items);
        drop(st);
        self.cv.notify_all();
        drop(left);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn closing_drops_what_is_queued_and_what_comes_after() {
        let q = WorkQueue::new();
        let held = Arc::new(());
        q.push(Priority::Normal, held.clone());
        q.requeue(Priority::High, held.clone());
        assert_eq!(Arc::strong_count(&held), 3);
        q.close();
        assert_eq!(Arc::strong_count(&held), 1, "queued items dropped");
        q.push(Priority::Normal, held.clone());
        q.requeue(Priority::Normal, held.clone());
        assert_eq!(Arc::strong_count(&held), 1, "pushes after close dropped");
        assert!(q.pop(|_| true).is_none());
    }
}
