//! Tests of the matrix generators: sizes, patterns, values, symmetry, definiteness, determinism
//! and the spec-string entry point.
//!
//! Grouped by concern: the 2D finite-difference and finite-element Poisson matrices (`two_d`),
//! the 3D Laplace and convection–diffusion matrices (`three_d`), positive definiteness
//! (`definiteness`), the random and banded families (`random`), and spec strings (`specs`).

mod definiteness;
mod random;
mod specs;
mod three_d;
mod two_d;

use krylov_wgpu::KrylovError;
use krylov_wgpu::matrix::Csr;

/// Dense copy (row-major) of a small matrix.
fn dense(a: &Csr<f64>) -> Vec<Vec<f64>> {
    let mut d = vec![vec![0.0; a.ncols()]; a.nrows()];
    for (i, row) in d.iter_mut().enumerate() {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            row[c as usize] = v;
        }
    }
    d
}

/// Dense Cholesky: true iff the symmetric matrix is positive definite.
fn cholesky_ok(a: &Csr<f64>) -> bool {
    let n = a.nrows();
    let mut l = dense(a);
    for j in 0..n {
        let d = l[j][j] - l[j][..j].iter().map(|x| x * x).sum::<f64>();
        if d <= 0.0 || !d.is_finite() {
            return false;
        }
        let d = d.sqrt();
        l[j][j] = d;
        for i in j + 1..n {
            let dot: f64 = l[i][..j].iter().zip(&l[j][..j]).map(|(a, b)| a * b).sum();
            l[i][j] = (l[i][j] - dot) / d;
        }
    }
    true
}

/// Checks the structural invariants every generator promises.
fn check_structure<T: krylov_wgpu::Scalar>(a: &Csr<T>) {
    assert!(a.is_square());
    let rp = a.row_ptr();
    assert_eq!(rp.len(), a.nrows() + 1);
    for i in 0..a.nrows() {
        let (cols, _) = a.row(i);
        assert!(cols.windows(2).all(|w| w[0] < w[1]), "row {i} not sorted");
        assert!(cols.iter().all(|&c| (c as usize) < a.ncols()));
    }
    // Round trip through the checking constructor.
    Csr::new(
        a.nrows(),
        a.ncols(),
        rp.to_vec(),
        a.col_idx().to_vec(),
        a.values().to_vec(),
    )
    .expect("valid CSR");
}

fn is_invalid_option<T>(r: krylov_wgpu::Result<T>) -> bool {
    matches!(r, Err(KrylovError::InvalidOption(_)))
}

/// Whether some entry differs from its transpose.
fn exactly_nonsymmetric(a: &Csr<f64>) -> bool {
    !a.is_symmetric(0.0) && !a.is_symmetric(1e-3)
}
