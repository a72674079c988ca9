//! The Hessenberg matrix of CA-GMRES, reconstructed from the block factors (Hoemmen's thesis
//! §3.3, paper 002 §III), its least-squares problem, and the standard Arnoldi cycle the
//! Newton shifts come from.
//!
//! **Reconstruction.** After j columns (basis Q = [q₀ … q_j] orthonormal,
//! A Q[:, :j] = Q H[:j+1, :j]), a block runs the matrix powers from q_j: V = [q_j, W] with
//! W = [w₁ … w_k] and A·V[:, :k] = V·B. BOrth + TSQR give W = Q C + Q̂ R (C (j+1) × k, R k × k
//! upper). With Q⁺ = [Q, Q̂]:
//!
//! * V = Q⁺·R⁺ where R⁺ ((j+1+k) × (k+1)) has column 0 = e_j and column i ≥ 1 = [C_{:,i−1};
//!   R_{:,i−1}];
//! * V[:, :k] = Q⁺[:, :j+k]·R⁺[:j+k, :k] = Q[:, :j]·E + Q⁺[:, j:j+k]·T with E = R⁺[:j, :k]
//!   and T = R⁺[j:j+k, :k] upper triangular with T₀₀ = 1;
//! * so A·Q⁺[:, j:j+k] = (A V[:, :k] − A Q[:, :j] E) T⁻¹ = Q⁺ (R⁺ B − H̃ E) T⁻¹, with H̃ the
//!   previous H padded to j+1+k rows.
//!
//! Hence the k new columns H[:j+k+1, j:j+k] = (R⁺ B − H̃ E) T⁻¹: upper Hessenberg in exact
//! arithmetic (the entries below the subdiagonal are rounding and are set to zero; their size
//! is returned). Nothing here assumes a particular basis: the monomial and Newton bases only
//! differ in B.

use nalgebra::DMatrix;

/// Appends the k = `r.ncols()` columns of one block to `h` (at least (j+1+k) × (j+k), its
/// first j columns filled). `c` is (j+1) × k, `r` k × k, `b` (k+1) × k. Returns the largest
/// |entry| below the subdiagonal of the new columns relative to their norm (rounding: it is
/// set to zero).
pub fn extend_hessenberg(
    h: &mut DMatrix<f64>,
    j: usize,
    c: &DMatrix<f64>,
    r: &DMatrix<f64>,
    b: &DMatrix<f64>,
) -> f64 {
    let k = r.ncols();
    assert!(c.nrows() == j + 1 && c.ncols() == k && b.shape() == (k + 1, k));
    assert!(h.nrows() > j + k && h.ncols() >= j + k);
    let rows = j + 1 + k;
    let mut rp = DMatrix::zeros(rows, k + 1);
    rp[(j, 0)] = 1.0;
    for i in 1..=k {
        rp.view_mut((0, i), (j + 1, 1)).copy_from(&c.column(i - 1));
        rp.view_mut((j + 1, i), (k, 1)).copy_from(&r.column(i - 1));
    }
    let mut m = &rp * b;
    if j > 0 {
        let e = rp.view((0, 0), (j, k));
        let hprev = h.view((0, 0), (j + 1, j));
        let correction = hprev * e;
        let mut top = m.rows_mut(0, j + 1);
        top -= correction;
    }
    let t = rp.view((j, 0), (k, k)).into_owned();
    // X T = M  ⇔  Tᵀ Xᵀ = Mᵀ.
    let x = t
        .transpose()
        .solve_lower_triangular(&m.transpose())
        .expect("T has a unit first and a positive remaining diagonal")
        .transpose();
    let norm = x.norm();
    let mut below = 0.0f64;
    for col in 0..k {
        for row in 0..rows {
            if row > j + col + 1 {
                below = below.max(x[(row, col)].abs());
            } else {
                h[(row, j + col)] = x[(row, col)];
            }
        }
    }
    if norm > 0.0 { below / norm } else { 0.0 }
}

/// The least-squares problem min ‖β e₁ − H[:k+1, :k] y‖ by Givens rotations (H upper
/// Hessenberg), for every leading size at once: returns y for the full `k` and the residual
/// norms |g_{i+1}| after i = 1..=k columns (the per-step GMRES estimates).
pub fn least_squares(h: &DMatrix<f64>, k: usize, beta: f64) -> (Vec<f64>, Vec<f64>) {
    let mut r = h.view((0, 0), (k + 1, k)).into_owned();
    let mut g = vec![0.0; k + 1];
    g[0] = beta;
    let mut est = Vec::with_capacity(k);
    for i in 0..k {
        let (a, bb) = (r[(i, i)], r[(i + 1, i)]);
        let rho = a.hypot(bb);
        let (cs, sn) = if rho == 0.0 {
            (1.0, 0.0)
        } else {
            (a / rho, bb / rho)
        };
        for col in i..k {
            let (x, y) = (r[(i, col)], r[(i + 1, col)]);
            r[(i, col)] = cs * x + sn * y;
            r[(i + 1, col)] = -sn * x + cs * y;
        }
        let (x, y) = (g[i], g[i + 1]);
        g[i] = cs * x + sn * y;
        g[i + 1] = -sn * x + cs * y;
        est.push(g[i + 1].abs());
    }
    let mut y = vec![0.0; k];
    for i in (0..k).rev() {
        let mut s = g[i];
        for l in i + 1..k {
            s -= r[(i, l)] * y[l];
        }
        y[i] = if r[(i, i)] != 0.0 { s / r[(i, i)] } else { 0.0 };
    }
    (y, est)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_squares_matches_normal_equations() {
        let h = DMatrix::from_row_slice(
            4,
            3,
            &[2.0, 1.0, 0.5, 1.0, 3.0, 1.0, 0.0, 0.7, 2.5, 0.0, 0.0, 0.4],
        );
        let (y, est) = least_squares(&h, 3, 2.0);
        let mut rhs = nalgebra::DVector::zeros(4);
        rhs[0] = 2.0;
        let yn = (h.transpose() * &h)
            .lu()
            .solve(&(h.transpose() * &rhs))
            .unwrap();
        for i in 0..3 {
            assert!((y[i] - yn[i]).abs() < 1e-13, "{y:?} {yn:?}");
        }
        let res = (&rhs - &h * nalgebra::DVector::from_vec(y)).norm();
        assert!((res - est[2]).abs() < 1e-13);
        assert!(est.windows(2).all(|w| w[1] <= w[0] + 1e-15));
    }
}
