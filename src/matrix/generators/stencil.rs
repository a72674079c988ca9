//! Finite-difference stencils on structured grids: the 5-point (2D) and 7-point (3D)
//! patterns, and the Poisson and Laplace problems built on them.

use super::{check_nnz, empty, finish};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// n and nnz of the 5-point stencil on a k×k grid.
pub(super) fn fd2_size(k: usize) -> Option<(usize, usize)> {
    let n = k.checked_mul(k)?;
    Some((n, n.checked_mul(5)? - 4 * k))
}

/// n and nnz of the 7-point stencil on a k×k×k grid.
pub(super) fn fd3_size(k: usize) -> Option<(usize, usize)> {
    let k2 = k.checked_mul(k)?;
    let n = k2.checked_mul(k)?;
    Some((n, n.checked_mul(7)? - 6 * k2))
}

/// Builds the 5-point-pattern matrix on a k×k grid (row-major, x fastest) from per-node
/// coefficients `[south, west, centre, east, north]`; every in-grid neighbour is stored.
fn stencil_2d<T: Scalar>(k: usize, mut coef: impl FnMut(usize, usize) -> [f64; 5]) -> Csr<T> {
    if k == 0 {
        return empty();
    }
    let (n, nnz) = fd2_size(k).expect("overflow");
    check_nnz("2D stencil", Some(nnz));
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    row_ptr.push(0u32);
    for j in 0..k {
        for i in 0..k {
            let p = i + k * j;
            let c = coef(i, j);
            let mut put = |col: usize, v: f64| {
                col_idx.push(col as u32);
                values.push(T::from_f64(v));
            };
            if j > 0 {
                put(p - k, c[0]);
            }
            if i > 0 {
                put(p - 1, c[1]);
            }
            put(p, c[2]);
            if i + 1 < k {
                put(p + 1, c[3]);
            }
            if j + 1 < k {
                put(p + k, c[4]);
            }
            row_ptr.push(col_idx.len() as u32);
        }
    }
    debug_assert_eq!(col_idx.len(), nnz);
    finish(n, row_ptr, col_idx, values)
}

/// The diagonal `Σ |o|` over the neighbour coefficients `offs` as rounded to `T`, summed in f64
/// in the given order and rounded *up* to `T`: a row storing these off-diagonals (in this column
/// order, or a subset of them) is then weakly diagonally dominant exactly, also in f32.
fn dominant_diagonal<T: Scalar>(offs: &[T]) -> T {
    let s: f64 = offs
        .iter()
        .map(|o| o.as_f64().abs())
        .fold(0.0, |a, b| a + b);
    let t = T::from_f64(s);
    if t.as_f64() < s {
        t + t * T::epsilon()
    } else {
        t
    }
}

/// Builds the 7-point-pattern matrix on a k×k×k grid (x fastest, then y, then z) from per-node
/// neighbour coefficients `[z−, y−, x−, x+, y+, z+]` (all ≤ 0); the centre is
/// [`dominant_diagonal`] of all six. Every in-grid neighbour is stored, even when its
/// coefficient is zero; out-of-grid (Dirichlet) neighbours are dropped.
pub(super) fn stencil_3d<T: Scalar>(
    k: usize,
    what: &str,
    mut coef: impl FnMut(usize, usize, usize) -> [f64; 6],
) -> Csr<T> {
    if k == 0 {
        return empty();
    }
    let size = fd3_size(k);
    let nnz = check_nnz(what, size.map(|s| s.1));
    let n = size.expect("checked").0;
    let kk = k * k;
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    row_ptr.push(0u32);
    for l in 0..k {
        for j in 0..k {
            for i in 0..k {
                let p = i + k * j + kk * l;
                let c = coef(i, j, l).map(T::from_f64);
                let diag = dominant_diagonal(&c);
                let mut put = |col: usize, v: T| {
                    col_idx.push(col as u32);
                    values.push(v);
                };
                if l > 0 {
                    put(p - kk, c[0]);
                }
                if j > 0 {
                    put(p - k, c[1]);
                }
                if i > 0 {
                    put(p - 1, c[2]);
                }
                put(p, diag);
                if i + 1 < k {
                    put(p + 1, c[3]);
                }
                if j + 1 < k {
                    put(p + k, c[4]);
                }
                if l + 1 < k {
                    put(p + kk, c[5]);
                }
                row_ptr.push(col_idx.len() as u32);
            }
        }
    }
    debug_assert_eq!(col_idx.len(), nnz);
    finish(n, row_ptr, col_idx, values)
}

/// 2D Poisson problem −Δu = f on a k×k interior grid with homogeneous Dirichlet boundary,
/// 5-point finite differences, **unscaled** (the factor 1/h² is left out):
///
/// ```text
///            −1
///        −1   4  −1        (a_ii = 4, a_ij = −1 for the west/east/south/north neighbours)
///            −1
/// ```
///
/// Unknown `(i, j)`, `0 ≤ i, j < k` (i along x), has index `i + k·j` (row-major, x fastest).
/// Neighbours outside the grid are boundary values and are eliminated, so boundary rows have
/// fewer entries. n = k², nnz = 5k² − 4k; symmetric positive definite, weakly diagonally
/// dominant (strictly in boundary rows). `k = 0` gives the empty matrix. This is the CLI's
/// default problem at k = 256.
///
/// # Panics
/// If nnz exceeds `u32::MAX` (k above ~29000).
pub fn poisson_2d_fd<T: Scalar>(k: usize) -> Csr<T> {
    stencil_2d(k, |_, _| [-1.0, -1.0, 4.0, -1.0, -1.0])
}

/// 3D Laplace problem −Δu = f on a k×k×k interior grid with homogeneous Dirichlet boundary,
/// 7-point finite differences, unscaled: `a_ii = 6`, `a_ij = −1` for the six axis neighbours.
///
/// Unknown `(i, j, l)` (along x, y, z) has index `i + k·j + k²·l` (lexicographic, x fastest).
/// n = k³, nnz = 7k³ − 6k² (full matrix; the paper's Table 1 counts only one triangle).
/// Symmetric positive definite. `k = 0` gives the empty matrix. The benchmark of Aliaga et al.
/// §4.2 uses k = 200 and 252 (n ≈ 8M and 16M).
///
/// # Panics
/// If nnz exceeds `u32::MAX` (k above ~850).
pub fn laplace_3d<T: Scalar>(k: usize) -> Csr<T> {
    stencil_3d(k, "laplace_3d", |_, _, _| [-1.0; 6])
}
