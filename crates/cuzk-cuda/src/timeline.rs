//! A proof's device timeline, filled in as its operations return.

use std::cell::Cell;

use cuzk_groth16::{DeviceSpan, DeviceTimeline, G1Query};

/// The timeline of the proof running now (one proof per value, on one thread).
#[derive(Debug, Default)]
pub(crate) struct Recorder(Cell<DeviceTimeline>);

impl Recorder {
    fn record(&self, f: impl FnOnce(&mut DeviceTimeline)) {
        let mut t = self.0.get();
        f(&mut t);
        self.0.set(t);
    }

    /// Records the span of a G1 query's operation (H's is H with its MSM).
    pub(crate) fn g1(&self, query: G1Query, span: DeviceSpan) {
        self.record(|t| match query {
            G1Query::H => t.h = span,
            G1Query::L => t.l = span,
            G1Query::A => t.a = span,
            G1Query::BG1 => t.b_g1 = span,
        });
    }

    /// Records the span of B's G2 MSM.
    pub(crate) fn b_g2(&self, span: DeviceSpan) {
        self.record(|t| t.b_g2 = span);
    }

    /// The timeline so far.
    pub(crate) fn get(&self) -> DeviceTimeline {
        self.0.get()
    }
}
