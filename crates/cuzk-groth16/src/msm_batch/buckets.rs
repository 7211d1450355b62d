//! One Pippenger window's buckets, kept in affine form and filled by batched additions.
//!
//! Invariants:
//! - A bucket is `Empty` (holds the identity), `Full` (holds `points[b]`), or `Busy` (holds
//!   `points[b]` and exactly one queued addition into it waits in `batch`, with its kind and
//!   slope denominator at the same position of `kinds` and `inverter`).
//! - `batch` targets pairwise distinct buckets, so its additions are independent and share one
//!   inversion. An addition into a `Busy` bucket is deferred to `conflicts` and retried after
//!   the batch is applied, never dropped.
//! - If deferred additions still pile up after a batch (many points falling into one bucket,
//!   e.g. many equal scalars), they are added projectively into `spill[b]` instead; the value
//!   of bucket `b` is always `points[b] (if not Empty) + spill[b]`.
//! - `batch` and `conflicts` never hold much more than `batch_size` entries each: scratch is
//!   bounded whatever the digits.
//! - After [`Buckets::finish`], `batch` and `conflicts` are empty and no bucket is `Busy`.

use blstrs::G1Projective;
use group::Group;

use super::affine::{classify, finish, Affine, Inverter, Kind};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Empty,
    Full,
    Busy,
}

/// Buckets `1..=len` of one window (bucket `b` stored at index `b - 1`).
#[derive(Debug)]
pub(super) struct Buckets {
    points: Vec<Affine>,
    state: Vec<State>,
    batch: Vec<(u32, Affine)>,
    kinds: Vec<Kind>,
    inverter: Inverter,
    conflicts: Vec<(u32, Affine)>,
    retry: Vec<(u32, Affine)>,
    spill: Vec<G1Projective>,
    batch_size: usize,
}

impl Buckets {
    /// `len` empty buckets; additions are applied in batches of `batch_size`.
    pub(super) fn new(len: usize, batch_size: usize) -> Self {
        assert!(len > 0 && len <= u32::MAX as usize);
        let batch_size = batch_size.max(1);
        let zero = Affine {
            x: blstrs::Fp::from_raw_unchecked([0; 6]),
            y: blstrs::Fp::from_raw_unchecked([0; 6]),
        };
        Buckets {
            points: vec![zero; len],
            state: vec![State::Empty; len],
            batch: Vec::with_capacity(batch_size),
            kinds: Vec::with_capacity(batch_size),
            inverter: Inverter::with_capacity(batch_size),
            conflicts: Vec::with_capacity(batch_size),
            retry: Vec::with_capacity(batch_size),
            spill: Vec::new(),
            batch_size,
        }
    }

    /// Adds `p` into the bucket at index `b` (eventually; see [`Buckets::finish`]).
    #[inline]
    pub(super) fn add(&mut self, b: u32, p: Affine) {
        self.place(b, p);
        // Deferred additions are bounded too: a window whose digits reach few buckets (the
        // top window holds only the scalars' last few bits) fills `conflicts`, not `batch`.
        if self.batch.len() >= self.batch_size || self.conflicts.len() >= self.batch_size {
            self.flush();
        }
    }

    #[inline]
    fn place(&mut self, b: u32, p: Affine) {
        let i = b as usize;
        match self.state[i] {
            State::Empty => {
                self.points[i] = p;
                self.state[i] = State::Full;
            }
            State::Full => {
                // The bucket cannot change until the batch is applied, so the slope's
                // denominator is taken now, while the bucket is being touched anyway.
                let (kind, den) = classify(&self.points[i], &p);
                self.state[i] = State::Busy;
                self.batch.push((b, p));
                self.kinds.push(kind);
                self.inverter.push(den);
            }
            State::Busy => self.conflicts.push((b, p)),
        }
    }

    /// Applies the batch, then re-places the deferred additions (they may form the next
    /// batch, or conflict again among themselves).
    fn flush(&mut self) {
        self.apply_batch();
        std::mem::swap(&mut self.conflicts, &mut self.retry);
        let mut retry = std::mem::take(&mut self.retry);
        for (b, p) in retry.drain(..) {
            self.place(b, p);
        }
        self.retry = retry;
        // Still many after a batch: these buckets are hot, and retrying would apply batches
        // of a few additions per inversion.
        if self.conflicts.len() >= self.batch_size / 2 {
            self.spill_conflicts();
        }
    }

    fn spill_conflicts(&mut self) {
        if self.spill.is_empty() {
            self.spill = vec![G1Projective::identity(); self.points.len()];
        }
        for (b, p) in self.conflicts.drain(..) {
            self.spill[b as usize] += &p.to_g1();
        }
    }

    fn apply_batch(&mut self) {
        let invs = self.inverter.invert();
        for (((b, p), kind), inv) in self.batch.iter().zip(&self.kinds).zip(invs) {
            let i = *b as usize;
            self.state[i] = if finish(&mut self.points[i], p, *kind, inv) {
                State::Full
            } else {
                State::Empty
            };
        }
        self.batch.clear();
        self.kinds.clear();
        self.inverter.clear();
    }

    /// Applies every pending addition.
    pub(super) fn finish(&mut self) {
        while !self.batch.is_empty() || !self.conflicts.is_empty() {
            self.flush();
        }
    }

    /// `sum_b (b + 1) * bucket[b]` by the running-sum trick (two projective additions per
    /// bucket). Call after [`Buckets::finish`].
    pub(super) fn weighted_sum(&self) -> G1Projective {
        debug_assert!(self.batch.is_empty() && self.conflicts.is_empty());
        let mut running = G1Projective::identity();
        let mut total = G1Projective::identity();
        for i in (0..self.points.len()).rev() {
            if self.state[i] == State::Full {
                running += &self.points[i].to_g1();
            }
            if let Some(s) = self.spill.get(i) {
                running += s;
            }
            total += &running;
        }
        total
    }
}
