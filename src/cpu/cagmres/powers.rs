//! The matrix powers kernel (MPK, paper 002 §IV): from v, the s + 1 vectors
//! V = [v₀ = v, v₁, …, v_s] of a monomial (v_{k+1} = A v_k) or Newton
//! (v_{k+1} = (A − θ_k I) v_k) basis, with s SpMVs, and the (s+1) × s basis change matrix B
//! such that A·V[:, :s] = V·B.
//!
//! B is bidiagonal for real shifts: B_{k,k} = θ_k, B_{k+1,k} = 1 (θ = 0: monomial). A
//! complex-conjugate pair θ_k, θ_{k+1} = a ± ib runs in real arithmetic (Hoemmen's thesis
//! §7.3.2, cited by paper 002 §IV-A):
//!
//! * v_{k+1} = (A − aI) v_k,
//! * v_{k+2} = (A − aI) v_{k+1} + b² v_k  (= ((A − aI)² + b²I) v_k = (A − θI)(A − θ̄I) v_k),
//!
//! so A v_{k+1} = v_{k+2} + a v_{k+1} − b² v_k: column k+1 of B gets B_{k,k+1} = −b² above its
//! diagonal a.
//!
//! **Scaling.** Every new vector is divided by a fixed σ > 0 chosen on the host (an estimate
//! of ‖A‖ or of the spectral radius, so that the columns keep comparable norms without a
//! reduction per step): v_{k+1} = (A − θ_k) v_k / σ, and for a pair
//! v_{k+2} = ((A − aI) v_{k+1} + (b²/σ) v_k) / σ. Then B_{k+1,k} = σ and B_{k,k+1} = −b²/σ.
//! σ = 1 gives the unscaled bases above.
//!
//! ```
//! use krylov_wgpu::cpu::cagmres::powers::matrix_powers;
//! use krylov_wgpu::cpu::cagmres::leja::Shift;
//! use krylov_wgpu::matrix::generators::poisson_2d_fd;
//! let a = poisson_2d_fd::<f64>(6);
//! let v = vec![1.0; a.nrows()];
//! let mp = matrix_powers(&a, &v, 3, &[Shift::real(4.0), Shift::real(1.0)], 1.0)?;
//! // A·V[:, :3] = V·B
//! let av = krylov_wgpu::cpu::cagmres::powers::apply_to_columns(&a, &mp.v.columns(0, 3).into_owned());
//! assert!((av - &mp.v * &mp.b).norm() < 1e-12 * mp.v.norm());
//! assert_eq!(mp.b[(2, 2)], 4.0); // the shifts are reused cyclically
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use nalgebra::{DMatrix, DVector};

use super::leja::Shift;
use crate::base::error::{KrylovError, Result};
use crate::matrix::Csr;

/// The basis vectors and the basis change matrix of one matrix-powers call.
#[derive(Debug, Clone)]
pub struct Powers {
    /// n × (steps + 1): v₀ = the start vector, then one new vector per SpMV.
    pub v: DMatrix<f64>,
    /// (steps + 1) × steps with A·V[:, :steps] = V·B.
    pub b: DMatrix<f64>,
}

/// Checks a shift sequence for cyclic use: every Im > 0 entry is followed by its conjugate,
/// every Im < 0 entry preceded by it, and the sequence does not end inside a pair.
pub fn check_shifts(shifts: &[Shift]) -> Result<()> {
    for (k, z) in shifts.iter().enumerate() {
        if !z.re.is_finite() || !z.im.is_finite() {
            return Err(KrylovError::NonFinite {
                what: "Newton shifts",
                index: k,
            });
        }
        let pair_ok = |o: Option<&Shift>| o.is_some_and(|o| o.re == z.re && o.im == -z.im);
        let ok = if z.im > 0.0 {
            pair_ok(shifts.get(k + 1))
        } else if z.im < 0.0 {
            k > 0 && pair_ok(shifts.get(k - 1))
        } else {
            true
        };
        if !ok {
            return Err(KrylovError::InvalidOption(format!(
                "Newton shift {k} ({} {:+}i) is not part of a consecutive conjugate pair \
                 (a + ib, a - ib)",
                z.re, z.im
            )));
        }
    }
    Ok(())
}

/// y = A x for each column of `x`.
pub fn apply_to_columns(a: &Csr<f64>, x: &DMatrix<f64>) -> DMatrix<f64> {
    let mut y = DMatrix::zeros(a.nrows(), x.ncols());
    for j in 0..x.ncols() {
        let col: Vec<f64> = x.column(j).iter().copied().collect();
        let ax = a.mul_vec(&col).expect("sizes checked by the caller");
        y.set_column(j, &DVector::from_vec(ax));
    }
    y
}

/// `steps` SpMVs from `v`: the monomial basis for `shifts` empty, else the Newton basis with
/// θ_k = `shifts[k % shifts.len()]` (checked by [`check_shifts`]; a pair whose second half
/// falls past `steps` simply ends after its first, real, step), each new vector divided by
/// `sigma` (see the module docs). Errors: A not square, `v`'s length, a bad shift sequence,
/// σ not finite and positive.
pub fn matrix_powers(
    a: &Csr<f64>,
    v: &[f64],
    steps: usize,
    shifts: &[Shift],
    sigma: f64,
) -> Result<Powers> {
    a.require_square()?;
    matrix_powers_with(
        a.nrows(),
        |x, y| a.mul_vec_into(x, y).map(|_| ()),
        v,
        steps,
        shifts,
        sigma,
    )
}

/// [`matrix_powers`] of any operator `op` (y = op(x)) of order `n`: right-preconditioned
/// CA-GMRES runs it on A·M⁻¹.
pub fn matrix_powers_with(
    n: usize,
    mut op: impl FnMut(&[f64], &mut [f64]) -> Result<()>,
    v: &[f64],
    steps: usize,
    shifts: &[Shift],
    sigma: f64,
) -> Result<Powers> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(KrylovError::InvalidOption(format!(
            "matrix powers scaling must be finite and positive, got {sigma}"
        )));
    }
    if v.len() != n {
        return Err(KrylovError::DimensionMismatch {
            what: "matrix powers start vector vs matrix rows",
            expected: n,
            found: v.len(),
        });
    }
    check_shifts(shifts)?;
    let mut basis = DMatrix::zeros(n, steps + 1);
    let mut b = DMatrix::zeros(steps + 1, steps);
    basis.set_column(0, &DVector::from_column_slice(v));
    let mut prev = v.to_vec();
    let mut next = vec![0.0; n];
    for k in 0..steps {
        let z = if shifts.is_empty() {
            Shift::real(0.0)
        } else {
            shifts[k % shifts.len()]
        };
        op(&prev, &mut next)?;
        for (y, &x) in next.iter_mut().zip(&prev) {
            *y -= z.re * x;
        }
        b[(k, k)] = z.re;
        b[(k + 1, k)] = sigma;
        if z.im < 0.0 {
            // Second half of a pair: + (b²/σ) v_{k−1}. A sequence reused cyclically starts a
            // call at a pair's first half (check_shifts), so k ≥ 1 here.
            let b2 = z.im * z.im / sigma;
            for (y, &x) in next.iter_mut().zip(basis.column(k - 1).iter()) {
                *y += b2 * x;
            }
            b[(k - 1, k)] = -b2;
        }
        if sigma != 1.0 {
            next.iter_mut().for_each(|y| *y /= sigma);
        }
        basis.set_column(k + 1, &DVector::from_column_slice(&next));
        std::mem::swap(&mut prev, &mut next);
    }
    Ok(Powers { v: basis, b })
}

/// The shift of step k: θ_k = `shifts[k % len]`, 0 for the monomial basis.
fn shift_at(shifts: &[Shift], k: usize) -> Shift {
    if shifts.is_empty() {
        Shift::real(0.0)
    } else {
        shifts[k % shifts.len()]
    }
}

/// The basis change matrix B ((steps + 1) × steps) of [`matrix_powers`] with the same
/// arguments: it depends on the shifts and σ only, so the GPU's matrix powers (which never
/// bring the vectors to the host) take it from here.
pub fn basis_change(steps: usize, shifts: &[Shift], sigma: f64) -> DMatrix<f64> {
    let mut b = DMatrix::zeros(steps + 1, steps);
    for k in 0..steps {
        let z = shift_at(shifts, k);
        b[(k, k)] = z.re;
        b[(k + 1, k)] = sigma;
        if z.im < 0.0 && k >= 1 {
            b[(k - 1, k)] = -(z.im * z.im / sigma);
        }
    }
    b
}

/// The coefficients (c_A, c_s, c_p) of each step of [`matrix_powers`]:
/// v_{k+1} = c_A·A v_k + c_s·v_k + c_p·v_{k−1}, i.e. (1/σ, −Re θ_k/σ, 0), and c_p = (Im θ_k)²/σ²
/// on the second half of a conjugate pair; 3·steps values, step by step (what the GPU's
/// `ca_powers` reads).
pub fn step_coefficients(steps: usize, shifts: &[Shift], sigma: f64) -> Vec<f64> {
    let mut c = Vec::with_capacity(3 * steps);
    for k in 0..steps {
        let z = shift_at(shifts, k);
        let pair = if z.im < 0.0 && k >= 1 {
            z.im * z.im / (sigma * sigma)
        } else {
            0.0
        };
        c.extend_from_slice(&[1.0 / sigma, -z.re / sigma, pair]);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::generators::random_nonsymmetric;

    #[test]
    fn basis_change_is_the_one_matrix_powers_builds() {
        let a = random_nonsymmetric::<f64>(40, 5, 7);
        let v: Vec<f64> = (0..40).map(|i| (i as f64 * 0.7).cos()).collect();
        let shifts = [
            Shift::real(2.0),
            Shift { re: 1.0, im: 0.5 },
            Shift { re: 1.0, im: -0.5 },
        ];
        for (sh, sigma) in [(&shifts[..], 3.0), (&[][..], 2.0), (&shifts[..], 1.0)] {
            for steps in 1..=5 {
                let p = matrix_powers(&a, &v, steps, sh, sigma).unwrap();
                assert_eq!(p.b, basis_change(steps, sh, sigma), "{steps} {sigma}");
                // The coefficients rebuild the vectors.
                let c = step_coefficients(steps, sh, sigma);
                for k in 0..steps {
                    let vk: Vec<f64> = p.v.column(k).iter().copied().collect();
                    let av = a.mul_vec(&vk).unwrap();
                    for i in 0..40 {
                        let prev = if k >= 1 { p.v[(i, k - 1)] } else { 0.0 };
                        let want = c[3 * k] * av[i] + c[3 * k + 1] * vk[i] + c[3 * k + 2] * prev;
                        assert!((want - p.v[(i, k + 1)]).abs() <= 1e-12 * (1.0 + want.abs()));
                    }
                }
            }
        }
    }

    fn residual(a: &Csr<f64>, p: &Powers) -> f64 {
        let s = p.b.ncols();
        let av = apply_to_columns(a, &p.v.columns(0, s).into_owned());
        (av - &p.v * &p.b).norm() / p.v.norm()
    }

    #[test]
    fn monomial_is_repeated_spmv() {
        let a = random_nonsymmetric::<f64>(50, 5, 3);
        let v: Vec<f64> = (0..50).map(|i| (i as f64 * 0.3).sin()).collect();
        let p = matrix_powers(&a, &v, 4, &[], 1.0).unwrap();
        let mut x = v.clone();
        for k in 1..=4 {
            x = a.mul_vec(&x).unwrap();
            let col: Vec<f64> = p.v.column(k).iter().copied().collect();
            assert_eq!(col, x, "column {k}");
        }
        assert!(residual(&a, &p) < 1e-15);
    }

    #[test]
    fn newton_with_a_pair_is_the_product_of_shifted_spmvs() {
        let a = random_nonsymmetric::<f64>(60, 5, 9);
        let v: Vec<f64> = (0..60).map(|i| 1.0 + (i as f64 * 0.7).cos()).collect();
        let shifts = [
            Shift::real(0.5),
            Shift { re: 1.5, im: 0.75 },
            Shift { re: 1.5, im: -0.75 },
        ];
        let scaled = matrix_powers(&a, &v, 6, &shifts, 3.0).unwrap();
        assert!(residual(&a, &scaled) < 1e-14, "{}", residual(&a, &scaled));
        let p = matrix_powers(&a, &v, 6, &shifts, 1.0).unwrap();
        assert!(residual(&a, &p) < 1e-14, "{}", residual(&a, &p));
        // Scaling divides column k by σ^k.
        let d = (p.v.column(5) / 243.0 - scaled.v.column(5)).amax();
        assert!(d < 1e-14 * p.v.column(5).amax() / 243.0, "{d:e}");
        // Column 3 = ((A − 1.5)² + 0.75²)(A − 0.5) v by explicit SpMVs.
        let shifted = |x: &[f64], t: f64| -> Vec<f64> {
            let ax = a.mul_vec(x).unwrap();
            ax.iter().zip(x).map(|(y, x)| y - t * x).collect()
        };
        let v1 = shifted(&v, 0.5);
        let w = shifted(&shifted(&v1, 1.5), 1.5);
        let v3: Vec<f64> = w.iter().zip(&v1).map(|(w, v)| w + 0.5625 * v).collect();
        let err = v3
            .iter()
            .zip(p.v.column(3).iter())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-12 * p.v.column(3).amax(), "{err}");
        assert_eq!(p.b[(1, 2)], -0.5625);
        assert_eq!(p.b[(4, 5)], -0.5625); // the cycle repeats: shifts 3..5 = 0..2
    }

    #[test]
    fn bad_shifts_and_sizes_are_errors() {
        let a = random_nonsymmetric::<f64>(10, 3, 1);
        let v = vec![1.0; 10];
        assert!(matrix_powers(&a, &v, 2, &[Shift { re: 1.0, im: 1.0 }], 1.0).is_err());
        assert!(
            matrix_powers(
                &a,
                &v,
                2,
                &[Shift { re: 1.0, im: -1.0 }, Shift::real(0.0)],
                1.0
            )
            .is_err()
        );
        assert!(matrix_powers(&a, &v[..9], 2, &[], 1.0).is_err());
        assert!(matrix_powers(&a, &v, 2, &[Shift::real(f64::NAN)], 1.0).is_err());
        assert!(matrix_powers(&a, &v, 2, &[], 0.0).is_err());
    }
}
