//! Cheap structural statistics of a CSR matrix, for choosing a storage format automatically.

use super::Csr;
use super::bcsr::block_density;
use super::dia::diagonal_offsets;
use crate::base::scalar::Scalar;

/// Structure of a sparse matrix: size, row-length distribution, number of diagonals and
/// block densities — what the format choice (CSR, ELL, SELL, DIA, BCSR) looks at.
///
/// ```
/// use krylov_wgpu::matrix::{Csr, MatrixStats};
/// // [[2, -1], [-1, 2]]
/// let a = Csr::<f64>::new(2, 2, vec![0, 2, 4], vec![0, 1, 0, 1], vec![2.0, -1.0, -1.0, 2.0])?;
/// let s = MatrixStats::of(&a);
/// assert_eq!((s.nnz, s.row_len_max, s.ndiag), (4, 2, 3));
/// assert_eq!(s.row_len_std, 0.0);
/// assert_eq!(s.density, [1.0, 0.25, 1.0 / 16.0]);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MatrixStats {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Number of stored entries.
    pub nnz: usize,
    /// Mean entries per row (0 for no rows).
    pub row_len_mean: f64,
    /// Longest row.
    pub row_len_max: usize,
    /// Standard deviation of the row lengths (population, 0 for no rows).
    pub row_len_std: f64,
    /// Number of distinct diagonals (`col − row`) holding an entry: DIA stores `ndiag·nrows`.
    pub ndiag: usize,
    /// Block densities `[d2, d4, d8]` ([`block_density`] for N = 2, 4, 8; 1 without entries).
    pub density: [f64; 3],
}

impl MatrixStats {
    /// Computes the statistics: one pass over the row pointers, one over the column indices for
    /// the diagonals and one per block size (O(nnz + nrows + ncols) each).
    pub fn of<T: Scalar>(a: &Csr<T>) -> Self {
        let n = a.nrows();
        let mean = a.nnz() as f64 / n.max(1) as f64;
        let (mut max, mut sq) = (0usize, 0.0f64);
        for w in a.row_ptr().windows(2) {
            let l = (w[1] - w[0]) as usize;
            max = max.max(l);
            sq += (l as f64 - mean).powi(2);
        }
        MatrixStats {
            nrows: n,
            ncols: a.ncols(),
            nnz: a.nnz(),
            row_len_mean: mean,
            row_len_max: max,
            row_len_std: (sq / n.max(1) as f64).sqrt(),
            ndiag: diagonal_offsets(a).len(),
            density: [2, 4, 8].map(|nb| block_density(a, nb)),
        }
    }
}
