//! Coordinate (triplet) assembly.

use super::Csr;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;

/// A matrix under assembly as (row, column, value) triplets.
///
/// Duplicates are summed when converting to CSR, as finite-element assembly expects.
///
/// ```
/// use krylov_wgpu::matrix::Coo;
/// let mut a = Coo::<f64>::new(2, 2);
/// a.push(0, 0, 1.0)?;
/// a.push(0, 0, 1.0)?; // summed
/// a.push(1, 0, -1.0)?;
/// let csr = a.to_csr()?;
/// assert_eq!(csr.get(0, 0), 2.0);
/// assert_eq!(csr.nnz(), 2);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Coo<T> {
    nrows: usize,
    ncols: usize,
    rows: Vec<u32>,
    cols: Vec<u32>,
    vals: Vec<T>,
}

impl<T: Scalar> Coo<T> {
    /// An empty `nrows × ncols` matrix.
    pub fn new(nrows: usize, ncols: usize) -> Self {
        Coo {
            nrows,
            ncols,
            rows: Vec::new(),
            cols: Vec::new(),
            vals: Vec::new(),
        }
    }

    /// An empty matrix with room for `cap` triplets.
    pub fn with_capacity(nrows: usize, ncols: usize, cap: usize) -> Self {
        Coo {
            nrows,
            ncols,
            rows: Vec::with_capacity(cap),
            cols: Vec::with_capacity(cap),
            vals: Vec::with_capacity(cap),
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Number of triplets pushed so far (duplicates counted).
    pub fn len(&self) -> usize {
        self.vals.len()
    }
    /// Whether no triplet was pushed.
    pub fn is_empty(&self) -> bool {
        self.vals.is_empty()
    }

    /// Adds `v` at `(i, j)` (0-based).
    pub fn push(&mut self, i: usize, j: usize, v: T) -> Result<()> {
        if i >= self.nrows || j >= self.ncols {
            return Err(KrylovError::InvalidMatrix(format!(
                "entry ({i}, {j}) outside a {} x {} matrix",
                self.nrows, self.ncols
            )));
        }
        self.rows.push(i as u32);
        self.cols.push(j as u32);
        self.vals.push(v);
        Ok(())
    }

    /// Converts to CSR: sorts each row by column and sums duplicates. Explicit zeros are kept
    /// (they are part of the sparsity pattern a file or an assembly asked for).
    pub fn to_csr(&self) -> Result<Csr<T>> {
        if self.vals.len() > u32::MAX as usize {
            return Err(KrylovError::InvalidMatrix(
                "more than 2^32 - 1 entries".into(),
            ));
        }
        // Counting sort by row.
        let mut row_ptr = vec![0u32; self.nrows + 1];
        for &r in &self.rows {
            row_ptr[r as usize + 1] += 1;
        }
        for i in 0..self.nrows {
            row_ptr[i + 1] += row_ptr[i];
        }
        let mut next = row_ptr.clone();
        let mut cols = vec![0u32; self.vals.len()];
        let mut vals = vec![T::zero(); self.vals.len()];
        for k in 0..self.vals.len() {
            let r = self.rows[k] as usize;
            let dst = next[r] as usize;
            cols[dst] = self.cols[k];
            vals[dst] = self.vals[k];
            next[r] += 1;
        }
        // Sort within rows and merge duplicates.
        let mut out_ptr = Vec::with_capacity(self.nrows + 1);
        out_ptr.push(0u32);
        let mut out_cols = Vec::with_capacity(cols.len());
        let mut out_vals = Vec::with_capacity(vals.len());
        let mut perm: Vec<usize> = Vec::new();
        for i in 0..self.nrows {
            let (s, e) = (row_ptr[i] as usize, row_ptr[i + 1] as usize);
            perm.clear();
            perm.extend(s..e);
            perm.sort_by_key(|&k| cols[k]);
            let mut last: Option<u32> = None;
            for &k in &perm {
                if last == Some(cols[k]) {
                    *out_vals.last_mut().unwrap() += vals[k];
                } else {
                    out_cols.push(cols[k]);
                    out_vals.push(vals[k]);
                    last = Some(cols[k]);
                }
            }
            out_ptr.push(out_cols.len() as u32);
        }
        Csr::new(self.nrows, self.ncols, out_ptr, out_cols, out_vals)
    }
}
