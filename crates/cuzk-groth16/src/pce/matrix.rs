//! One constraint matrix (A, B or C) in compressed sparse row form, and its product with a
//! witness.
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

/// Rows evaluated per parallel task.
const ROWS_PER_TASK: usize = 4096;

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

/// A sparse matrix in CSR form.
///
/// Invariants (checked by [`Matrix::validate`] for anything read from outside): `row_ptr` is
/// non-decreasing, starts at 0 and ends at `cols.len()`; `coeffs.len() == cols.len()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix {
    pub(crate) row_ptr: Vec<u32>,
    pub(crate) cols: Vec<u32>,
    pub(crate) coeffs: CoeffIndices,
}

impl Matrix {
    /// Number of rows (constraints).
    pub fn rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
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
        let (s, e) = (self.row_ptr[r] as usize, self.row_ptr[r + 1] as usize);
        (s..e).map(move |k| (self.cols[k], self.coeffs.get(k)))
    }

    /// Checks the CSR invariants and that every column and coefficient index is in range.
    pub(crate) fn validate(
        &self,
        num_inputs: usize,
        num_aux: usize,
        table_len: usize,
    ) -> Result<(), String> {
        if self.row_ptr.first() != Some(&0) {
            return Err("row pointers do not start at 0".into());
        }
        if self.row_ptr.last().map(|&x| x as usize) != Some(self.cols.len()) {
            return Err("last row pointer does not equal the nonzero count".into());
        }
        if self.coeffs.len() != self.cols.len() {
            return Err("coefficient index count differs from column count".into());
        }
        if !self.row_ptr.par_windows(2).all(|w| w[0] <= w[1]) {
            return Err("row pointers decrease".into());
        }
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
                let first = chunk * ROWS_PER_TASK;
                for (i, slot) in out.iter_mut().enumerate() {
                    let r = first + i;
                    let (s, e) = (self.row_ptr[r] as usize, self.row_ptr[r + 1] as usize);
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
