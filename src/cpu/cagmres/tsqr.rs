//! Tall-skinny QR (TSQR) of a block W (n × s, n ≫ s) and the block orthogonalisation BOrth of
//! CA-GMRES (paper 002 §V, Fig. 9–10), in f64 on the host: the oracle for the GPU kernels.
//!
//! Every variant returns W = Q R with Q (n × s) orthonormal up to its rounding and R (s × s)
//! upper triangular with a non-negative diagonal (rows of R and columns of Q are sign-flipped
//! so that R_kk ≥ 0, as Cholesky gives it). The orthogonality errors ‖I − QᵀQ‖ the paper
//! quotes (κ = cond(W)): MGS O(εκ), CGS O(εκ^(s−1)) in the worst case, CholQR and SVQR
//! O(εκ²), CholQR2 and CAQR O(ε) (CholQR2 as long as CholQR does not fail, κ ≲ ε^(−1/2)).
//!
//! Counts for a block of s columns (a "reduction" is one global all-reduce of a batch of
//! inner products, a "host sync" one round trip whose result the host must wait for):
//!
//! | variant | reductions | host syncs |
//! |---|---|---|
//! | MGS | s(s+1)/2 | 0 |
//! | CGS | 2s − 1 | 0 |
//! | CGS2 | 3s − 2 | 0 |
//! | CholQR, SVQR, CAQR | 1 | 1 |
//! | CholQR2 | 2 | 2 |
//!
//! **Fallback**: CholQR's Cholesky of the Gram matrix G = WᵀW fails when a pivot loses all
//! its digits (pivot ≤ (s + √n)·ε·G_kk, W numerically rank deficient). CholQR2
//! starts with the same factorisation, so the chain CholQR → CholQR2 → SVQR ends at SVQR on
//! the same Gram matrix (no extra reduction); a CholQR2 whose first pass fell back keeps its
//! second, CholQR, pass on the SVQR factor's Q. The [`TsqrReport`] says what ran and why.
//!
//! ```
//! use krylov_wgpu::cpu::cagmres::tsqr::{Tsqr, tsqr};
//! use nalgebra::DMatrix;
//! let w = DMatrix::from_fn(100, 3, |i, j| ((i + 1) as f64 * (j + 1) as f64 * 0.1).cos());
//! let qr = tsqr(&w, Tsqr::CholQr2)?;
//! assert!(qr.report.orth_error < 1e-14);
//! assert!((&qr.q * &qr.r - &w).norm() < 1e-12 * w.norm());
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use nalgebra::{DMatrix, SymmetricEigen};

use crate::base::error::{KrylovError, Result};

pub use crate::base::ca::{Tsqr, TsqrReport};

/// W = Q R with its report.
#[derive(Debug, Clone)]
pub struct Qr {
    pub q: DMatrix<f64>,
    pub r: DMatrix<f64>,
    pub report: TsqrReport,
}

/// ‖I − QᵀQ‖_F.
pub fn orth_error(q: &DMatrix<f64>) -> f64 {
    let g = q.transpose() * q;
    (DMatrix::identity(g.nrows(), g.ncols()) - g).norm()
}

/// The TSQR of `w` (n × s, s ≤ n) with `method`. Errors: s > n (`DimensionMismatch`), a
/// non-finite entry of W (`NonFinite`). A (numerically) rank-deficient W is not an error: R
/// then has a (near) zero diagonal entry, which the caller tests.
pub fn tsqr(w: &DMatrix<f64>, method: Tsqr) -> Result<Qr> {
    let (n, s) = w.shape();
    if s > n {
        return Err(KrylovError::DimensionMismatch {
            what: "TSQR block columns vs rows (s <= n)",
            expected: n,
            found: s,
        });
    }
    if let Some(index) = w.iter().position(|v| !v.is_finite()) {
        return Err(KrylovError::NonFinite {
            what: "TSQR block",
            index,
        });
    }
    let mut fallback_reason = None;
    let mut used = method;
    let (mut q, mut r) = match method {
        Tsqr::Mgs => gram_schmidt(w, 0),
        Tsqr::Cgs => gram_schmidt(w, 1),
        Tsqr::Cgs2 => gram_schmidt(w, 2),
        Tsqr::Svqr => svqr(w, &(w.transpose() * w)),
        Tsqr::Caqr => caqr(w),
        Tsqr::CholQr | Tsqr::CholQr2 => {
            let g = w.transpose() * w;
            let (q1, r1) = match cholesky(&g, n) {
                Ok(r1) => (solve_right_upper(w, &r1), r1),
                Err(why) => {
                    used = Tsqr::Svqr;
                    fallback_reason = Some(format!(
                        "{why}: W is numerically rank deficient; CholQR2 starts with the same \
                         factorisation, so SVQR of the same Gram matrix"
                    ));
                    svqr(w, &g)
                }
            };
            if method == Tsqr::CholQr {
                (q1, r1)
            } else {
                let g2 = q1.transpose() * &q1;
                let (q2, r2) = match cholesky(&g2, n) {
                    Ok(r2) => (solve_right_upper(&q1, &r2), r2),
                    Err(why) => {
                        used = Tsqr::Svqr;
                        let before = fallback_reason.take().map_or(String::new(), |s| s + "; ");
                        fallback_reason = Some(format!("{before}second pass: {why}: SVQR"));
                        svqr(&q1, &g2)
                    }
                };
                (q2, r2 * r1)
            }
        }
    };
    positive_diagonal(&mut q, &mut r);
    let report = TsqrReport {
        requested: method,
        used,
        fallback_reason,
        orth_error: orth_error(&q),
        reductions: method.reductions(s),
        host_syncs: method.host_syncs(),
    };
    Ok(Qr { q, r, report })
}

/// Flips rows of R and columns of Q so that R_kk ≥ 0 (QR stays the same product).
pub fn positive_diagonal(q: &mut DMatrix<f64>, r: &mut DMatrix<f64>) {
    for k in 0..r.nrows() {
        if r[(k, k)] < 0.0 {
            r.row_mut(k).neg_mut();
            q.column_mut(k).neg_mut();
        }
    }
}

/// Column-wise Gram–Schmidt: `passes` = 0 for MGS, 1 for CGS, 2 for CGS2. A column that
/// vanishes gets R_kk = 0 and a zero Q column.
fn gram_schmidt(w: &DMatrix<f64>, passes: usize) -> (DMatrix<f64>, DMatrix<f64>) {
    let (n, s) = w.shape();
    let mut q = DMatrix::zeros(n, s);
    let mut r = DMatrix::zeros(s, s);
    for k in 0..s {
        let mut v = w.column(k).into_owned();
        if passes == 0 {
            for j in 0..k {
                let h = q.column(j).dot(&v);
                r[(j, k)] += h;
                v.axpy(-h, &q.column(j), 1.0);
            }
        } else {
            for _ in 0..passes {
                let prev = q.columns(0, k);
                let h = prev.transpose() * &v;
                v -= prev * &h;
                for j in 0..k {
                    r[(j, k)] += h[j];
                }
            }
        }
        let norm = v.norm();
        r[(k, k)] = norm;
        if norm > 0.0 {
            q.set_column(k, &(v / norm));
        }
    }
    (q, r)
}

/// The upper Cholesky factor R (RᵀR = G) of the Gram matrix of n-vectors, or why it failed:
/// a pivot that is not finite or not above (s + √n)·ε·G_kk, the rounding level of the Gram
/// entries themselves (the column lost all its digits to the previous ones).
pub fn cholesky(g: &DMatrix<f64>, n: usize) -> std::result::Result<DMatrix<f64>, String> {
    let s = g.nrows();
    let mut r = DMatrix::zeros(s, s);
    for k in 0..s {
        let mut d = g[(k, k)];
        for l in 0..k {
            d -= r[(l, k)] * r[(l, k)];
        }
        let tol = (s as f64 + (n as f64).sqrt()) * f64::EPSILON * g[(k, k)].abs();
        if !d.is_finite() || d <= tol {
            return Err(format!(
                "Cholesky of the Gram matrix failed at column {k} (pivot {d:.3e} <= {tol:.3e})"
            ));
        }
        let rkk = d.sqrt();
        r[(k, k)] = rkk;
        for j in k + 1..s {
            let mut v = g[(k, j)];
            for l in 0..k {
                v -= r[(l, k)] * r[(l, j)];
            }
            r[(k, j)] = v / rkk;
        }
    }
    Ok(r)
}

/// W R⁻¹ for an upper triangular R (zero diagonal entries give zero columns).
fn solve_right_upper(w: &DMatrix<f64>, r: &DMatrix<f64>) -> DMatrix<f64> {
    let (n, s) = w.shape();
    let mut q = DMatrix::zeros(n, s);
    for k in 0..s {
        let mut v = w.column(k).into_owned();
        for j in 0..k {
            v.axpy(-r[(j, k)], &q.column(j), 1.0);
        }
        if r[(k, k)] != 0.0 {
            q.set_column(k, &(v / r[(k, k)]));
        }
    }
    q
}

/// The R factor of SVQR from the Gram matrix `g` = WᵀW alone (see `svqr`'s steps; non-
/// negative diagonal): what the GPU's SVQR computes on the host after its one reduction.
pub fn svqr_r(g: &DMatrix<f64>) -> DMatrix<f64> {
    let s = g.nrows();
    let d: Vec<f64> = (0..s)
        .map(|k| {
            let gkk = g[(k, k)];
            if gkk > 0.0 { 1.0 / gkk.sqrt() } else { 0.0 }
        })
        .collect();
    let scaled = DMatrix::from_fn(s, s, |i, j| d[i] * g[(i, j)] * d[j]);
    let eig = SymmetricEigen::new(scaled);
    let lmax = eig.eigenvalues.iter().fold(0.0f64, |m, &l| m.max(l));
    let floor = f64::EPSILON * lmax;
    let mut m = eig.eigenvectors.transpose();
    for (i, &l) in eig.eigenvalues.iter().enumerate() {
        let sigma = l.max(floor).sqrt();
        m.row_mut(i).scale_mut(sigma);
    }
    let mut r = m.qr().r();
    for (j, &dj) in d.iter().enumerate() {
        if dj > 0.0 {
            r.column_mut(j).scale_mut(1.0 / dj);
        } else {
            r.column_mut(j).fill(0.0);
        }
    }
    for k in 0..s {
        if r[(k, k)] < 0.0 {
            r.row_mut(k).neg_mut();
        }
    }
    r
}

/// T with W·T = W R⁻¹ as `solve_right_upper` forms it, column by column: T e_k =
/// (e_k − Σ_{j<k} R_jk T e_j)/R_kk, a zero column where R_kk = 0 (upper triangular). The GPU
/// applies Q = W·T in one launch.
pub fn right_upper_inverse(r: &DMatrix<f64>) -> DMatrix<f64> {
    let s = r.nrows();
    let mut t = DMatrix::zeros(s, s);
    for k in 0..s {
        if r[(k, k)] == 0.0 {
            continue;
        }
        let mut col = DMatrix::<f64>::zeros(s, 1);
        col[(k, 0)] = 1.0;
        for j in 0..k {
            let rjk = r[(j, k)];
            if rjk != 0.0 {
                for i in 0..s {
                    col[(i, 0)] -= rjk * t[(i, j)];
                }
            }
        }
        for i in 0..s {
            t[(i, k)] = col[(i, 0)] / r[(k, k)];
        }
    }
    t
}

/// SVQR on the Gram matrix `g` = WᵀW (paper 002 §V-D): scaled to a unit diagonal
/// (G' = D G D, D = diag(G)^−½), G' = U Λ Uᵀ with Λ clamped at ε·λ_max (below that the
/// eigenvalues are rounding noise), R' = the R of the QR of Λ^½ Uᵀ, R = R' D⁻¹, Q = W R⁻¹.
fn svqr(w: &DMatrix<f64>, g: &DMatrix<f64>) -> (DMatrix<f64>, DMatrix<f64>) {
    let r = svqr_r(g);
    (solve_right_upper(w, &r), r)
}

/// Rows of a leaf of the CAQR tree (a block with fewer than 2·max(s, LEAF_ROWS) rows is
/// factored by one Householder QR).
pub const LEAF_ROWS: usize = 256;

/// CAQR/TSQR: a binary tree of Householder QRs over row blocks. W = [W₁; W₂] with
/// W_i = Q_i R_i, then [R₁; R₂] = Q̂ R, Q = diag(Q₁, Q₂) Q̂.
fn caqr(w: &DMatrix<f64>) -> (DMatrix<f64>, DMatrix<f64>) {
    let (n, s) = w.shape();
    let leaf = LEAF_ROWS.max(s);
    if n < 2 * leaf {
        let qr = w.clone().qr();
        return (qr.q(), qr.r());
    }
    let top = n / 2;
    let (q1, r1) = caqr(&w.rows(0, top).into_owned());
    let (q2, r2) = caqr(&w.rows(top, n - top).into_owned());
    let mut stacked = DMatrix::zeros(2 * s, s);
    stacked.rows_mut(0, s).copy_from(&r1);
    stacked.rows_mut(s, s).copy_from(&r2);
    let qr = stacked.qr();
    let (qh, r) = (qr.q(), qr.r());
    let mut q = DMatrix::zeros(n, s);
    q.rows_mut(0, top).copy_from(&(q1 * qh.rows(0, s)));
    q.rows_mut(top, n - top).copy_from(&(q2 * qh.rows(s, s)));
    (q, r)
}

/// The result of [`borth`]: W = Q_prev C + Q R.
#[derive(Debug, Clone)]
pub struct BlockOrth {
    /// Projection coefficients on the previous basis, (j+1) × s (both passes summed).
    pub c: DMatrix<f64>,
    /// The TSQR of the remainder.
    pub qr: Qr,
    /// Global reductions: 2 (the two block projections) + the TSQR's.
    pub reductions: usize,
}

/// Whether [`borth`] runs its second projection and CholQR's first Gram matrix as one
/// reduction (CholQR and CholQR2).
pub fn fuses_second_pass(method: Tsqr) -> bool {
    matches!(method, Tsqr::CholQr | Tsqr::CholQr2)
}

/// Global reductions of one [`borth`] of s columns: the two projections and the TSQR's, one
/// fewer where the second projection shares its reduction with CholQR
/// ([`fuses_second_pass`]).
pub fn borth_reductions(method: Tsqr, s: usize) -> usize {
    2 + method.reductions(s) - usize::from(fuses_second_pass(method))
}

/// BOrth + TSQR (paper 002 Fig. 2): block classical Gram–Schmidt of `w` against the
/// orthonormal columns of `prev` with one re-orthogonalisation pass (C = C₁ + C₂,
/// C_i = Q_prevᵀ W, W ← W − Q_prev C_i: two reductions), then the TSQR of the remainder.
///
/// With CholQR and CholQR2 the second pass and CholQR's first Gram matrix are one reduction,
/// [Q_prev, W]ᵀW after the first pass, and the Gram matrix of W − Q_prev C₂ is
/// WᵀW − C₂ᵀC₂ (Pythagoras: Q_prev orthonormal; C₂ is at the rounding level against W after
/// the first pass, so the difference loses nothing) — what the GPU's deferred cycles do
/// (`ca_cholqr`'s CA_FLAG_PIP). A Cholesky that fails there falls back to the unfused
/// second pass and the TSQR's own fallbacks.
pub fn borth(prev: &DMatrix<f64>, w: &DMatrix<f64>, method: Tsqr) -> Result<BlockOrth> {
    if prev.nrows() != w.nrows() {
        return Err(KrylovError::DimensionMismatch {
            what: "BOrth block rows vs basis rows",
            expected: prev.nrows(),
            found: w.nrows(),
        });
    }
    let c1 = prev.transpose() * w;
    let mut rem = w - prev * &c1;
    if fuses_second_pass(method)
        && rem.iter().all(|v| v.is_finite())
        && let Some(fused) = borth_second_pass_cholqr(prev, &rem, &c1, method)
    {
        return Ok(fused);
    }
    let c2 = prev.transpose() * &rem;
    rem -= prev * &c2;
    let qr = tsqr(&rem, method)?;
    let reductions = 2 + qr.report.reductions;
    Ok(BlockOrth {
        c: c1 + c2,
        qr,
        reductions,
    })
}

/// [`borth`]'s second pass fused with CholQR (and CholQR2's second factorisation after it);
/// `None` when the fused Gram matrix is not positive definite.
fn borth_second_pass_cholqr(
    prev: &DMatrix<f64>,
    rem: &DMatrix<f64>,
    c1: &DMatrix<f64>,
    method: Tsqr,
) -> Option<BlockOrth> {
    let (n, s) = rem.shape();
    // One reduction: C₂ = Q_prevᵀW and WᵀW.
    let c2 = prev.transpose() * rem;
    let g = rem.transpose() * rem - c2.transpose() * &c2;
    let r1 = cholesky(&g, n).ok()?;
    let q1 = solve_right_upper(&(rem - prev * &c2), &r1);
    let (mut used, mut fallback_reason) = (method, None);
    let (mut q, mut r) = if method == Tsqr::CholQr2 {
        let g2 = q1.transpose() * &q1;
        match cholesky(&g2, n) {
            Ok(r2) => (solve_right_upper(&q1, &r2), r2 * &r1),
            Err(why) => {
                used = Tsqr::Svqr;
                fallback_reason = Some(format!("second pass: {why}: SVQR"));
                let (q2, r2) = svqr(&q1, &g2);
                (q2, r2 * &r1)
            }
        }
    } else {
        (q1, r1)
    };
    positive_diagonal(&mut q, &mut r);
    let report = TsqrReport {
        requested: method,
        used,
        fallback_reason,
        orth_error: orth_error(&q),
        reductions: method.reductions(s) - 1,
        host_syncs: method.host_syncs(),
    };
    Some(BlockOrth {
        c: c1 + c2,
        qr: Qr { q, r, report },
        reductions: borth_reductions(method, s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(n: usize, s: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, s, |i, j| {
            ((i * 7 + j * 13) % 11) as f64 + (i as f64 * 0.1).sin()
        })
    }

    #[test]
    fn every_variant_reproduces_w_with_positive_diagonal() {
        for n in [5, 300, 1100] {
            let w = block(n, 5);
            for t in Tsqr::ALL {
                let qr = tsqr(&w, t).unwrap();
                assert!(
                    (&qr.q * &qr.r - &w).norm() <= 1e-13 * w.norm(),
                    "{t:?} n={n}"
                );
                assert!(
                    qr.report.orth_error < 1e-12,
                    "{t:?} {}",
                    qr.report.orth_error
                );
                assert!((0..5).all(|k| qr.r[(k, k)] > 0.0), "{t:?}");
                assert!((0..5).all(|k| (0..k).all(|j| qr.r[(k, j)] == 0.0)), "{t:?}");
                assert_eq!(qr.report.used, t);
            }
        }
    }

    #[test]
    fn right_upper_inverse_forms_w_r_inverse() {
        let w = block(60, 4);
        let qr = tsqr(&w, Tsqr::CholQr).unwrap();
        let t = right_upper_inverse(&qr.r);
        assert!((&w * &t - &qr.q).norm() < 1e-12 * qr.q.norm());
        let mut r = qr.r.clone();
        r[(2, 2)] = 0.0;
        let t = right_upper_inverse(&r);
        assert!((&w * &t - solve_right_upper(&w, &r)).norm() < 1e-12 * w.norm());
        assert!(t.column(2).iter().all(|&v| v == 0.0));
    }

    #[test]
    fn bad_blocks_are_errors() {
        assert!(tsqr(&DMatrix::zeros(2, 3), Tsqr::Mgs).is_err());
        let mut w = block(10, 2);
        w[(3, 1)] = f64::NAN;
        for t in Tsqr::ALL {
            assert!(matches!(tsqr(&w, t), Err(KrylovError::NonFinite { .. })));
        }
    }

    #[test]
    fn borth_projects_out_the_previous_basis() {
        let prev = tsqr(&block(200, 4), Tsqr::Caqr).unwrap().q;
        let w = DMatrix::from_fn(200, 3, |i, j| {
            ((i + 1) as f64 * (j + 1) as f64 * 0.37).cos()
        });
        let bo = borth(&prev, &w, Tsqr::CholQr2).unwrap();
        let cross = (prev.transpose() * &bo.qr.q).norm();
        assert!(cross < 1e-14, "{cross:e}");
        let back = &prev * &bo.c + &bo.qr.q * &bo.qr.r;
        assert!((back - &w).norm() < 1e-13 * w.norm());
        // The two projections and CholQR2's two Gram matrices, the first with the second
        // projection (fused).
        assert_eq!(bo.reductions, 3);
        assert_eq!(bo.qr.report.used, Tsqr::CholQr2);
        // Unfused (CGS2 as the TSQR) the same block is orthogonal to the same precision.
        let cgs2 = borth(&prev, &w, Tsqr::Cgs2).unwrap();
        assert!((prev.transpose() * &cgs2.qr.q).norm() < 1e-14);
        assert!((&cgs2.c - &bo.c).norm() < 1e-12 * bo.c.norm());
    }

    #[test]
    fn the_fused_second_pass_falls_back_when_its_gram_matrix_is_not_positive_definite() {
        // W with two equal columns: WᵀW − C₂ᵀC₂ is singular, its Cholesky fails, and BOrth
        // takes the unfused second pass and the TSQR's own fallback (SVQR), counting both
        // reductions.
        let prev = tsqr(&block(200, 4), Tsqr::Caqr).unwrap().q;
        let w = DMatrix::from_fn(200, 3, |i, j| {
            ((i + 1) as f64 * (j.min(1) + 1) as f64 * 0.37).cos()
        });
        let bo = borth(&prev, &w, Tsqr::CholQr2).unwrap();
        assert_eq!(bo.qr.report.used, Tsqr::Svqr);
        assert_eq!(bo.reductions, 4);
        assert!(bo.qr.report.fallback_reason.is_some());
    }
}
