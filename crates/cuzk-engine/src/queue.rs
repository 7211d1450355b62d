//! A blocking priority queue: highest priority first, first-in first-out within a priority,
//! with a predicate so a worker can skip items it must not take.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::job::Priority;

struct State<T> {
    items: Vec<(Priority, u64, T)>,
    seq: u64,
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
                seq: 0,
                closed: false,
            }),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn push(&self, p: Priority, item: T) {
        let mut st = self.lock();
        let seq = st.seq;
        st.seq += 1;
        st.items.push((p, seq, item));
        drop(st);
        self.cv.notify_all();
    }

    /// The best item `accept` takes, waiting for one; `None` once closed.
    pub fn pop(&self, accept: impl Fn(&T) -> bool) -> Option<T> {
        let mut st = self.lock();
        loop {
            if st.closed {
                return None;
            }
            let best = st
                .items
                .iter()
                .enumerate()
                .filter(|(_, (_, _, t))| accept(t))
                .max_by(|(_, a), (_, b)| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
                .map(|(i, _)| i);
            if let Some(i) = best {
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

    pub fn close(&self) {
        self.lock().closed = true;
        self.cv.notify_all();
    }
}
