//! ELLPACK storage: every row padded to the longest, stored column-major so that consecutive
//! rows' k-th entries are adjacent (coalesced loads when one GPU thread handles one row).

use super::Csr;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;

/// A sparse matrix in ELL form: `width` entries per row, entry k of row i at `k·nrows + i`.
/// Padding entries point at the row's own index with value 0 (always a valid column, so
/// kernels need no branch).
///
/// ```
/// use krylov_wgpu::matrix::{Csr, Ell};
/// let a = Csr::<f64>::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![4.0, 1.0, 3.0])?;
/// let e = Ell::from_csr(&a, 2.0)?;
/// assert_eq!(e.width(), 2);
/// assert_eq!(e.mul_vec(&[1.0, 1.0]), vec![5.0, 3.0]);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Ell<T> {
    nrows: usize,
    ncols: usize,
    width: usize,
    col_idx: Vec<u32>,
    values: Vec<T>,
}

impl<T: Scalar> Ell<T> {
    /// Converts a square-or-not CSR matrix; refuses ([`KrylovError::InvalidOption`]) when the
    /// padded storage would exceed `max_padding` times the CSR entry count (one very long row
    /// makes ELL wasteful: use CSR there).
    pub fn from_csr(a: &Csr<T>, max_padding: f64) -> Result<Self> {
        let (_, _, width) = a.row_length_stats();
        let n = a.nrows();
        let stored = width * n;
        if a.nnz() > 0 && stored as f64 > max_padding * a.nnz() as f64 {
            return Err(KrylovError::InvalidOption(format!(
                "ELL would store {stored} entries for {} non-zeros (longest row {width}), over the padding budget of {max_padding}×",
                a.nnz()
            )));
        }
        if stored > u32::MAX as usize {
            return Err(KrylovError::InvalidOption(
                "ELL storage exceeds u32 indexing".into(),
            ));
        }
        let mut col_idx = vec![0u32; stored];
        let mut values = vec![T::zero(); stored];
        for i in 0..n {
            let (cols, vals) = a.row(i);
            for k in 0..width {
                let dst = k * n + i;
                if k < cols.len() {
                    col_idx[dst] = cols[k];
                    values[dst] = vals[k];
                } else {
                    // Padding: a valid column (the row itself, or 0 for a wide matrix), value 0.
                    col_idx[dst] = if i < a.ncols() { i as u32 } else { 0 };
                }
            }
        }
        Ok(Ell {
            nrows: n,
            ncols: a.ncols(),
            width,
            col_idx,
            values,
        })
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Entries per row (the longest CSR row).
    pub fn width(&self) -> usize {
        self.width
    }
    /// Column indices, column-major (`k·nrows + i`).
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Values, column-major, zero in the padding.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Bytes of the two arrays.
    pub fn storage_bytes(&self) -> usize {
        self.col_idx.len() * 4 + self.values.len() * std::mem::size_of::<T>()
    }

    /// y = A·x in `T`, entries in stored order (the ELL kernels' order).
    pub fn mul_vec(&self, x: &[T]) -> Vec<T> {
        (0..self.nrows)
            .map(|i| {
                (0..self.width).fold(T::zero(), |s, k| {
                    let idx = k * self.nrows + i;
                    s + self.values[idx] * x[self.col_idx[idx] as usize]
                })
            })
            .collect()
    }
}
