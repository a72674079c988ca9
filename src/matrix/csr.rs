//! Compressed sparse row storage: the format every kernel starts from.

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;

/// A sparse matrix in compressed sparse row (CSR) form.
///
/// Indices are `u32` so the arrays upload to the GPU unchanged; column indices are sorted
/// within each row and unique. Build one from triplets with [`Coo`](super::Coo), from a
/// Matrix Market file with [`read_matrix_market`](super::read_matrix_market), or from a
/// generator in [`generators`](super::generators).
///
/// ```
/// use krylov_wgpu::matrix::Csr;
/// // [[2, -1], [-1, 2]]
/// let a = Csr::<f64>::new(2, 2, vec![0, 2, 4], vec![0, 1, 0, 1], vec![2.0, -1.0, -1.0, 2.0])?;
/// assert_eq!(a.nnz(), 4);
/// assert_eq!(a.mul_vec(&[1.0, 1.0])?, vec![1.0, 1.0]);
/// assert!(a.is_symmetric(0.0));
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Csr<T> {
    nrows: usize,
    ncols: usize,
    row_ptr: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
}

impl<T: Scalar> Csr<T> {
    /// Builds a CSR matrix from its three arrays, checking that they are consistent:
    /// `row_ptr` has `nrows + 1` non-decreasing entries starting at 0 and ending at `nnz`,
    /// column indices are in range and strictly increasing within each row, values are finite.
    pub fn new(
        nrows: usize,
        ncols: usize,
        row_ptr: Vec<u32>,
        col_idx: Vec<u32>,
        values: Vec<T>,
    ) -> Result<Self> {
        let bad = |m: String| Err(KrylovError::InvalidMatrix(m));
        if row_ptr.len() != nrows + 1 {
            return bad(format!(
                "row_ptr has {} entries, expected nrows + 1 = {}",
                row_ptr.len(),
                nrows + 1
            ));
        }
        if col_idx.len() != values.len() {
            return bad(format!(
                "{} column indices but {} values",
                col_idx.len(),
                values.len()
            ));
        }
        if row_ptr[0] != 0 || row_ptr[nrows] as usize != col_idx.len() {
            return bad("row_ptr must start at 0 and end at nnz".into());
        }
        if ncols > u32::MAX as usize || nrows > u32::MAX as usize {
            return bad("dimensions exceed u32 indexing".into());
        }
        for i in 0..nrows {
            let (s, e) = (row_ptr[i] as usize, row_ptr[i + 1] as usize);
            if s > e {
                return bad(format!("row_ptr decreases at row {i}"));
            }
            for k in s..e {
                if col_idx[k] as usize >= ncols {
                    return bad(format!(
                        "column index {} out of range in row {i}",
                        col_idx[k]
                    ));
                }
                if k > s && col_idx[k] <= col_idx[k - 1] {
                    return bad(format!("column indices not strictly increasing in row {i}"));
                }
            }
        }
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(KrylovError::NonFinite {
                what: "matrix values",
                index,
            });
        }
        Ok(Csr {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values,
        })
    }

    /// The n×n identity.
    pub fn identity(n: usize) -> Self {
        Csr {
            nrows: n,
            ncols: n,
            row_ptr: (0..=n as u32).collect(),
            col_idx: (0..n as u32).collect(),
            values: vec![T::one(); n],
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
    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// Whether the matrix is square.
    pub fn is_square(&self) -> bool {
        self.nrows == self.ncols
    }
    /// Row pointers (`nrows + 1` entries).
    pub fn row_ptr(&self) -> &[u32] {
        &self.row_ptr
    }
    /// Column index of each stored entry.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Value of each stored entry.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Column indices and values of row `i`.
    pub fn row(&self, i: usize) -> (&[u32], &[T]) {
        let (s, e) = (self.row_ptr[i] as usize, self.row_ptr[i + 1] as usize);
        (&self.col_idx[s..e], &self.values[s..e])
    }
    /// The entry at `(i, j)`, zero if not stored.
    pub fn get(&self, i: usize, j: usize) -> T {
        let (cols, vals) = self.row(i);
        match cols.binary_search(&(j as u32)) {
            Ok(k) => vals[k],
            Err(_) => T::zero(),
        }
    }

    /// Returns an error unless the matrix is square.
    pub fn require_square(&self) -> Result<()> {
        if self.is_square() {
            Ok(())
        } else {
            Err(KrylovError::NotSquare {
                rows: self.nrows,
                cols: self.ncols,
            })
        }
    }

    /// Whether `x` has A's column count and `y` (named `y_what` in the error) its row count.
    fn check_product(&self, x: &[T], y: &[T], y_what: &'static str) -> Result<()> {
        if x.len() != self.ncols() {
            return Err(KrylovError::DimensionMismatch {
                what: "x length vs matrix columns",
                expected: self.ncols(),
                found: x.len(),
            });
        }
        if y.len() != self.nrows() {
            return Err(KrylovError::DimensionMismatch {
                what: y_what,
                expected: self.nrows(),
                found: y.len(),
            });
        }
        Ok(())
    }

    /// y = A·x, computed in `T` (see [`Csr::mul_vec_into`]).
    pub fn mul_vec(&self, x: &[T]) -> Result<Vec<T>> {
        let mut y = vec![T::zero(); self.nrows];
        self.mul_vec_into(x, &mut y)?;
        Ok(y)
    }

    /// y = A·x into `y`, computed in `T` row by row (the CPU twin of the `spmv` kernel).
    pub fn mul_vec_into(&self, x: &[T], y: &mut [T]) -> Result<()> {
        self.check_product(x, y, "y length vs matrix rows")?;
        let (rp, ci, va) = (self.row_ptr(), self.col_idx(), self.values());
        for (i, yi) in y.iter_mut().enumerate() {
            let mut s = T::zero();
            for k in rp[i] as usize..rp[i + 1] as usize {
                s += va[k] * x[ci[k] as usize];
            }
            *yi = s;
        }
        Ok(())
    }

    /// ‖b − A·x‖∞ summed in f64 from the stored values (paper 001's error measure, the
    /// `residual_inf` of the CLI's and the Python package's reports); NaN when any row's is.
    ///
    /// ```
    /// use krylov_wgpu::matrix::Csr;
    /// let a = Csr::<f64>::new(2, 2, vec![0, 2, 4], vec![0, 1, 0, 1], vec![2.0, -1.0, -1.0, 2.0])?;
    /// assert_eq!(a.residual_inf(&[1.0, 1.0], &[1.0, 0.5])?, 1.0); // b - Ax = (-0.5, 1)
    /// # Ok::<(), krylov_wgpu::KrylovError>(())
    /// ```
    pub fn residual_inf(&self, b: &[T], x: &[T]) -> Result<f64> {
        self.check_product(x, b, "b length vs matrix rows")?;
        let (rp, ci, va) = (self.row_ptr(), self.col_idx(), self.values());
        let mut worst = 0.0f64;
        for (i, bi) in b.iter().enumerate() {
            let ax: f64 = (rp[i] as usize..rp[i + 1] as usize)
                .map(|k| va[k].as_f64() * x[ci[k] as usize].as_f64())
                .sum();
            let r = (bi.as_f64() - ax).abs();
            if r.is_nan() {
                return Ok(f64::NAN);
            }
            worst = worst.max(r);
        }
        Ok(worst)
    }

    /// The main diagonal (zero where no entry is stored).
    pub fn diagonal(&self) -> Vec<T> {
        (0..self.nrows.min(self.ncols))
            .map(|i| self.get(i, i))
            .collect()
    }

    /// The n×n matrix with the entries `(i, j, value)` (duplicates summed, as [`Coo`]
    /// assembles them); an index out of range or a non-finite value is an error.
    ///
    /// ```
    /// use krylov_wgpu::matrix::Csr;
    /// let a = Csr::<f64>::from_triplets(2, &[(0, 0, 2.0), (1, 0, -1.0), (1, 1, 3.0)])?;
    /// assert_eq!(a.get(1, 0), -1.0);
    /// # Ok::<(), krylov_wgpu::KrylovError>(())
    /// ```
    ///
    /// [`Coo`]: crate::matrix::Coo
    pub fn from_triplets(n: usize, entries: &[(usize, usize, T)]) -> Result<Self> {
        let mut coo = crate::matrix::Coo::with_capacity(n, n, entries.len());
        for &(i, j, v) in entries {
            coo.push(i, j, v)?;
        }
        coo.to_csr()
    }

    /// D·A for D = diag(`factor(i)`): row i multiplied by `factor(i)` (same pattern).
    ///
    /// ```
    /// use krylov_wgpu::matrix::Csr;
    /// let a = Csr::<f64>::identity(3).scale_rows(|i| (i + 1) as f64);
    /// assert_eq!(a.diagonal(), vec![1.0, 2.0, 3.0]);
    /// ```
    pub fn scale_rows(&self, factor: impl Fn(usize) -> T) -> Self {
        let mut values = self.values.clone();
        for i in 0..self.nrows {
            let f = factor(i);
            let (start, end) = (self.row_ptr[i] as usize, self.row_ptr[i + 1] as usize);
            values[start..end].iter_mut().for_each(|v| *v *= f);
        }
        Csr {
            nrows: self.nrows,
            ncols: self.ncols,
            row_ptr: self.row_ptr.clone(),
            col_idx: self.col_idx.clone(),
            values,
        }
    }

    /// Aᵀ in CSR form (a counting sort: O(nnz)).
    pub fn transpose(&self) -> Self {
        let mut counts = vec![0u32; self.ncols + 1];
        for &c in &self.col_idx {
            counts[c as usize + 1] += 1;
        }
        for j in 0..self.ncols {
            counts[j + 1] += counts[j];
        }
        let row_ptr = counts.clone();
        let mut next = counts;
        let mut col_idx = vec![0u32; self.nnz()];
        let mut values = vec![T::zero(); self.nnz()];
        for i in 0..self.nrows {
            let (cols, vals) = self.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                let dst = next[c as usize] as usize;
                col_idx[dst] = i as u32;
                values[dst] = v;
                next[c as usize] += 1;
            }
        }
        Csr {
            nrows: self.ncols,
            ncols: self.nrows,
            row_ptr,
            col_idx,
            values,
        }
    }

    /// Whether A equals Aᵀ up to `|a_ij − a_ji| ≤ tol·max(|a_ij|, |a_ji|)`
    /// (`tol = 0` asks for exact symmetry). A missing entry counts as zero.
    pub fn is_symmetric(&self, tol: f64) -> bool {
        if !self.is_square() {
            return false;
        }
        let t = self.transpose();
        for i in 0..self.nrows {
            let (ca, va) = self.row(i);
            let (cb, vb) = t.row(i);
            // Merge the two sorted rows.
            let (mut p, mut q) = (0, 0);
            while p < ca.len() || q < cb.len() {
                let (a, b) = match (ca.get(p), cb.get(q)) {
                    (Some(&x), Some(&y)) if x == y => {
                        p += 1;
                        q += 1;
                        (va[p - 1].as_f64(), vb[q - 1].as_f64())
                    }
                    (Some(&x), Some(&y)) if x < y => {
                        p += 1;
                        (va[p - 1].as_f64(), 0.0)
                    }
                    (Some(_), None) => {
                        p += 1;
                        (va[p - 1].as_f64(), 0.0)
                    }
                    _ => {
                        q += 1;
                        (0.0, vb[q - 1].as_f64())
                    }
                };
                if (a - b).abs() > tol * a.abs().max(b.abs()) {
                    return false;
                }
            }
        }
        true
    }

    /// Whether every row satisfies `|a_ii| ≥ Σ_{j≠i} |a_ij|` (weak diagonal dominance);
    /// `strict` asks for `>`.
    pub fn is_diagonally_dominant(&self, strict: bool) -> bool {
        (0..self.nrows).all(|i| {
            let (cols, vals) = self.row(i);
            let mut diag = 0.0;
            let mut off = 0.0;
            for (&c, &v) in cols.iter().zip(vals) {
                if c as usize == i {
                    diag += v.as_f64().abs();
                } else {
                    off += v.as_f64().abs();
                }
            }
            if strict { diag > off } else { diag >= off }
        })
    }

    /// Converts the values to another precision; a value that overflows the target type
    /// (e.g. 1e300 into f32) is a [`KrylovError::NonFinite`] error.
    pub fn cast<U: Scalar>(&self) -> Result<Csr<U>> {
        let values: Vec<U> = self
            .values
            .iter()
            .map(|v| U::from_f64(v.as_f64()))
            .collect();
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(KrylovError::NonFinite {
                what: "matrix values after conversion to the solve precision",
                index,
            });
        }
        Ok(Csr {
            nrows: self.nrows,
            ncols: self.ncols,
            row_ptr: self.row_ptr.clone(),
            col_idx: self.col_idx.clone(),
            values,
        })
    }

    /// Row lengths: minimum, mean and maximum number of stored entries per row.
    pub fn row_length_stats(&self) -> (usize, f64, usize) {
        let lens = self.row_ptr.windows(2).map(|w| (w[1] - w[0]) as usize);
        let (mut lo, mut hi) = (usize::MAX, 0);
        for l in lens {
            lo = lo.min(l);
            hi = hi.max(l);
        }
        if self.nrows == 0 {
            lo = 0;
        }
        (lo, self.nnz() as f64 / self.nrows.max(1) as f64, hi)
    }

    /// Converts into an [`sprs::CsMat`] (CSR storage, `usize` indices).
    pub fn to_sprs(&self) -> sprs::CsMat<T> {
        sprs::CsMat::new(
            (self.nrows, self.ncols),
            self.row_ptr.iter().map(|&p| p as usize).collect(),
            self.col_idx.iter().map(|&c| c as usize).collect(),
            self.values.clone(),
        )
    }

    /// Converts from an [`sprs::CsMat`] in either CSR or CSC storage.
    pub fn from_sprs(m: &sprs::CsMat<T>) -> Result<Self> {
        let csr = if m.is_csr() { m.clone() } else { m.to_csr() };
        let too_big = |_| KrylovError::InvalidMatrix("index exceeds u32".into());
        let (indptr, indices, data) = (
            csr.indptr().to_proper().to_vec(),
            csr.indices().to_vec(),
            csr.data().to_vec(),
        );
        let mut coo = super::Coo::new(csr.rows(), csr.cols());
        // Route through COO: sprs allows unsorted/duplicate indices in some constructors.
        for i in 0..csr.rows() {
            for k in indptr[i]..indptr[i + 1] {
                coo.push(i, indices[k], data[k])?;
            }
        }
        let _ = u32::try_from(data.len()).map_err(too_big)?;
        coo.to_csr()
    }

    /// Returns the first non-finite value, if any, as an error.
    pub fn check_finite(&self) -> Result<()> {
        match self.values.iter().position(|v| !v.is_finite()) {
            Some(index) => Err(KrylovError::NonFinite {
                what: "matrix values",
                index,
            }),
            None => Ok(()),
        }
    }

    /// Bytes the three CSR arrays occupy.
    pub fn storage_bytes(&self) -> usize {
        4 * (self.row_ptr.len() + self.col_idx.len()) + std::mem::size_of::<T>() * self.nnz()
    }

    pub(crate) fn from_parts_unchecked(
        nrows: usize,
        ncols: usize,
        row_ptr: Vec<u32>,
        col_idx: Vec<u32>,
        values: Vec<T>,
    ) -> Self {
        debug_assert_eq!(row_ptr.len(), nrows + 1);
        Csr {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values,
        }
    }
}
