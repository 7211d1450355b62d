//! One constraint matrix (A, B or C) in compressed sparse row form, and its product with a
//! witness.
//!
//! Rows are stored as their lengths (two bytes each), with the first nonzero of every
//! [`BLOCK`]-th row kept beside them: a row's start is its block's start plus the lengths
//! before it in the block. That is 2 bytes a row instead of a 4-byte pointer, which matters
//! where rows are short (about 5.5 nonzeros in PoRep and SnapDeals).
//!
//! Column encoding: bit 31 set means an input variable (index in the low 31 bits), clear means
//! an aux variable. Each nonzero stores an index into the circuit's coefficient table instead
//! of a 32-byte field element; index 0 is always 1 and index 1 always -1, which the product
//! handles without a multiplication.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

/// Column flag marking an input variable.
pub const INPUT_BIT: u32 = 1 << 31;
/// Coefficient-table index of 1.
pub const COEFF_ONE: u32 = 0;
/// Coefficient-table index of -1.
pub const COEFF_MINUS_ONE: u32 = 1;

/// Rows evaluated per parallel task (a multiple of [`BLOCK`]).
const ROWS_PER_TASK: usize = 4096;
/// Rows per block of the row index.
pub const BLOCK: usize = 64;
/// The most nonzeros one row may hold.
pub const MAX_ROW_LEN: usize = u16::MAX as usize;

/// Per-nonzero coefficient indices, two bytes wide when the table allows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoeffIndices {
    /// Tables of at most 65,536 entries.
    Narrow(Vec<u16>),
    /// Larger tables.
    Wide(Vec<u32>),
}

impl CoeffIndices {
    /// Number of stored indices.
    pub fn len(&self) -> usize {
        match self {
            CoeffIndices::Narrow(v) => v.len(),
            CoeffIndices::Wide(v) => v.len(),
        }
    }

    /// True when no indices are stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest stored index, if any.
    pub(crate) fn max(&self) -> Option<u32> {
        match self {
            CoeffIndices::Narrow(v) => v.par_iter().copied().max().map(u32::from),
            CoeffIndices::Wide(v) => v.par_iter().copied().max(),
        }
    }

    /// Narrows wide indices when every index fits in 16 bits.
    pub(crate) fn from_wide(idx: Vec<u32>, table_len: usize) -> Self {
        if table_len <= 1 << 16 {
            CoeffIndices::Narrow(idx.into_iter().map(|i| i as u16).collect())
        } else {
            CoeffIndices::Wide(idx)
        }
    }

    fn get(&self, k: usize) -> u32 {
        match self {
            CoeffIndices::Narrow(v) => u32::from(v[k]),
            CoeffIndices::Wide(v) => v[k],
        }
    }
}

/// A sparse matrix in CSR form (see the module docs for the row index).
///
/// Invariants (established by [`Matrix::new`], which everything goes through): the row
/// lengths sum to `cols.len()`; `starts[j]` is the first nonzero of row `j * BLOCK`, with one
/// more entry holding `cols.len()`; `coeffs.len() == cols.len()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix {
    pub(crate) lens: Vec<u16>,
    starts: Vec<u32>,
    pub(crate) cols: Vec<u32>,
    pub(crate) coeffs: CoeffIndices,
}

impl Matrix {
    /// A matrix from its row lengths and nonzeros; an error when the lengths do not add up
    /// to the nonzeros or the nonzeros overflow the format.
    pub(crate) fn new(
        lens: Vec<u16>,
        cols: Vec<u32>,
        coeffs: CoeffIndices,
    ) -> Result<Self, String> {
        if coeffs.len() != cols.len() {
            return Err("coefficient index count differs from column count".into());
        }
        if cols.len() > u32::MAX as usize {
            return Err(format!(
                "{} nonzeros in one matrix; the PCE format holds at most {}",
                cols.len(),
                u32::MAX
            ));
        }
        let sums: Vec<u64> = lens
            .par_chunks(BLOCK)
            .map(|b| b.iter().map(|&l| u64::from(l)).sum())
            .collect();
        let mut starts = Vec::with_capacity(sums.len() + 1);
        let mut at = 0u64;
        starts.push(0);
        for s in sums {
            at += s;
            if at > cols.len() as u64 {
                break;
            }
            starts.push(at as u32);
        }
        if at != cols.len() as u64 {
            return Err(format!(
                "row lengths add up to {at} nonzeros, the matrix holds {}",
                cols.len()
            ));
        }
        Ok(Matrix {
            lens,
            starts,
            cols,
            coeffs,
        })
    }

    /// Number of rows (constraints).
    pub fn rows(&self) -> usize {
        self.lens.len()
    }

    /// Bytes of the row index kept in memory beside what the file holds.
    pub(crate) fn index_bytes(rows: u64) -> u64 {
        (rows.div_ceil(BLOCK as u64) + 1) * 4
    }

    /// The nonzeros of rows `first..` in order, as ranges into `cols`; `first` a multiple of
    /// [`BLOCK`].
    fn ranges_from(&self, first: usize) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        debug_assert_eq!(first % BLOCK, 0);
        let mut at = self.starts[first / BLOCK] as usize;
        self.lens[first..].iter().map(move |&l| {
            let r = at..at + l as usize;
            at = r.end;
            r
        })
    }

    /// Every row's `(column, coefficient index)` pairs, in row order.
    pub fn each_row(&self) -> impl Iterator<Item = impl Iterator<Item = (u32, u32)> + '_> + '_ {
        self.ranges_from(0)
            .map(move |r| r.map(move |k| (self.cols[k], self.coeffs.get(k))))
    }

    /// Number of stored nonzeros.
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Bytes per stored coefficient index (2 or 4).
    pub fn coeff_index_bytes(&self) -> usize {
        match self.coeffs {
            CoeffIndices::Narrow(_) => 2,
            CoeffIndices::Wide(_) => 4,
        }
    }

    /// The `(column, coefficient index)` pairs of one row.
    pub fn row(&self, r: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        let block = r / BLOCK * BLOCK;
        let s = self.starts[r / BLOCK] as usize
            + self.lens[block..r]
                .iter()
                .map(|&l| l as usize)
                .sum::<usize>();
        (s..s + self.lens[r] as usize).map(move |k| (self.cols[k], self.coeffs.get(k)))
    }

    /// Checks that every column and coefficient index is in range (the row index is checked
    /// by [`Matrix::new`]).
    pub(crate) fn validate(
        &self,
        num_inputs: usize,
        num_aux: usize,
        table_len: usize,
    ) -> Result<(), String> {
        let bad_col = self.cols.par_iter().any(|&c| {
            if c & INPUT_BIT != 0 {
                (c ^ INPUT_BIT) as usize >= num_inputs
            } else {
                c as usize >= num_aux
            }
        });
        if bad_col {
            return Err("a column refers to a variable past the recorded counts".into());
        }
        if let Some(m) = self.coeffs.max() {
            if m as usize >= table_len {
                return Err("a coefficient index is past the coefficient table".into());
            }
        }
        Ok(())
    }

    /// `out[r] = sum_k coeff[k] * w[col[k]]` over the nonzeros of row `r`, in parallel.
    ///
    /// The caller guarantees (and [`crate::Pce`] checks) that `inputs` and `aux` are at least
    /// as long as the counts this matrix was validated against, and `out.len() == rows()`.
    pub fn mul_vec(&self, table: &[Scalar], inputs: &[Scalar], aux: &[Scalar], out: &mut [Scalar]) {
        debug_assert_eq!(out.len(), self.rows());
        match &self.coeffs {
            CoeffIndices::Narrow(idx) => self.mul_vec_with(idx, table, inputs, aux, out),
            CoeffIndices::Wide(idx) => self.mul_vec_with(idx, table, inputs, aux, out),
        }
    }

    fn mul_vec_with<I: Copy + Into<u32> + Sync>(
        &self,
        idx: &[I],
        table: &[Scalar],
        inputs: &[Scalar],
        aux: &[Scalar],
        out: &mut [Scalar],
    ) {
        out.par_chunks_mut(ROWS_PER_TASK)
            .enumerate()
            .for_each(|(chunk, out)| {
                crate::gate::checkpoint();
                let rows = self.ranges_from(chunk * ROWS_PER_TASK);
                for (slot, range) in out.iter_mut().zip(rows) {
                    let (s, e) = (range.start, range.end);
                    let mut acc = Scalar::ZERO;
                    for (&c, &k) in self.cols[s..e].iter().zip(&idx[s..e]) {
                        let v = if c & INPUT_BIT != 0 {
                            &inputs[(c ^ INPUT_BIT) as usize]
                        } else {
                            &aux[c as usize]
                        };
                        match k.into() {
                            COEFF_ONE => acc += v,
                            COEFF_MINUS_ONE => acc -= v,
                            k => acc += *v * table[k as usize],
                        }
                    }
                    *slot = acc;
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(lens: Vec<u16>) -> Result<Matrix, String> {
        let nnz: usize = lens.iter().map(|&l| l as usize).sum();
        let cols = (0..nnz as u32).collect();
        Matrix::new(lens, cols, CoeffIndices::Narrow(vec![0; nnz]))
    }

    #[test]
    fn rows_are_found_across_blocks_alike_by_index_and_in_order() {
        // Empty, long and short rows over three blocks and a partial fourth.
        let lens: Vec<u16> = (0..3 * BLOCK + 7)
            .map(|r| match r % 11 {
                0 => 0,
                5 => 300 + r as u16,
                _ => (r % 7) as u16,
            })
            .collect();
        let m = matrix(lens.clone()).unwrap();
        assert_eq!(m.rows(), lens.len());
        let mut next = 0u32;
        for (r, row) in m.each_row().enumerate() {
            let seq: Vec<(u32, u32)> = row.collect();
            assert_eq!(seq, m.row(r).collect::<Vec<_>>(), "row {r}");
            assert_eq!(seq.len(), lens[r] as usize, "row {r}");
            // Rows tile the nonzeros in order.
            assert!(seq.iter().all(|&(c, _)| {
                next += 1;
                c == next - 1
            }));
        }
        assert_eq!(next as usize, m.nnz());
    }

    #[test]
    fn lengths_that_do_not_add_up_are_refused() {
        let m = Matrix::new(vec![2, 3], vec![0; 4], CoeffIndices::Narrow(vec![0; 4]));
        assert!(m.unwrap_err().contains("add up to 5"));
        let m = Matrix::new(vec![2], vec![0; 4], CoeffIndices::Narrow(vec![0; 4]));
        assert!(m.unwrap_err().contains("add up to 2"));
        let m = Matrix::new(vec![2], vec![0; 2], CoeffIndices::Narrow(vec![0; 3]));
        assert!(m.is_err());
        assert!(matrix(vec![]).unwrap().each_row().next().is_none());
    }
}
