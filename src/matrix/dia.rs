//! DIA storage: only the diagonals that hold an entry, each stored as a full column of length
//! `nrows` (paper 001 §3.2), so one GPU thread per row reads `values[d·nrows + i]` coalesced.

use super::Csr;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;

/// A sparse matrix in DIA (diagonal) form.
///
/// Layout (the DIA kernels depend on it exactly):
///
/// * `offsets: Vec<i32>`, length `ndiag`: the distinct values of `col − row` over the stored
///   CSR entries, sorted ascending (0 = main diagonal, +d the d-th superdiagonal, −d the d-th
///   subdiagonal). An explicitly stored zero is an entry like any other and makes its
///   diagonal present.
/// * `values: Vec<T>`, length `ndiag·nrows`, diagonal after diagonal:
///   `values[d·nrows + i] = A[i, i + offsets[d]]`, and 0 where `i + offsets[d]` lies outside
///   `0..ncols` (no wrap-around) or where the diagonal has no entry in row `i`.
///
/// A kernel therefore computes `y[i] = Σ_d values[d·nrows + i]·x[i + offsets[d]]` over the `d`
/// whose column is in range, in the order `d = 0, 1, …` (ascending column), which is what
/// [`Dia::mul_vec`] does.
///
/// ```
/// use krylov_wgpu::matrix::{Csr, Dia};
/// // [[4, 1, 0], [0, 3, 0], [2, 0, 5]]
/// let a = Csr::<f64>::new(3, 3, vec![0, 2, 3, 5], vec![0, 1, 1, 0, 2], vec![4.0, 1.0, 3.0, 2.0, 5.0])?;
/// let d = Dia::from_csr(&a, 3.0)?;
/// assert_eq!(d.offsets(), &[-2, 0, 1]);
/// assert_eq!(d.values(), &[0.0, 0.0, 2.0, 4.0, 3.0, 5.0, 1.0, 0.0, 0.0]);
/// assert_eq!(d.mul_vec(&[1.0, 1.0, 1.0]), vec![5.0, 3.0, 7.0]);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Dia<T> {
    nrows: usize,
    ncols: usize,
    offsets: Vec<i32>,
    values: Vec<T>,
}

/// The sorted distinct `col − row` of the stored entries of `a` (cost O(nnz + nrows + ncols)
/// with a bitmap, or O(nnz log nnz) when the matrix is very wide or tall compared with nnz).
pub(crate) fn diagonal_offsets<T: Scalar>(a: &Csr<T>) -> Vec<i64> {
    let (n, m) = (a.nrows(), a.ncols());
    if a.nnz() == 0 {
        return Vec::new();
    }
    let rp = a.row_ptr();
    let ci = a.col_idx();
    let span = n + m; // diag index col − row + nrows lies in 1..nrows + ncols
    if span <= 16 * a.nnz() {
        let mut seen = vec![false; span];
        for i in 0..n {
            for &c in &ci[rp[i] as usize..rp[i + 1] as usize] {
                seen[c as usize + n - i] = true;
            }
        }
        seen.iter()
            .enumerate()
            .filter(|&(_, &s)| s)
            .map(|(k, _)| k as i64 - n as i64)
            .collect()
    } else {
        let mut offs: Vec<i64> = Vec::with_capacity(a.nnz());
        for i in 0..n {
            for &c in &ci[rp[i] as usize..rp[i + 1] as usize] {
                offs.push(c as i64 - i as i64);
            }
        }
        offs.sort_unstable();
        offs.dedup();
        offs
    }
}

impl<T: Scalar> Dia<T> {
    /// Converts a CSR matrix (square or not).
    ///
    /// # Errors
    /// [`KrylovError::InvalidOption`] when the matrix is not banded enough — the `ndiag·nrows`
    /// stored values would exceed `max_padding` times the CSR entry count (use ELL, SELL or CSR
    /// there) — or when the storage, or an offset, does not fit the kernels' 32-bit indexing.
    pub fn from_csr(a: &Csr<T>, max_padding: f64) -> Result<Self> {
        let n = a.nrows();
        let offs = diagonal_offsets(a);
        let ndiag = offs.len();
        let stored = ndiag as u128 * n as u128;
        if stored as f64 > max_padding * a.nnz() as f64 {
            return Err(KrylovError::InvalidOption(format!(
                "DIA would store {stored} values ({ndiag} diagonals × {n} rows) for {} non-zeros, over the padding budget of {max_padding}× (matrix not banded enough)",
                a.nnz()
            )));
        }
        if stored > u32::MAX as u128 {
            return Err(KrylovError::InvalidOption(format!(
                "DIA storage of {stored} values exceeds u32 indexing"
            )));
        }
        let offsets: Vec<i32> = offs
            .iter()
            .map(|&d| i32::try_from(d))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| {
                KrylovError::InvalidOption("a DIA diagonal offset exceeds the i32 range".into())
            })?;
        let mut values = vec![T::zero(); ndiag * n];
        for i in 0..n {
            let (cols, vals) = a.row(i);
            // Columns ascend within a row, so do the offsets: advance a cursor instead of
            // searching.
            let mut d = 0;
            for (&c, &v) in cols.iter().zip(vals) {
                let off = c as i64 - i as i64;
                while offs[d] != off {
                    d += 1;
                }
                values[d * n + i] = v;
            }
        }
        Ok(Dia {
            nrows: n,
            ncols: a.ncols(),
            offsets,
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
    /// Number of stored diagonals.
    pub fn ndiag(&self) -> usize {
        self.offsets.len()
    }
    /// Diagonal offsets (`col − row`), ascending.
    pub fn offsets(&self) -> &[i32] {
        &self.offsets
    }
    /// Values, diagonal after diagonal: `values[d·nrows + i] = A[i, i + offsets[d]]`, zero
    /// where that column is out of range or holds no entry.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Bytes of the two arrays: `4·ndiag + size_of::<T>()·ndiag·nrows`.
    pub fn storage_bytes(&self) -> usize {
        4 * self.offsets.len() + std::mem::size_of::<T>() * self.values.len()
    }

    /// y = A·x in `T`, summing the diagonals in stored order `d = 0, 1, …` and skipping the
    /// columns outside `0..ncols` (the DIA kernels' order).
    ///
    /// # Panics
    /// If `x` is shorter than a column index it needs.
    pub fn mul_vec(&self, x: &[T]) -> Vec<T> {
        let n = self.nrows;
        (0..n)
            .map(|i| {
                let mut s = T::zero();
                for (d, &off) in self.offsets.iter().enumerate() {
                    let j = i as i64 + off as i64;
                    if j >= 0 && (j as usize) < self.ncols {
                        s += self.values[d * n + i] * x[j as usize];
                    }
                }
                s
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_bitmap_and_sort_paths_agree() {
        // 2 × 100 with 2 entries: span 102 > 16·2 takes the sort path.
        let a = Csr::<f64>::new(2, 100, vec![0, 1, 2], vec![99, 0], vec![1.0, 2.0]).unwrap();
        assert_eq!(diagonal_offsets(&a), vec![-1, 99]);
        // Dense 3 × 3: bitmap path.
        let a = Csr::<f64>::new(
            3,
            3,
            vec![0, 3, 6, 9],
            vec![0, 1, 2, 0, 1, 2, 0, 1, 2],
            vec![1.0; 9],
        )
        .unwrap();
        assert_eq!(diagonal_offsets(&a), vec![-2, -1, 0, 1, 2]);
        let e = Csr::<f64>::new(4, 4, vec![0; 5], vec![], vec![]).unwrap();
        assert!(diagonal_offsets(&e).is_empty());
    }
}
