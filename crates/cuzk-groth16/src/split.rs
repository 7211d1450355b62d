//! A proof's L, A and B scalars split by value, for MSMs that treat 0 and 1 apart.
//!
//! The witness of a Filecoin circuit is mostly bits: about half its variables are 0 and most
//! of the rest are 1. An MSM over such scalars needs no Pippenger for them: the zeros add
//! nothing and the ones are a plain sum of their bases. [`SplitScalars`] holds one query's
//! scalars in that form: a bitmap of the ones and a compact tail of the other nonzero
//! scalars with their query indices. [`SplitQueries`] makes the three of a proof (L over the
//! aux variables, A over the inputs and the aux present in A, B over the inputs and aux
//! present in B, laid out as the queries are) in one parallel pass over the witness, so the
//! prover never gathers dense A and B scalar vectors.
//!
//! Invariants: query index `k` is one exactly when bit `k % 32` of word `k / 32` is set; the
//! tail indices increase, none is a one's, and no tail scalar is 0 or 1; bits at or past
//! `len` are clear.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use crate::assignment::{Density, Witness};
use crate::bits::DensityBits;
use crate::error::{Error, Result};

/// One query's scalars: ones as a bitmap, the other nonzero scalars as a tail.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SplitScalars {
    ones: Bits,
    n_ones: usize,
    tail_idx: Vec<u32>,
    tail: Vec<Scalar>,
}

impl SplitScalars {
    /// The split of a dense scalar vector (query index = position).
    pub fn from_dense(scalars: &[Scalar]) -> Result<Self> {
        check_len(scalars.len())?;
        let mut s = SplitScalars::default();
        for v in scalars {
            s.push(v);
        }
        Ok(s)
    }

    /// The number of scalars (the query positions they cover).
    pub fn len(&self) -> usize {
        self.ones.len
    }

    /// True when the split covers no scalars.
    pub fn is_empty(&self) -> bool {
        self.ones.len == 0
    }

    /// The bitmap of the ones: bit `k % 32` of word `k / 32` for query index `k`;
    /// `len().div_ceil(32)` words, the bits past `len()` clear.
    pub fn ones_bitmap(&self) -> &[u32] {
        &self.ones.words
    }

    /// How many scalars are one.
    pub fn ones_count(&self) -> usize {
        self.n_ones
    }

    /// The query indices of the scalars that are neither 0 nor 1, increasing.
    pub fn tail_indices(&self) -> &[u32] {
        &self.tail_idx
    }

    /// The scalars at [`tail_indices`](Self::tail_indices), in the same order.
    pub fn tail_scalars(&self) -> &[Scalar] {
        &self.tail
    }

    /// The dense scalar vector this split stands for.
    pub fn to_dense(&self) -> Vec<Scalar> {
        let mut out = vec![Scalar::ZERO; self.len()];
        for (k, o) in out.iter_mut().enumerate() {
            if self.ones.get(k) {
                *o = Scalar::ONE;
            }
        }
        for (&k, v) in self.tail_idx.iter().zip(&self.tail) {
            out[k as usize] = *v;
        }
        out
    }

    fn push(&mut self, v: &Scalar) {
        self.push_class(v, class(v));
    }

    /// Appends `other`'s scalars after this split's.
    fn append(&mut self, other: SplitScalars) {
        let base = self.ones.len as u32;
        self.tail_idx
            .extend(other.tail_idx.iter().map(|&k| base + k));
        self.tail.extend_from_slice(&other.tail);
        self.n_ones += other.n_ones;
        self.ones.append(&other.ones);
    }
}

/// How one query's scalars split: how many, how many are one, how many in the tail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SplitCounts {
    /// Scalars.
    pub len: usize,
    /// Scalars that are one.
    pub ones: usize,
    /// Scalars neither 0 nor 1.
    pub tail: usize,
}

impl std::fmt::Display for SplitCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = |k: usize| 100.0 * k as f64 / self.len.max(1) as f64;
        write!(
            f,
            "{} scalars: {:.1}% zero, {:.1}% one, {:.1}% tail",
            self.len,
            pct(self.len - self.ones - self.tail),
            pct(self.ones),
            pct(self.tail)
        )
    }
}

impl SplitScalars {
    /// The split's counts.
    pub fn counts(&self) -> SplitCounts {
        SplitCounts {
            len: self.len(),
            ones: self.n_ones,
            tail: self.tail.len(),
        }
    }
}

/// The split L, A and B scalars of one proof, laid out as the queries are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SplitQueries {
    /// L: one scalar per aux variable.
    pub l: SplitScalars,
    /// A: every input, then the aux variables present in A.
    pub a: SplitScalars,
    /// B (G1 and G2 alike): the inputs present in B, then the aux variables present in B.
    pub b: SplitScalars,
}

impl SplitQueries {
    /// Splits the witness's L, A and B scalars in one parallel pass over the aux variables.
    pub fn new(w: &Witness, d: &Density) -> Result<Self> {
        if d.a_aux.len() != w.aux.len()
            || d.b_aux.len() != w.aux.len()
            || d.b_input.len() != w.inputs.len()
        {
            return Err(Error::LayoutMismatch(
                "densities do not cover the witness".into(),
            ));
        }
        check_len(w.aux.len() + w.inputs.len())?;
        let mut out = SplitQueries::default();
        for v in &w.inputs {
            out.a.push(v);
        }
        for i in d.b_input.iter_ones() {
            out.b.push(&w.inputs[i]);
        }
        // Tasks of whole 64-bit density words.
        const TASK: usize = 1 << 16;
        let parts: Vec<SplitQueries> = w
            .aux
            .par_chunks(TASK)
            .enumerate()
            .map(|(t, aux)| {
                let base = t * TASK;
                let mut part = SplitQueries::default();
                for (j, v) in aux.iter().enumerate() {
                    let c = class(v);
                    part.l.push_class(v, c);
                    if present(&d.a_aux, base + j) {
                        part.a.push_class(v, c);
                    }
                    if present(&d.b_aux, base + j) {
                        part.b.push_class(v, c);
                    }
                }
                part
            })
            .collect();
        for p in parts {
            out.l.append(p.l);
            out.a.append(p.a);
            out.b.append(p.b);
        }
        Ok(out)
    }
}

impl SplitScalars {
    fn push_class(&mut self, v: &Scalar, c: Class) {
        match c {
            Class::Zero => self.ones.push(false),
            Class::One => {
                self.ones.push(true);
                self.n_ones += 1;
            }
            Class::Other => {
                self.tail_idx.push(self.ones.len as u32);
                self.tail.push(*v);
                self.ones.push(false);
            }
        }
    }
}

fn present(d: &DensityBits, i: usize) -> bool {
    d.words()[i / 64] >> (i % 64) & 1 != 0
}

/// Query indices are `u32` on the device.
fn check_len(n: usize) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(Error::LayoutMismatch(format!(
            "{n} scalars: a split query holds at most 2^32 - 1"
        )));
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Zero,
    One,
    Other,
}

/// Compares the Montgomery-form limbs (blstrs' constant-time equality is needlessly slow
/// here, and nothing secret is compared).
#[inline]
fn class(v: &Scalar) -> Class {
    let l = blst::blst_fr::from(*v).l;
    if l == [0; 4] {
        Class::Zero
    } else if l == ONE_MONT {
        Class::One
    } else {
        Class::Other
    }
}

/// One in Montgomery form: 2^256 mod r.
const ONE_MONT: [u64; 4] = [
    0x0000_0001_ffff_fffe,
    0x5884_b7fa_0003_4802,
    0x998c_4fef_ecbc_4ff5,
    0x1824_b159_acc5_056f,
];

/// A growable bitmap of 32-bit words; bits at or past `len` are clear.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Bits {
    words: Vec<u32>,
    len: usize,
}

impl Bits {
    fn push(&mut self, bit: bool) {
        if self.len % 32 == 0 {
            self.words.push(0);
        }
        if bit {
            *self.words.last_mut().expect("a word was pushed") |= 1 << (self.len % 32);
        }
        self.len += 1;
    }

    fn get(&self, k: usize) -> bool {
        k < self.len && self.words[k / 32] >> (k % 32) & 1 != 0
    }

    fn append(&mut self, other: &Bits) {
        let shift = self.len % 32;
        if shift == 0 {
            self.words.extend_from_slice(&other.words);
        } else {
            for &o in &other.words {
                *self.words.last_mut().expect("len > 0") |= o << shift;
                self.words.push(o >> (32 - shift));
            }
        }
        self.len += other.len;
        self.words.truncate(self.len.div_ceil(32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn one_in_montgomery_form_is_recognised() {
        assert_eq!(blst::blst_fr::from(Scalar::ONE).l, ONE_MONT);
        assert_eq!(class(&Scalar::ONE), Class::One);
        assert_eq!(class(&Scalar::ZERO), Class::Zero);
        assert_eq!(class(&-Scalar::ONE), Class::Other);
        assert_eq!(class(&Scalar::from(2)), Class::Other);
    }

    fn mixed(n: usize, seed: u64) -> Vec<Scalar> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| match rng.gen_range(0..10) {
                0..=4 => Scalar::ZERO,
                5..=8 => Scalar::ONE,
                _ => Scalar::random(&mut rng),
            })
            .collect()
    }

    #[test]
    fn a_dense_vector_round_trips() {
        for n in [0, 1, 31, 32, 33, 1000] {
            let v = mixed(n, n as u64);
            let s = SplitScalars::from_dense(&v).unwrap();
            assert_eq!(s.len(), n);
            assert_eq!(s.ones_bitmap().len(), n.div_ceil(32));
            assert_eq!(s.to_dense(), v, "n = {n}");
            assert_eq!(
                s.ones_count(),
                v.iter().filter(|x| **x == Scalar::ONE).count()
            );
            assert!(s.tail_indices().windows(2).all(|w| w[0] < w[1]));
            assert!(s
                .tail_scalars()
                .iter()
                .all(|x| *x != Scalar::ZERO && *x != Scalar::ONE));
        }
    }

    #[test]
    fn appending_at_every_bit_offset_keeps_the_order() {
        let v = mixed(200, 7);
        for cut in 0..70 {
            let mut a = SplitScalars::from_dense(&v[..cut]).unwrap();
            a.append(SplitScalars::from_dense(&v[cut..]).unwrap());
            assert_eq!(a, SplitScalars::from_dense(&v).unwrap(), "cut at {cut}");
        }
    }

    #[test]
    fn queries_are_laid_out_as_the_prover_gathers_them() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        // More aux than one task, so parts are merged at unaligned offsets.
        let (ni, na) = (5, (1 << 16) * 2 + 77);
        let w = Witness {
            inputs: mixed(ni, 1),
            aux: mixed(na, 2),
        };
        let mut d = Density {
            a_aux: DensityBits::with_len(na),
            b_input: DensityBits::with_len(ni),
            b_aux: DensityBits::with_len(na),
        };
        for i in 0..na {
            if rng.gen_bool(0.6) {
                d.a_aux.set(i);
            }
            if rng.gen_bool(0.3) {
                d.b_aux.set(i);
            }
        }
        d.b_input.set(0);
        d.b_input.set(3);
        let q = SplitQueries::new(&w, &d).unwrap();
        assert_eq!(q.l.to_dense(), w.aux);
        let mut a = w.inputs.clone();
        a.extend(d.a_aux.iter_ones().map(|i| w.aux[i]));
        assert_eq!(q.a.to_dense(), a);
        let mut b: Vec<Scalar> = d.b_input.iter_ones().map(|i| w.inputs[i]).collect();
        b.extend(d.b_aux.iter_ones().map(|i| w.aux[i]));
        assert_eq!(q.b.to_dense(), b);
        for s in [&q.l, &q.a, &q.b] {
            assert_eq!(*s, SplitScalars::from_dense(&s.to_dense()).unwrap());
        }
    }

    #[test]
    fn densities_of_another_shape_are_refused() {
        let w = Witness {
            inputs: vec![Scalar::ONE],
            aux: vec![Scalar::ONE; 10],
        };
        let d = Density {
            a_aux: DensityBits::with_len(9),
            b_input: DensityBits::with_len(1),
            b_aux: DensityBits::with_len(10),
        };
        assert!(SplitQueries::new(&w, &d).is_err());
    }
}
