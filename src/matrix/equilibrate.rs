//! Row and column balancing (`--equilibrate`, paper 002's balancing): D_r·A·D_c with every
//! row and then every column scaled by the inverse of its largest magnitude, the two passes
//! iterated, so that entries of very different scales (rows in different physical units,
//! a badly scaled unknown) stop dominating the Krylov method's inner products. The scales are
//! powers of two, so scaling is exact. The solve runs on (D_r·A·D_c) y = D_r·b and returns
//! x = D_c·y ([`solve_equilibrated`]): the method's residual is D_r·r, not r, so the true
//! residual of the original system is recomputed and, when it misses the tolerance the
//! balanced one met, the solve resumes from y with a tighter tolerance (at most
//! [`MAX_TIGHTENINGS`] times) — convergence is claimed only for A x = b itself.
//!
//! ```
//! use krylov_wgpu::matrix::{Csr, equilibrate::balance};
//! // Row 1 in different units: 1e6 times row 0.
//! let a = Csr::<f64>::from_triplets(2, &[(0, 0, 2.0), (0, 1, 1.0), (1, 0, 3e6), (1, 1, 4e6)])?;
//! let s = balance(&a);
//! let b = s.apply(&a);
//! for i in 0..2 {
//!     let m = b.row(i).1.iter().fold(0.0f64, |m, v| m.max(v.abs()));
//!     assert!(m > 0.25 && m <= 1.0, "row {i}: {m}");
//! }
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use crate::base::error::Result;
use crate::base::options::SolveOptions;
use crate::base::report::Solution;
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// Row-then-column passes of [`balance`].
pub const SWEEPS: usize = 5;

/// The most times [`solve_equilibrated`] tightens the tolerance of the balanced system when
/// the original one's true residual misses.
pub const MAX_TIGHTENINGS: usize = 3;

/// The scales of a balanced matrix: D_r·A·D_c.
#[derive(Debug, Clone, PartialEq)]
pub struct Balance {
    /// D_r (powers of two).
    pub rows: Vec<f64>,
    /// D_c (powers of two).
    pub cols: Vec<f64>,
}

/// The power of two nearest to 1/m (1 for m = 0 or not finite).
fn inverse_pow2(m: f64) -> f64 {
    if m > 0.0 && m.is_finite() {
        2f64.powi(-(m.log2().round() as i32))
    } else {
        1.0
    }
}

/// Balances `a`: [`SWEEPS`] times, rows scaled by the inverse of their largest |entry|, then
/// columns likewise (the scales accumulate).
pub fn balance<T: Scalar>(a: &Csr<T>) -> Balance {
    let (n, m) = (a.nrows(), a.ncols());
    let (mut rows, mut cols) = (vec![1.0f64; n], vec![1.0f64; m]);
    for _ in 0..SWEEPS {
        for (i, r) in rows.iter_mut().enumerate() {
            let (c, v) = a.row(i);
            let max = c
                .iter()
                .zip(v)
                .map(|(&j, v)| (*r * v.as_f64() * cols[j as usize]).abs())
                .fold(0.0, f64::max);
            *r *= inverse_pow2(max);
        }
        let mut cmax = vec![0.0f64; m];
        for (i, r) in rows.iter().enumerate() {
            let (c, v) = a.row(i);
            for (&j, v) in c.iter().zip(v) {
                let j = j as usize;
                cmax[j] = cmax[j].max((r * v.as_f64() * cols[j]).abs());
            }
        }
        for (c, m) in cols.iter_mut().zip(cmax) {
            *c *= inverse_pow2(m);
        }
    }
    Balance { rows, cols }
}

/// Symmetric balancing D·A·D for CG (which needs the balanced matrix symmetric positive
/// definite): [`SWEEPS`] Ruiz sweeps, each scaling unknown i by the power of two nearest to
/// 1/√(max_j |(D·A·D)_ij|).
pub fn balance_symmetric<T: Scalar>(a: &Csr<T>) -> Balance {
    let n = a.nrows();
    let mut d = vec![1.0f64; n];
    for _ in 0..SWEEPS {
        let f: Vec<f64> = (0..n)
            .map(|i| {
                let (c, v) = a.row(i);
                let max = c
                    .iter()
                    .zip(v)
                    .map(|(&j, v)| (d[i] * v.as_f64() * d[j as usize]).abs())
                    .fold(0.0, f64::max);
                if max > 0.0 && max.is_finite() {
                    2f64.powi(-((max.log2() / 2.0).round() as i32))
                } else {
                    1.0
                }
            })
            .collect();
        for (d, f) in d.iter_mut().zip(f) {
            *d *= f;
        }
    }
    Balance {
        rows: d.clone(),
        cols: d,
    }
}

impl Balance {
    /// D_r·A·D_c.
    pub fn apply<T: Scalar>(&self, a: &Csr<T>) -> Csr<T> {
        let (rp, ci) = (a.row_ptr(), a.col_idx());
        let mut values = a.values().to_vec();
        for i in 0..a.nrows() {
            for k in rp[i] as usize..rp[i + 1] as usize {
                let v = values[k].as_f64() * self.rows[i] * self.cols[ci[k] as usize];
                values[k] = T::from_f64(v);
            }
        }
        Csr::new(a.nrows(), a.ncols(), rp.to_vec(), ci.to_vec(), values)
            .expect("the pattern of a valid matrix")
    }

    /// The ratio of the largest to the smallest scale, rows and columns (1: A was balanced).
    pub fn spread(&self) -> (f64, f64) {
        let spread = |s: &[f64]| {
            let (lo, hi) = s
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(*v), h.max(*v)));
            if s.is_empty() { 1.0 } else { hi / lo }
        };
        (spread(&self.rows), spread(&self.cols))
    }
}

/// Runs `solve` on the balanced system (D_r·A·D_c) y = D_r·b from y₀ = D_c⁻¹·x₀ and returns
/// x = D_c·y, re-checking ‖b − A x‖ ≤ max(rtol·‖b‖, atol) on the original system: on a miss
/// the balanced system's rtol is tightened by the factor missed (×½) and the solve resumes
/// from y, at most [`MAX_TIGHTENINGS`] times; the report then counts all iterations, joins the
/// histories, and names the miss in `reason_detail` if it remains. `solve` gets the balanced
/// matrix, right-hand side, guess and options.
///
/// # Errors
/// Those of `solve`.
pub fn solve_equilibrated<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    mut solve: impl FnMut(&Csr<T>, &[T], Option<&[T]>, &SolveOptions) -> Result<Solution<T>>,
) -> Result<Solution<T>> {
    crate::matrix::validate_system(a, b, opts)?;
    crate::matrix::check_initial_guess(x0, a.ncols())?;
    // CG needs D·A·D (symmetric); the other methods take independent row and column scales.
    let s = if opts.method == crate::base::options::Method::Cg {
        balance_symmetric(a)
    } else {
        balance(a)
    };
    let scaled = s.apply(a);
    let sb: Vec<T> = b
        .iter()
        .zip(&s.rows)
        .map(|(v, d)| T::from_f64(v.as_f64() * d))
        .collect();
    let mut y0: Option<Vec<T>> = x0.map(|x| {
        x.iter()
            .zip(&s.cols)
            .map(|(v, d)| T::from_f64(v.as_f64() / d))
            .collect()
    });
    let b_norm = b.iter().map(|v| v.as_f64().powi(2)).sum::<f64>().sqrt();
    let target = (opts.rtol * b_norm).max(opts.atol);
    let mut attempt_opts = opts.clone();
    let mut total: Option<Solution<T>> = None;
    let mut tightenings = 0;
    loop {
        let mut sol = solve(&scaled, &sb, y0.as_deref(), &attempt_opts)?;
        let y = sol.x.clone();
        sol.x = y
            .iter()
            .zip(&s.cols)
            .map(|(v, d)| T::from_f64(v.as_f64() * d))
            .collect();
        let true_norm = residual_norm(a, b, &sol.x);
        sol.report.relative_residual = if b_norm > 0.0 {
            true_norm / b_norm
        } else {
            true_norm
        };
        let converged = sol.report.converged;
        // NaN counts as a miss.
        let missed = converged
            && !matches!(
                true_norm.partial_cmp(&target),
                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
            );
        total = Some(match total.take() {
            None => sol,
            Some(prev) => join(prev, sol),
        });
        if !missed {
            break;
        }
        let t = total.as_mut().expect("set above");
        if tightenings == MAX_TIGHTENINGS || !true_norm.is_finite() {
            t.report.converged = false;
            t.report.reason = crate::base::report::StopReason::ResidualGap;
            t.report.reason_detail = format!(
                "the balanced system met its tolerance {} times but the original system's \
                 true |b - Ax| = {true_norm:.3e} stays above {target:.3e}",
                tightenings + 1
            );
            break;
        }
        tightenings += 1;
        attempt_opts.rtol *= 0.5 * target / true_norm;
        attempt_opts.atol = 0.0;
        y0 = Some(y);
    }
    let mut sol = total.expect("at least one attempt");
    let (sr, sc) = s.spread();
    let what = format!(
        "rows and columns balanced ({SWEEPS} sweeps of max-norm scaling, powers of two; row \
         scales spread {sr:.1e}, column scales {sc:.1e}): the method's residuals are those of \
         D_r A D_c, x unscaled, the true residual rechecked ({tightenings} tightening{})",
        if tightenings == 1 { "" } else { "s" }
    );
    sol.report.notes.insert(0, what.clone());
    sol.report.equilibration = Some(what);
    Ok(sol)
}

/// ‖b − A·x‖₂ summed in f64.
fn residual_norm<T: Scalar>(a: &Csr<T>, b: &[T], x: &[T]) -> f64 {
    let (rp, ci, va) = (a.row_ptr(), a.col_idx(), a.values());
    b.iter()
        .enumerate()
        .map(|(i, bi)| {
            let ax: f64 = (rp[i] as usize..rp[i + 1] as usize)
                .map(|k| va[k].as_f64() * x[ci[k] as usize].as_f64())
                .sum();
            (bi.as_f64() - ax).powi(2)
        })
        .sum::<f64>()
        .sqrt()
}

/// One report for two consecutive attempts: iterations added, histories joined.
fn join<T: Scalar>(prev: Solution<T>, next: Solution<T>) -> Solution<T> {
    let mut r = next.report;
    let p = prev.report;
    r.iterations += p.iterations;
    r.restarts += p.restarts;
    r.replacements += p.replacements;
    let mut history = p.history;
    history.extend(r.history.iter().skip(1));
    r.history = history;
    r.seconds += p.seconds;
    let mut notes = p.notes;
    for n in r.notes.drain(..) {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    r.notes = notes;
    Solution {
        x: next.x,
        report: r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balancing_brings_every_row_and_column_maximum_near_one() {
        // A Poisson matrix with rows and columns scaled over 12 decades.
        let base = crate::matrix::generators::poisson_2d_fd::<f64>(10);
        let n = base.nrows();
        let d: Vec<f64> = (0..n).map(|i| 10f64.powi((i % 13) as i32 - 6)).collect();
        let scales = Balance {
            rows: d.clone(),
            cols: d.iter().map(|v| v.sqrt()).collect(),
        };
        let a = scales.apply(&base);
        let s = balance(&a);
        assert!(
            s.rows
                .iter()
                .chain(&s.cols)
                .all(|v| v.log2().fract() == 0.0)
        );
        let b = s.apply(&a);
        for i in 0..n {
            let m = b.row(i).1.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!((0.25..=2.0).contains(&m), "row {i}: {m}");
        }
        // Balancing a balanced matrix changes nothing.
        assert_eq!(balance(&b).spread(), (1.0, 1.0));
        // The symmetric balancing of a symmetric matrix keeps it symmetric.
        let sym = Balance {
            rows: d.clone(),
            cols: d.clone(),
        }
        .apply(&base);
        let s = balance_symmetric(&sym);
        assert_eq!(s.rows, s.cols);
        let bs = s.apply(&sym);
        assert!(bs.is_symmetric(0.0));
        for i in 0..n {
            let m = bs.row(i).1.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!((0.25..=4.0).contains(&m), "row {i}: {m}");
        }
    }

    /// A stand-in solver for a diagonal system that meets its tolerance exactly where it
    /// hurts the original system most: the whole residual in the row the balancing shrank
    /// most. The guard must see the miss, tighten, and resume until A x = b itself meets
    /// rtol.
    #[test]
    fn a_balanced_convergence_the_original_system_misses_is_tightened() {
        use crate::base::options::{Method, Variant};
        use crate::base::report::SolveReport;
        use crate::base::scalar::Precision;
        let n = 6;
        let diag: Vec<f64> = (0..n).map(|i| 10f64.powi(2 * i as i32 - 5)).collect();
        let a = Csr::from_triplets(
            n,
            &diag
                .iter()
                .enumerate()
                .map(|(i, d)| (i, i, *d))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let b = vec![1.0; n];
        let opts = SolveOptions {
            method: Method::Gmres,
            rtol: 1e-8,
            ..Default::default()
        };
        let mut calls = Vec::new();
        let fake = |a: &Csr<f64>, b: &[f64], _x0: Option<&[f64]>, o: &SolveOptions| {
            calls.push(o.rtol);
            let d = a.diagonal();
            let mut y: Vec<f64> = b.iter().zip(&d).map(|(b, d)| b / d).collect();
            let b_norm = b.iter().map(|v| v * v).sum::<f64>().sqrt();
            // The balancing shrank the last row most (the largest diagonal): put the whole
            // allowed residual there, where it is largest in the original system.
            y[n - 1] -= 0.9 * o.rtol * b_norm / d[n - 1];
            let mut report =
                SolveReport::new(Method::Gmres, Variant::Classical, Precision::F64, n, n);
            report.converged = true;
            report.iterations = 5;
            report.history = vec![1.0; 6];
            Ok(Solution { x: y, report })
        };
        let sol = solve_equilibrated(&a, &b, None, &opts, fake).unwrap();
        let r = (b[n - 1] - diag[n - 1] * sol.x[n - 1]).abs();
        let rel = r / (n as f64).sqrt();
        assert!(sol.report.converged, "{}", sol.report.reason_detail);
        assert!(rel <= 1e-8, "true relative residual {rel:e}");
        let what = sol.report.equilibration.as_deref().unwrap();
        assert!(
            calls.len() >= 2 && what.contains(&format!("({} tightening", calls.len() - 1)),
            "{what} {calls:?}"
        );
        assert!(calls.windows(2).all(|w| w[1] < w[0]), "{calls:?}");
        assert_eq!(sol.report.iterations, 5 * calls.len());
        assert_eq!(sol.report.history.len(), sol.report.iterations + 1);
    }
}
