//! The CA-GMRES(s, m) driver: restart cycles of blocks (see the module docs of
//! [`super`]), on the common CPU driver [`crate::cpu::run`] (validation, b = 0, the true
//! residual guard, cancellation).

use nalgebra::{DMatrix, DVector};

use super::cycles::{BlockResult, CaBackend, Control, run_cycles};
use super::leja::Shift;
use super::powers::matrix_powers_with;
use super::tsqr::{Tsqr, borth};
use super::{CaOptions, CaReport, CaSolution, CycleInfo};
use crate::base::error::{KrylovError, Result};
use crate::base::{Method, Precond, SolveOptions, Variant};
use crate::cpu::{Stop, System};
use crate::matrix::Csr;

/// Solves A x = b by CA-GMRES(s, m) in f64 (see [`super`]). Errors: bad `ca`
/// ([`CaOptions::validate`]), s > n, a preconditioner in `opts`, and everything
/// [`crate::cpu::solve`] refuses (A not square, sizes, non-finite input).
pub fn solve(
    a: &Csr<f64>,
    b: &[f64],
    x0: Option<&[f64]>,
    opts: &SolveOptions,
    ca: &CaOptions,
) -> Result<CaSolution> {
    ca.validate()?;
    a.require_square()?;
    if opts.side == crate::base::Side::Left && opts.precond != Precond::None {
        return Err(KrylovError::InvalidOption(format!(
            "CA-GMRES applies --precond {} on the right (x = M⁻¹y); --side left is not built \
             for it",
            opts.precond
        )));
    }
    if ca.s > a.nrows() {
        return Err(KrylovError::InvalidOption(format!(
            "CA-GMRES block size s = {} exceeds the matrix order {}",
            ca.s,
            a.nrows()
        )));
    }
    let mut rep = CaReport {
        options: *ca,
        shifts: Vec::new(),
        cycles: Vec::new(),
        scale: operator_scale(a, opts.precond != Precond::None),
        reductions_per_cycle: None,
        syncs_per_cycle: None,
    };
    // `ca` is what runs: the options say so too (their CA fields are validated with them).
    let opts = &SolveOptions {
        s_step: ca.s,
        restart: ca.m,
        basis: ca.basis,
        tsqr: ca.tsqr,
        ..opts.clone()
    };
    let sol = crate::cpu::run(
        a,
        b,
        x0,
        opts,
        Method::CaGmres,
        Variant::Classical,
        |sys, x, hist| cycles(sys, x, hist, ca, &mut rep),
    )?;
    summarise(&mut rep);
    let mut report = sol.report;
    report.notes.insert(
        0,
        format!(
            "CA-GMRES(s = {}, m = {}) CPU reference: {} basis, TSQR {}; iterations count \
             the basis vectors the solution used (`cagmres.cycles` the ones generated)",
            ca.s, ca.m, ca.basis, ca.tsqr
        ),
    );
    // The algorithm's counts (the CPU itself launches nothing): over all cycles run.
    let (red, syncs): (usize, usize) = rep
        .cycles
        .iter()
        .fold((0, 0), |(r, y), c| (r + c.reductions, y + c.syncs));
    if report.iterations > 0 {
        report.reductions_per_iteration = red as f64 / report.iterations as f64;
        report.syncs_per_iteration = syncs as f64 / report.iterations as f64;
    }
    report.cycles = Some(rep.cycles.len());
    if !rep.cycles.is_empty() {
        report.syncs_per_cycle = Some(syncs as f64 / rep.cycles.len() as f64);
    }
    report.cagmres = Some(rep.clone());
    Ok(CaSolution {
        x: sol.x,
        report,
        ca: rep,
    })
}

/// Fills `reductions_per_cycle` and `syncs_per_cycle`: the averages over the CA cycles that
/// ran all m/s blocks.
pub(crate) fn summarise(rep: &mut CaReport) {
    let blocks = rep.options.m / rep.options.s.max(1);
    let full: Vec<&CycleInfo> = rep
        .cycles
        .iter()
        .filter(|c| c.kind == "ca" && c.blocks == blocks)
        .collect();
    if !full.is_empty() {
        let avg = |f: fn(&CycleInfo) -> usize| {
            full.iter().map(|c| f(c) as f64).sum::<f64>() / full.len() as f64
        };
        rep.reductions_per_cycle = Some(avg(|c| c.reductions));
        rep.syncs_per_cycle = Some(avg(|c| c.syncs));
    }
}

/// [`crate::cpu::solve`]'s CA-GMRES arm for any precision: the reference computes in f64
/// (A, b and x0 converted), x is returned in `T`, and the report says so when T is f32. Its
/// CA parameters are [`SolveOptions::ca`].
pub(crate) fn solve_as<T: crate::base::Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
) -> Result<crate::base::Solution<T>> {
    let a64: Csr<f64> = a.cast()?;
    let b64: Vec<f64> = b.iter().map(|v| v.as_f64()).collect();
    let x64: Option<Vec<f64>> = x0.map(|x| x.iter().map(|v| v.as_f64()).collect());
    let sol = solve(&a64, &b64, x64.as_deref(), opts, &opts.ca())?;
    let mut report = sol.report;
    if T::PRECISION != crate::base::Precision::F64 {
        report.precision = T::PRECISION;
        report.notes.push(format!(
            "the CA-GMRES CPU reference computes in f64; x is returned in {}",
            T::PRECISION
        ));
    }
    Ok(crate::base::Solution {
        x: sol.x.iter().map(|&v| T::from_f64(v)).collect(),
        report,
    })
}

/// The monomial basis's scaling σ of the operator the cycles run on: ‖A‖_∞, or with a
/// preconditioner ‖A D⁻¹‖_∞ (D = diag(A); exact for Jacobi, the scale of A·M⁻¹ ≈ I's rows
/// for an incomplete factorisation; ‖A‖_∞ where a diagonal entry is zero). The Newton basis
/// replaces it after its first cycle by the largest |Ritz value| of A·M⁻¹.
pub(crate) fn operator_scale<T: crate::base::Scalar>(a: &Csr<T>, preconditioned: bool) -> f64 {
    if !preconditioned {
        return inf_norm(a);
    }
    let d = a.diagonal();
    if d.iter().any(|v| v.as_f64() == 0.0) {
        return inf_norm(a);
    }
    let norm = (0..a.nrows())
        .map(|i| {
            let (cols, vals) = a.row(i);
            cols.iter()
                .zip(vals)
                .map(|(&j, v)| (v.as_f64() / d[j as usize].as_f64()).abs())
                .sum::<f64>()
        })
        .fold(0.0f64, f64::max);
    if norm > 0.0 && norm.is_finite() {
        norm
    } else {
        1.0
    }
}

/// ‖A‖_∞ (1 for A = 0): the monomial basis's scaling, computed once on the host.
pub(crate) fn inf_norm<T: crate::base::Scalar>(a: &Csr<T>) -> f64 {
    let norm = (0..a.nrows())
        .map(|i| a.row(i).1.iter().map(|v| v.as_f64().abs()).sum::<f64>())
        .fold(0.0f64, f64::max);
    if norm > 0.0 && norm.is_finite() {
        norm
    } else {
        1.0
    }
}

/// r = b − A x and ‖r‖.
fn residual(sys: &System<'_, f64>, x: &[f64], r: &mut [f64]) -> f64 {
    sys.residual(x, r);
    r.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// The CPU reference's backend: the basis Q as an n × (m + 1) matrix, x, r and A.
struct CpuBackend<'s, 'a> {
    sys: &'s System<'a, f64>,
    x: &'s mut [f64],
    r: Vec<f64>,
    q: DMatrix<f64>,
}

impl CaBackend for CpuBackend<'_, '_> {
    fn restart(&mut self) -> Result<f64> {
        Ok(residual(self.sys, self.x, &mut self.r))
    }

    fn start_basis(&mut self, rho: f64) -> Result<()> {
        let n = self.r.len();
        self.q.set_column(
            0,
            &DVector::from_iterator(n, self.r.iter().map(|v| v / rho)),
        );
        Ok(())
    }

    fn powers(
        &mut self,
        j: usize,
        steps: usize,
        shifts: &[Shift],
        sigma: f64,
    ) -> Result<DMatrix<f64>> {
        let start: Vec<f64> = self.q.column(j).iter().copied().collect();
        // Right preconditioning: the powers of A·M⁻¹ (x = x0 + M⁻¹ Q y).
        let (a, m) = (self.sys.a, &self.sys.m);
        let mut z = vec![0.0; start.len()];
        let p = matrix_powers_with(
            start.len(),
            |x, y| {
                m.apply(x, &mut z);
                a.mul_vec_into(&z, y).map(|_| ())
            },
            &start,
            steps,
            shifts,
            sigma,
        )?;
        if let Some(index) = p.v.iter().position(|v| !v.is_finite()) {
            return Err(KrylovError::NonFinite {
                what: "matrix powers basis",
                index,
            });
        }
        self.q
            .columns_mut(j + 1, steps)
            .copy_from(&p.v.columns(1, steps));
        Ok(p.b)
    }

    fn borth(&mut self, j: usize, steps: usize, tsqr: Tsqr) -> Result<BlockResult> {
        let prev = self.q.columns(0, j + 1).into_owned();
        let w = self.q.columns(j + 1, steps).into_owned();
        let bo = borth(&prev, &w, tsqr)?;
        self.q.columns_mut(j + 1, steps).copy_from(&bo.qr.q);
        Ok(BlockResult {
            c: bo.c,
            r: bo.qr.r,
            report: bo.qr.report,
            reductions: bo.reductions,
        })
    }

    fn update_x(&mut self, y: &[f64]) -> Result<()> {
        let u = self.q.columns(0, y.len()) * DVector::from_column_slice(y);
        let mut z = vec![0.0; u.len()];
        self.sys.m.apply(u.as_slice(), &mut z);
        for (xi, zi) in self.x.iter_mut().zip(z.iter()) {
            *xi += zi;
        }
        Ok(())
    }
}

/// The CPU reference's cycles on [`crate::cpu::run`]: a [`CpuBackend`] over `sys` and `x`.
fn cycles(
    sys: &System<'_, f64>,
    x: &mut [f64],
    hist: &mut Vec<f64>,
    ca: &CaOptions,
    rep: &mut CaReport,
) -> Stop {
    let n = sys.n();
    let ctl = Control {
        tau: sys.tau,
        max_iter: sys.max_iter,
        b_norm: sys.b_norm,
    };
    let mut be = CpuBackend {
        sys,
        x,
        r: vec![0.0; n],
        q: DMatrix::zeros(n, ca.m + 1),
    };
    match run_cycles(&mut be, &ctl, hist, ca, rep) {
        Ok(stop) => stop,
        Err(e) => Stop::non_finite(0, &format!("CA-GMRES ({e})"), f64::NAN),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Basis;
    use super::super::tsqr::Tsqr;
    use super::*;
    use crate::base::StopReason;
    use crate::matrix::generators::convection_diffusion_2d;

    fn problem() -> (Csr<f64>, Vec<f64>) {
        let a = convection_diffusion_2d::<f64>(10, 5.0);
        let b = (0..a.nrows())
            .map(|i| 1.0 + (i as f64 * 0.3).sin())
            .collect();
        (a, b)
    }

    #[test]
    fn every_tsqr_and_basis_converges_and_the_true_residual_confirms_it() {
        let (a, b) = problem();
        let opts = SolveOptions {
            rtol: 1e-10,
            ..Default::default()
        };
        for tsqr in Tsqr::ALL {
            for basis in [Basis::Monomial, Basis::Newton] {
                let ca = CaOptions {
                    s: 4,
                    m: 12,
                    basis,
                    tsqr,
                };
                let sol = solve(&a, &b, None, &opts, &ca).unwrap();
                let r = &sol.report;
                assert!(r.converged, "{tsqr:?} {basis:?}: {}", r.reason_detail);
                assert!(r.relative_residual <= 1e-10, "{tsqr:?} {basis:?}");
                assert_eq!(
                    r.history.len() - 1,
                    sol.ca.cycles.iter().map(|c| c.columns).sum::<usize>()
                );
                assert!(sol.ca.cycles.iter().all(|c| c.restart_residual.is_finite()));
                // The last estimate and the last restart residual agree to rounding.
                let est = *r.history.last().unwrap();
                let last = sol.ca.cycles.last().unwrap().restart_residual;
                assert!(
                    (est - last).abs() <= 1e-3 * last + 1e-14 * r.b_norm,
                    "{est} {last}"
                );
                assert_eq!(basis == Basis::Newton, !sol.ca.shifts.is_empty());
            }
        }
    }

    #[test]
    fn the_iteration_limit_caps_the_last_block() {
        let (a, b) = problem();
        let opts = SolveOptions {
            rtol: 1e-14,
            max_iter: 10,
            ..Default::default()
        };
        let ca = CaOptions {
            s: 4,
            m: 8,
            basis: Basis::Newton,
            tsqr: Tsqr::CholQr2,
        };
        let sol = solve(&a, &b, None, &opts, &ca).unwrap();
        assert_eq!(sol.report.reason, StopReason::MaxIterations);
        assert_eq!(sol.report.iterations, 10);
        // 8 Arnoldi steps, then one block cut to the 2 steps left.
        assert_eq!(sol.ca.cycles.len(), 2);
        assert_eq!(sol.ca.cycles[1].vectors, 2);
        assert!(sol.ca.reductions_per_cycle.is_none());
    }
}
