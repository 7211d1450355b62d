//! A growable bitset for query densities.
//!
//! Groth16's A and B queries only hold points for variables that appear (with a nonzero
//! coefficient) in some A or B linear combination; the prover must pick the matching scalars.
//! These bitsets record which variables those are.

/// A growable set of variable indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DensityBits {
    words: Vec<u64>,
    len: usize,
}

impl DensityBits {
    /// An empty set over zero variables.
    pub fn new() -> Self {
        Self::default()
    }

    /// A set over `len` variables with none present.
    pub fn with_len(len: usize) -> Self {
        DensityBits {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// Rebuilds a set from its raw words; `None` when the words do not fit `len` (too few, or
    /// bits set past `len`).
    pub fn from_words(words: Vec<u64>, len: usize) -> Option<Self> {
        if words.len() != len.div_ceil(64) {
            return None;
        }
        if len % 64 != 0 {
            if let Some(last) = words.last() {
                if last >> (len % 64) != 0 {
                    return None;
                }
            }
        }
        Some(DensityBits { words, len })
    }

    /// The number of variables the set ranges over.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the set ranges over no variables.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The raw words, bit `i % 64` of word `i / 64` standing for variable `i`.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Extends the range to `len` variables (new ones absent); never shrinks.
    pub fn grow_to(&mut self, len: usize) {
        if len > self.len {
            self.len = len;
            self.words.resize(len.div_ceil(64), 0);
        }
    }

    /// Marks variable `i` present, growing the range when needed.
    pub fn set(&mut self, i: usize) {
        self.grow_to(i + 1);
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Whether variable `i` is present.
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// The number of variables present.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Iterates over the present variables in increasing order.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(wi * 64 + b)
            })
        })
    }

    /// Copies into `out` the entries of `values` whose index is present, in order.
    pub fn select<T: Copy>(&self, values: &[T], out: &mut Vec<T>) {
        out.clear();
        out.reserve(self.count());
        out.extend(self.iter_ones().filter_map(|i| values.get(i).copied()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_count_iter() {
        let mut d = DensityBits::new();
        for i in [0, 3, 63, 64, 130] {
            d.set(i);
        }
        assert_eq!(d.len(), 131);
        assert_eq!(d.count(), 5);
        assert!(d.get(63) && d.get(64) && !d.get(65) && !d.get(1000));
        assert_eq!(d.iter_ones().collect::<Vec<_>>(), vec![0, 3, 63, 64, 130]);
        let values: Vec<usize> = (0..131).map(|i| i * 10).collect();
        let mut out = Vec::new();
        d.select(&values, &mut out);
        assert_eq!(out, vec![0, 30, 630, 640, 1300]);
    }

    #[test]
    fn from_words_rejects_stray_bits() {
        assert!(DensityBits::from_words(vec![0b1000], 3).is_none());
        assert!(DensityBits::from_words(vec![0b100], 3).is_some());
        assert!(DensityBits::from_words(vec![0, 0], 64).is_none());
    }
}
