//! Counters and histograms per proof kind, as a snapshot a server can render.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the latency histogram buckets.
pub const LATENCY_BUCKETS: [f64; 12] = [
    0.5,
    1.0,
    2.0,
    5.0,
    10.0,
    20.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    f64::INFINITY,
];

/// A latency histogram.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// Cumulative counts per bucket of [`LATENCY_BUCKETS`].
    pub buckets: Vec<u64>,
    /// Sum of observations, seconds.
    pub sum: f64,
    /// Number of observations.
    pub count: u64,
}

impl Histogram {
    fn observe(&mut self, d: Duration) {
        if self.buckets.is_empty() {
            self.buckets = vec![0; LATENCY_BUCKETS.len()];
        }
        let s = d.as_secs_f64();
        for (b, le) in self.buckets.iter_mut().zip(LATENCY_BUCKETS) {
            if s <= le {
                *b += 1;
            }
        }
        self.sum += s;
        self.count += 1;
    }
}

/// Per-kind numbers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindMetrics {
    /// Jobs completed.
    pub completed: u64,
    /// Jobs failed.
    pub failed: u64,
    /// Jobs cancelled (by a client, at shutdown, or abandoned).
    pub cancelled: u64,
    /// Jobs cancelled because every caller waiting for them gave up (deadline, disconnect).
    pub abandoned: u64,
    /// Partition retries after a device failure.
    pub retries: u64,
    /// End-to-end latency of completed jobs.
    pub total: Histogram,
    /// Queue wait of started jobs.
    pub queue_wait: Histogram,
    /// Synthesis time per partition.
    pub synthesis: Histogram,
    /// Per partition, from being queued for a device to starting on one.
    pub device_wait: Histogram,
    /// Device time per partition.
    pub device: Histogram,
}

#[derive(Debug, Default)]
pub(crate) struct Metrics {
    kinds: Mutex<BTreeMap<String, KindMetrics>>,
}

impl Metrics {
    pub fn with(&self, kind: &str, f: impl FnOnce(&mut KindMetrics)) {
        let mut m = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        f(m.entry(kind.to_owned()).or_default());
    }

    pub fn observe(h: &mut Histogram, d: Duration) {
        h.observe(d);
    }

    pub fn snapshot(&self) -> BTreeMap<String, KindMetrics> {
        self.kinds.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
