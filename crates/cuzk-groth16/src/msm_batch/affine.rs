//! Affine G1 arithmetic on Montgomery-form coordinates, batched so that many independent
//! additions share one field inversion (Montgomery's trick).
//!
//! An affine addition `p + q` costs one slope `λ = num / den`, then `x3 = λ² - px - qx` and
//! `y3 = λ (px - x3) - py`: two multiplications and a squaring once `1/den` is known. The
//! inverse comes from [`Inverter`], which inverts a whole batch of denominators with one
//! inversion and three multiplications per element; about six multiplications per addition
//! in all, against ten for blst's extended-Jacobian (XYZZ) bucket additions.
//!
//! The special cases are decided before the batch is inverted ([`Kind`]): equal x and equal y
//! is a doubling (slope `3x² / 2y`; G1 has no point of order two, so `y != 0`), equal x and
//! opposite y cancels to the identity and contributes the dummy denominator 1, so every
//! denominator in a batch is nonzero.

use blstrs::{Fp, G1Affine, G1Projective};
use ff::Field;
use group::Group;

use crate::msm::G1Base;

/// A finite affine point of G1: `(x, y)` in blst's Montgomery form. Never the identity; code
/// that needs "no point" (an empty bucket, a cancelled sum) says so outside this type.
#[derive(Clone, Copy, Debug)]
pub(super) struct Affine {
    pub(super) x: Fp,
    pub(super) y: Fp,
}

impl Affine {
    /// The stored base as a finite point, or `None` for the identity (blst encodes it as
    /// all-zero x and y; no curve point has x = y = 0 since 0 != 4 = 0³ + 4).
    #[inline]
    pub(super) fn from_base(b: &G1Base) -> Option<Self> {
        if b.x.l.iter().chain(&b.y.l).fold(0, |acc, l| acc | l) == 0 {
            return None;
        }
        Some(Affine {
            x: Fp::from_raw_unchecked(b.x.l),
            y: Fp::from_raw_unchecked(b.y.l),
        })
    }

    #[inline]
    pub(super) fn neg(self) -> Self {
        Affine {
            x: self.x,
            y: -self.y,
        }
    }

    /// The same point as a blstrs point (for projective accumulation).
    #[inline]
    pub(super) fn to_g1(self) -> G1Affine {
        G1Affine::from_raw_unchecked(self.x, self.y, false)
    }
}

/// How one addition `p + q` of finite points is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// `px != qx`: slope `(qy - py) / (qx - px)`.
    Add,
    /// `p == q`: slope `3 px² / 2 py`.
    Double,
    /// `p == -q`: the sum is the identity; the denominator is a dummy 1.
    Cancel,
}

/// Equality of field elements by their (canonical, Montgomery-form) limbs; blstrs'
/// constant-time `==` is needlessly slow here, and nothing secret is compared.
#[inline]
fn same(a: &Fp, b: &Fp) -> bool {
    let (a, b) = (blst::blst_fp::from(*a).l, blst::blst_fp::from(*b).l);
    a.iter().zip(&b).fold(0, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Decides how `p + q` is computed and returns the slope's denominator (nonzero).
#[inline]
pub(super) fn classify(p: &Affine, q: &Affine) -> (Kind, Fp) {
    if !same(&p.x, &q.x) {
        (Kind::Add, q.x - p.x)
    } else if same(&p.y, &q.y) {
        (Kind::Double, p.y.double())
    } else {
        (Kind::Cancel, Fp::ONE)
    }
}

/// `p += q` given the inverse of the denominator [`classify`] returned for the same pair;
/// returns `false` (leaving `p` unspecified) when the sum is the identity.
///
/// Written with in-place operations: each by-value blstrs operation copies its operand, and
/// those copies cost as much as the additions.
#[inline]
pub(super) fn finish(p: &mut Affine, q: &Affine, kind: Kind, inv: &Fp) -> bool {
    let mut lambda = match kind {
        Kind::Add => {
            let mut l = q.y;
            l -= &p.y;
            l
        }
        Kind::Double => p.x.square().mul3(),
        Kind::Cancel => return false,
    };
    lambda *= inv;
    let mut x = lambda;
    x.square_assign();
    x -= &p.x;
    x -= &q.x;
    // y3 = lambda (px - x3) - py, built in p.x, then the coordinates are put in place.
    p.x -= &x;
    p.x *= &lambda;
    p.x -= &p.y;
    p.y = p.x;
    p.x = x;
    true
}

/// Scratch for inverting a batch of nonzero field elements with a single inversion.
///
/// `prefix[i]` holds `values[0] * ... * values[i-1]` (so `prefix[0] = 1`) until
/// [`Inverter::invert`] turns it into `1 / values[i]`.
#[derive(Debug, Default)]
pub(super) struct Inverter {
    values: Vec<Fp>,
    prefix: Vec<Fp>,
}

impl Inverter {
    pub(super) fn with_capacity(n: usize) -> Self {
        Inverter {
            values: Vec::with_capacity(n),
            prefix: Vec::with_capacity(n),
        }
    }

    pub(super) fn clear(&mut self) {
        self.values.clear();
    }

    /// Queues a value; it must be nonzero (the batch would otherwise yield garbage).
    #[inline]
    pub(super) fn push(&mut self, v: Fp) {
        debug_assert!(!bool::from(v.is_zero()), "batch inversion of zero");
        self.values.push(v);
    }

    /// The inverses of the queued values, in push order.
    pub(super) fn invert(&mut self) -> &[Fp] {
        let n = self.values.len();
        self.prefix.clear();
        self.prefix.push(Fp::ONE);
        for (i, v) in self.values.iter().enumerate() {
            let mut acc = self.prefix[i];
            acc *= v;
            self.prefix.push(acc);
        }
        let mut inv = Option::<Fp>::from(self.prefix[n].invert()).unwrap_or(Fp::ZERO);
        debug_assert!(
            n == 0 || !bool::from(inv.is_zero()),
            "a batch denominator was zero"
        );
        for i in (0..n).rev() {
            self.prefix[i] *= &inv;
            inv *= &self.values[i];
        }
        &self.prefix[..n]
    }
}

/// The sum of `points` (each finite), by repeated halving: each round adds disjoint pairs
/// as one batch (one inversion per round). A bounded buffer is refilled from the iterator
/// between rounds, so memory stays at `2 * BUF` points whatever the input length.
pub(super) fn sum_affine(points: impl Iterator<Item = Affine>) -> G1Projective {
    const BUF: usize = 2048;
    // Below this many pending points an inversion no longer pays for itself.
    const TAIL: usize = 16;
    let mut points = points.peekable();
    let mut buf: Vec<Affine> = Vec::with_capacity(2 * BUF);
    let mut next: Vec<Affine> = Vec::with_capacity(2 * BUF);
    let mut kinds: Vec<Kind> = Vec::with_capacity(BUF);
    let mut inverter = Inverter::with_capacity(BUF);
    loop {
        while buf.len() < 2 * BUF {
            match points.next() {
                Some(p) => buf.push(p),
                None => break,
            }
        }
        if buf.len() <= TAIL && points.peek().is_none() {
            break;
        }
        let pairs = buf.len() / 2;
        kinds.clear();
        inverter.clear();
        for i in 0..pairs {
            let (kind, den) = classify(&buf[2 * i], &buf[2 * i + 1]);
            kinds.push(kind);
            inverter.push(den);
        }
        let invs = inverter.invert();
        next.clear();
        for (i, (kind, inv)) in kinds.iter().zip(invs).enumerate() {
            let mut s = buf[2 * i];
            if finish(&mut s, &buf[2 * i + 1], *kind, inv) {
                next.push(s);
            }
        }
        if buf.len() % 2 == 1 {
            next.push(buf[buf.len() - 1]);
        }
        std::mem::swap(&mut buf, &mut next);
    }
    let mut acc = G1Projective::identity();
    for p in &buf {
        acc += &p.to_g1();
    }
    acc
}
