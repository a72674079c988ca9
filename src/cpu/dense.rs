//! A small dense LU factorisation with partial pivoting, in f64: the direct-solver oracle the
//! tests compare iterative solutions with (O(n²) memory, O(n³) time: for n up to a few
//! thousand).
//!
//! ```
//! use krylov_wgpu::cpu::dense::lu_solve;
//! use krylov_wgpu::matrix::Csr;
//! // [[0, 2], [1, 1]] needs a row exchange.
//! let a = Csr::<f64>::new(2, 2, vec![0, 1, 3], vec![1, 0, 1], vec![2.0, 1.0, 1.0])?;
//! let x = lu_solve(&a, &[4.0, 3.0])?;
//! assert!((x[0] - 1.0).abs() < 1e-15 && (x[1] - 2.0).abs() < 1e-15);
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// The factors P A = L U of a dense n×n matrix (row-major, L unit lower triangular stored
/// below the diagonal, U on and above it).
#[derive(Debug, Clone)]
pub struct DenseLu {
    n: usize,
    lu: Vec<f64>,
    /// `perm[k]` = the original row now in row k.
    perm: Vec<usize>,
}

/// A as a dense row-major n×m array of f64.
pub fn to_dense<T: Scalar>(a: &Csr<T>) -> Vec<f64> {
    let m = a.ncols();
    let mut d = vec![0.0; a.nrows() * m];
    for i in 0..a.nrows() {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            d[i * m + c as usize] = v.as_f64();
        }
    }
    d
}

impl DenseLu {
    /// Factors the row-major n×n matrix `a`. A pivot below `n·ε·max|a_ij|` (after partial
    /// pivoting) means the matrix is singular to working precision: an
    /// `InvalidMatrix("singular …")` error naming the column.
    pub fn factor(n: usize, mut a: Vec<f64>) -> Result<Self> {
        if a.len() != n * n {
            return Err(KrylovError::DimensionMismatch {
                what: "dense matrix entries vs n²",
                expected: n * n,
                found: a.len(),
            });
        }
        if let Some(index) = a.iter().position(|v| !v.is_finite()) {
            return Err(KrylovError::NonFinite {
                what: "matrix values",
                index,
            });
        }
        let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let tiny = n as f64 * f64::EPSILON * scale;
        let mut perm: Vec<usize> = (0..n).collect();
        for k in 0..n {
            // Partial pivoting: the largest |a_ik| for i ≥ k.
            let (p, pv) = (k..n)
                .map(|i| (i, a[i * n + k].abs()))
                .fold((k, -1.0), |best, c| if c.1 > best.1 { c } else { best });
            if pv <= tiny || pv == 0.0 {
                return Err(KrylovError::InvalidMatrix(format!(
                    "matrix is singular to working precision: pivot {pv:.3e} in column {k} \
                     (threshold {tiny:.3e})"
                )));
            }
            if p != k {
                for j in 0..n {
                    a.swap(k * n + j, p * n + j);
                }
                perm.swap(k, p);
            }
            let piv = a[k * n + k];
            for i in k + 1..n {
                let l = a[i * n + k] / piv;
                a[i * n + k] = l;
                if l != 0.0 {
                    for j in k + 1..n {
                        a[i * n + j] -= l * a[k * n + j];
                    }
                }
            }
        }
        Ok(DenseLu { n, lu: a, perm })
    }

    /// Factors a sparse matrix (converted to dense f64).
    pub fn from_csr<T: Scalar>(a: &Csr<T>) -> Result<Self> {
        a.require_square()?;
        Self::factor(a.nrows(), to_dense(a))
    }

    /// The order n.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Solves A x = b.
    pub fn solve(&self, b: &[f64]) -> Result<Vec<f64>> {
        let n = self.n;
        if b.len() != n {
            return Err(KrylovError::DimensionMismatch {
                what: "right-hand side length vs matrix rows",
                expected: n,
                found: b.len(),
            });
        }
        // L y = P b.
        let mut y: Vec<f64> = self.perm.iter().map(|&p| b[p]).collect();
        for i in 0..n {
            let row = &self.lu[i * n..i * n + i];
            let s: f64 = row.iter().zip(&y[..i]).map(|(l, yj)| l * yj).sum();
            y[i] -= s;
        }
        // U x = y.
        for i in (0..n).rev() {
            let row = &self.lu[i * n + i + 1..(i + 1) * n];
            let s: f64 = row.iter().zip(&y[i + 1..]).map(|(u, yj)| u * yj).sum();
            y[i] = (y[i] - s) / self.lu[i * n + i];
        }
        Ok(y)
    }

    /// ‖A⁻¹‖₁, column by column (n solves).
    pub fn inverse_norm_1(&self) -> f64 {
        let mut best = 0.0f64;
        let mut e = vec![0.0; self.n];
        for j in 0..self.n {
            e.iter_mut().for_each(|v| *v = 0.0);
            e[j] = 1.0;
            let col = self.solve(&e).expect("length n");
            best = best.max(col.iter().map(|v| v.abs()).sum());
        }
        best
    }
}

/// Solves A x = b by dense LU with partial pivoting in f64; an error if A is not square, the
/// sizes differ, or A is singular to working precision.
pub fn lu_solve<T: Scalar>(a: &Csr<T>, b: &[T]) -> Result<Vec<f64>> {
    let b: Vec<f64> = b.iter().map(|v| v.as_f64()).collect();
    DenseLu::from_csr(a)?.solve(&b)
}

/// The 1-norm condition number κ₁(A) = ‖A‖₁‖A⁻¹‖₁, exactly (n LU solves): for small
/// matrices in tests.
pub fn condition_number_1<T: Scalar>(a: &Csr<T>) -> Result<f64> {
    let lu = DenseLu::from_csr(a)?;
    let mut col_sums = vec![0.0f64; a.ncols()];
    for (&c, &v) in a.col_idx().iter().zip(a.values()) {
        col_sums[c as usize] += v.as_f64().abs();
    }
    let norm_a = col_sums.iter().fold(0.0f64, |m, &v| m.max(v));
    Ok(norm_a * lu.inverse_norm_1())
}
