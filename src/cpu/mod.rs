//! f64 reference implementations (generic over [`crate::Scalar`], so also usable in f32):
//! the oracle for every GPU test and the fallback when no GPU exists.
//!
//! Every method has the same entry signature as [`solve`] (which dispatches on
//! `opts.method` × `opts.variant`; the per-method functions ignore those two fields):
//!
//! | method | classical | pipelined |
//! |---|---|---|
//! | CG | [`cg::classical_cg`] (Alg. 1 of paper 000) | [`cg::pipelined_cg`] (Alg. 2) |
//! | BiCGStab | [`bicgstab::classical`] (Alg. 3) | [`bicgstab::pipelined`] (Alg. 4) |
//! | GMRES(m) | [`gmres::classical`] (Alg. 5, MGS/CGS/CGS2) | [`gmres::pipelined`] (Alg. 6) |
//! | BiCG | [`bicg::bicg`] (paper 001 §3.1, explicit Aᵀ) | same |
//! | Jacobi iteration | [`jacobi::jacobi_iteration`] | same |
//!
//! The fused variant (CG and GMRES: the pipelined recurrences in fewer GPU launches) runs the
//! pipelined reference here, its report naming `fused`.
//!
//! CA-GMRES(s, m) (paper 002) is [`cagmres::solve`], with its own [`cagmres::CaOptions`]
//! (f64, right preconditioning), also reached as [`Method::CaGmres`] through [`solve`]
//! with the options' `s_step`, `restart`, `tsqr` and `basis`.
//!
//! With `Precond::Jacobi`, CG is the standard preconditioned CG (and a pipelined PCG derived
//! the same way as Alg. 2), BiCGStab and GMRES are right-preconditioned (`A D⁻¹ y = b`,
//! `x = D⁻¹ y`), BiCG follows the preconditioned BiCG of the Templates book. The stopping
//! test always uses the unpreconditioned residual ‖r‖₂ (for GMRES its Walker–Zhou estimate).
//!
//! ```
//! use krylov_wgpu::matrix::Csr;
//! use krylov_wgpu::solvers::{Method, SolveOptions, Variant};
//! let a = Csr::<f64>::new(2, 2, vec![0, 2, 4], vec![0, 1, 0, 1], vec![4.0, 1.0, 1.0, 3.0])?;
//! let opts = SolveOptions { method: Method::Cg, variant: Variant::Classical, rtol: 1e-12, ..Default::default() };
//! let sol = krylov_wgpu::cpu::solve(&a, &[1.0, 2.0], None, &opts)?;
//! assert!(sol.report.converged);
//! assert!((sol.x[0] - 1.0 / 11.0).abs() < 1e-12 && (sol.x[1] - 7.0 / 11.0).abs() < 1e-12);
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

/// Defines a public solver entry point with the signature of [`solve`]: a thin wrapper that
/// hands the method core to [`run`] with the given method and variant. The parameter name in
/// parentheses binds `opts` for a core that needs more options, e.g.
/// `entry_point!(pub fn name(opts) => Gmres, Classical, |sys, x, h| core(sys, x, h, opts.gs))`.
macro_rules! entry_point {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident($opts:ident) => $method:ident, $variant:ident, $core:expr
    ) => {
        $(#[$attr])*
        $vis fn $name<T: $crate::base::scalar::Scalar>(
            a: &$crate::matrix::Csr<T>,
            b: &[T],
            x0: Option<&[T]>,
            $opts: &$crate::base::SolveOptions,
        ) -> $crate::base::error::Result<$crate::base::Solution<T>> {
            $crate::cpu::run(
                a,
                b,
                x0,
                $opts,
                $crate::base::Method::$method,
                $crate::base::Variant::$variant,
                $core,
            )
        }
    };
}

mod blas;
mod cancel;
mod spmv;
mod stop;

pub mod batch_cg;
pub mod bicg;
pub mod bicgstab;
pub mod cagmres;
pub mod cg;
pub mod dense;
pub mod ds;
pub mod gmres;
pub mod ilu;
pub mod ilut;
pub mod jacobi;
pub mod mixed;
pub mod precond;
pub mod recovery;
pub mod side;
pub mod trisolve;

pub use blas::{axpy, dot, norm2, norm2_f64, scal, xpay};
pub(crate) use cancel::{cancel_requested, cancel_requested_at};
pub use cancel::{cancellable, cancellable_watching};
pub use spmv::{spmv, spmv_f64, true_relative_residual};
pub(crate) use stop::Stop;
pub use stop::{
    BREAKDOWN_FACTOR, DIVERGENCE_FACTOR, MAX_BREAKDOWN_RESTARTS, MAX_GAP_RESTARTS,
    TRUE_RESIDUAL_SLACK, breakdown_restart_note, confirms_convergence, gap_restart_note,
    is_breakdown, restarts_on_breakdown,
};

use crate::base::error::Result;
use crate::base::options::Reorder;
use crate::base::scalar::Scalar;
use crate::base::{Method, Solution, SolveOptions, SolveReport, StopReason, Variant};
use crate::matrix::Csr;
use crate::matrix::validate_system;
use precond::CpuPreconditioner;

/// ‖v‖₂ in f64, scaled so that it does not overflow for entries above ~1e154.
fn scaled_norm2<T: Scalar>(v: &[T]) -> f64 {
    let scale = v.iter().fold(0.0f64, |m, x| m.max(x.as_f64().abs()));
    if scale == 0.0 || !scale.is_finite() {
        return scale;
    }
    scale
        * v.iter()
            .map(|x| (x.as_f64() / scale).powi(2))
            .sum::<f64>()
            .sqrt()
}

/// The system and stopping parameters a method core runs on.
pub(crate) struct System<'a, T> {
    pub a: &'a Csr<T>,
    pub b: &'a [T],
    /// The preconditioner M (built from `opts.precond`; [`precond::Identity`] for none):
    /// the only way a method core applies M⁻¹.
    pub m: Box<dyn CpuPreconditioner<T>>,
    /// Absolute stopping threshold max(rtol·‖b‖, atol).
    pub tau: f64,
    pub b_norm: f64,
    pub max_iter: usize,
    pub restart: usize,
}

impl<T: Scalar> System<'_, T> {
    pub fn n(&self) -> usize {
        self.b.len()
    }

    /// y = A·x.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        spmv(self.a, x, y).expect("sizes checked by validate_system");
    }

    /// r = b − A·x.
    pub fn residual(&self, x: &[T], r: &mut [T]) {
        self.spmv(x, r);
        for (ri, &bi) in r.iter_mut().zip(self.b) {
            *ri = bi - *ri;
        }
    }

    /// Whether a tracked residual norm meets the threshold.
    /// Whether the tracked residual `res` meets the threshold; every method core asks once
    /// per residual it computes. It answers `true` as well when the thread's cancel check
    /// ([`cancellable`]) says stop: [`run`] then reports the stop as `Cancelled`.
    pub fn done(&self, res: f64) -> bool {
        cancel_requested_at(res) || res <= self.tau
    }
}

/// Solves `A x = b` on the CPU with the method, variant and preconditioner of `opts`.
///
/// Checks the input first ([`validate_system`], and `x0`'s length): bad input is an error,
/// while a solve that runs but fails (breakdown, iteration limit, ...) is a report with
/// `converged == false` and the reason. `b = 0` returns `x = 0`, converged at iteration 0.
/// The report's `relative_residual` is the true ‖b − Ax‖₂/‖b‖₂ recomputed in f64; a solve
/// is `converged` only if the tracked residual met `opts.threshold(‖b‖)` and the true
/// residual confirms it (else [`StopReason::ResidualGap`]).
///
/// Rows are reordered first as `opts.reorder` says (by default [`Reorder::Auto`] ([`crate::matrix::reorder`]: a
/// maximum-product matching when a non-CG method with Jacobi or ILU(0) meets a zero diagonal
/// entry); x, the residuals and the report are those of A x = b, and the report's
/// `reordering` says what was done. [`solve_with_reorder`] chooses the reordering.
pub fn solve<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
) -> Result<Solution<T>> {
    let first = solve_with_reorder(a, b, x0, opts, opts.reorder)?;
    let mut sol = recovery::balance_after_f32_overflow(first, opts, |o| {
        solve_with_reorder(a, b, x0, o, o.reorder)
    })?;
    explain_f32_gap(&mut sol.report);
    Ok(sol)
}

/// [`solve`] with the row reordering `how` ([`Reorder::None`]: A x = b exactly as given;
/// [`Reorder::Matching`]: always by a maximum-product matching, an error when A is
/// structurally singular).
pub fn solve_with_reorder<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    how: Reorder,
) -> Result<Solution<T>> {
    with_reordering(a, b, x0, opts, how, |a, b, x0, opts| {
        solve_as_given(a, b, x0, opts)
    })
}

/// Runs `solve` on the rows of A x = b that the reordering `how` chooses for `opts`: the one
/// call a solve entry wraps itself in (this is [`crate::matrix::reorder::solve_reordered`]
/// with the ILU(0) probe [`ilu0_trouble`]). `solve` gets P·A and P·b, or A and b as they
/// are; x, an initial guess and the residual norms need no change, and the report records
/// what was done in `reordering` (and its first note).
pub fn with_reordering<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    how: Reorder,
    solve: impl FnMut(&Csr<T>, &[T], Option<&[T]>, &SolveOptions) -> Result<Solution<T>>,
) -> Result<Solution<T>> {
    crate::matrix::reorder::solve_reordered(a, b, x0, opts, how, ilu0_trouble, solve)
}

/// What is wrong with the ILU(0) factors of `a` itself, for the `auto` reordering rule:
/// "is unstable at every diagonal shift (least growth max |M⁻¹A e| = 4.5e27, at shift
/// 1e-1)" when no shift of [`ilu::Ilu0::factor`] brought the growth test under
/// [`ilu::MAX_GROWTH`], or the factorisation's error; `None` when A factors, as it is or
/// with a pivot shift (then the solve keeps A's rows and reports the shift).
pub fn ilu0_trouble<T: Scalar>(a: &Csr<T>) -> Option<String> {
    match ilu::Ilu0::factor(a) {
        Ok(f) if f.growth <= ilu::MAX_GROWTH => None,
        Ok(f) => Some(format!(
            "is unstable at every diagonal shift (least growth max |M^-1 A e| = {:.1e}, at \
             shift {:.0e})",
            f.growth, f.shift
        )),
        Err(e) => Some(format!("fails ({e})")),
    }
}

/// The dispatch of [`solve`] on the system as given.
fn solve_as_given<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
) -> Result<Solution<T>> {
    opts.validate()?;
    match (opts.method, opts.variant) {
        (Method::Cg, Variant::Classical) => cg::classical_cg(a, b, x0, opts),
        (Method::Cg, Variant::Pipelined) => cg::pipelined_cg(a, b, x0, opts),
        // Fused CG runs pipelined CG's recurrences (one GPU launch per iteration instead of
        // two), cooperative CG fused CG's (many per launch).
        (Method::Cg, v @ (Variant::Fused | Variant::Cooperative)) => {
            cg::pipelined_cg(a, b, x0, opts).map(|mut sol| {
                sol.report.variant = v;
                sol
            })
        }
        // One-workgroup CG runs the classical recurrence (in one GPU workgroup).
        (Method::Cg, Variant::Workgroup) => cg::classical_cg(a, b, x0, opts).map(|mut sol| {
            sol.report.variant = Variant::Workgroup;
            sol
        }),
        (Method::Bicgstab, Variant::Classical) => bicgstab::classical(a, b, x0, opts),
        (Method::Bicgstab, Variant::Pipelined) => bicgstab::pipelined(a, b, x0, opts),
        (Method::Gmres, Variant::Classical) => gmres::classical(a, b, x0, opts),
        (Method::Gmres, Variant::Pipelined) => gmres::pipelined(a, b, x0, opts),
        // Fused GMRES runs pipelined GMRES's step (two GPU launches instead of four),
        // one-workgroup GMRES its steps in one workgroup (a cycle a launch).
        (Method::Gmres, v @ (Variant::Fused | Variant::Workgroup)) => {
            gmres::pipelined(a, b, x0, opts).map(|mut sol| {
                sol.report.variant = v;
                sol
            })
        }
        (Method::Gmres, Variant::P1) => gmres::p1(a, b, x0, opts),
        // Single formulation: both variants run the same loop, the report records the variant.
        (Method::Bicg, variant) => run(a, b, x0, opts, Method::Bicg, variant, bicg::bicg_core),
        (Method::Jacobi, variant) => {
            run(a, b, x0, opts, Method::Jacobi, variant, jacobi::jacobi_core)
        }
        (Method::CaGmres, _) => cagmres::solve_as(a, b, x0, opts),
        (
            Method::Bicgstab,
            variant @ (Variant::Fused | Variant::Workgroup | Variant::Cooperative),
        )
        | (Method::Gmres, variant @ Variant::Cooperative) => {
            Err(crate::base::options::variant_refused(opts.method, variant))
        }
        (Method::Cg | Method::Bicgstab, Variant::P1) => Err(crate::base::options::variant_refused(
            opts.method,
            Variant::P1,
        )),
    }
}

/// Common driver of every method: validates, sets up x, the preconditioner of `opts.precond`
/// ([`precond::build`]) and the threshold, runs the method core, and fills the report (true
/// residual, ResidualGap check).
pub(crate) fn run<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    method: Method,
    variant: Variant,
    core: impl FnMut(&System<'_, T>, &mut [T], &mut Vec<f64>) -> Stop,
) -> Result<Solution<T>> {
    run_preconditioned(
        a,
        b,
        x0,
        opts,
        method,
        variant,
        |a| precond::build(a, opts.precond, opts.trisolve),
        core,
    )
}

/// [`run`] with the preconditioner set up by `make_m` (after validation, and only when the
/// core runs) instead of [`precond::build`] of `opts.precond`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_preconditioned<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    method: Method,
    variant: Variant,
    make_m: impl FnOnce(&Csr<T>) -> Result<Box<dyn CpuPreconditioner<T>>>,
    core: impl FnMut(&System<'_, T>, &mut [T], &mut Vec<f64>) -> Stop,
) -> Result<Solution<T>> {
    let opts = SolveOptions {
        method,
        variant,
        ..opts.clone()
    };
    validate_system(a, b, &opts)?;
    crate::matrix::check_initial_guess(x0, a.ncols())?;
    let n = a.nrows();
    let mut report = SolveReport::new(method, variant, T::PRECISION, n, a.nnz());
    report.format = "csr".into();
    let b_norm = scaled_norm2(b);
    report.b_norm = b_norm;
    let start = std::time::Instant::now();

    if b_norm == 0.0 {
        // A x = 0 is solved by x = 0 exactly, whatever x0 is.
        report.iterations = 0;
        report.converged = true;
        report.reason = StopReason::Converged;
        report.reason_detail = "converged at iteration 0: b = 0, so x = 0".into();
        report.relative_residual = 0.0;
        report.history = vec![0.0];
        report.seconds = start.elapsed().as_secs_f64();
        return Ok(Solution {
            x: vec![T::zero(); n],
            report,
        });
    }

    // The Jacobi method sets up its own D⁻¹ (the method, not a preconditioner).
    let m: Box<dyn CpuPreconditioner<T>> = if method == Method::Jacobi {
        Box::new(precond::Identity)
    } else {
        make_m(a)?
    };
    report.preconditioner = m.info();
    if let Some(notice) = report
        .preconditioner
        .as_ref()
        .and_then(|i| i.shift_notice.clone())
    {
        report.notes.push(notice);
    }
    let mut sys = System {
        a,
        b,
        m,
        tau: opts.threshold(b_norm),
        b_norm,
        max_iter: opts.max_iter,
        restart: opts.restart,
    };
    let mut x = match x0 {
        Some(x0) => x0.to_vec(),
        None => vec![T::zero(); n],
    };
    // Runs of the core: the first, then restarts from x (the GPU driver's rules: after a
    // residual gap, and for BiCGStab/BiCG after a near-breakdown), each with the iterations
    // left. GMRES restarts itself (cycles) and the Jacobi iteration has nothing to refresh.
    let mut history: Vec<f64> = Vec::new();
    let (mut iterations, mut restarts, mut gaps, mut breakdowns) = (0, 0, 0, 0);
    let mut restart_log = Vec::new();
    let mut core = core;
    let stop = loop {
        let mut h = Vec::new();
        sys.max_iter = opts.max_iter - iterations;
        let stop = core(&sys, &mut x, &mut h);
        if !history.is_empty() {
            // The restart's r₀ replaces the entry of the iteration it restarted at.
            history.pop();
        }
        history.extend(h);
        iterations += stop.iterations;
        restarts += stop.restarts;
        if cancel_requested() {
            break Stop {
                reason: StopReason::Cancelled,
                detail: format!("cancelled at iteration {iterations}"),
                ..stop
            };
        }
        let left = iterations < opts.max_iter;
        let restartable = !matches!(method, Method::Gmres | Method::CaGmres | Method::Jacobi);
        // The guard's true residual, only where a restart could follow.
        let gap = (stop.reason == StopReason::Converged && restartable && left)
            .then(|| true_relative_residual(a, b, &x))
            .filter(|&rel| !confirms_convergence(rel * b_norm, sys.tau));
        let note = match (&stop.reason, gap) {
            (StopReason::Converged, Some(rel)) if gaps < MAX_GAP_RESTARTS => {
                gaps += 1;
                gap_restart_note(iterations, rel)
            }
            (StopReason::Breakdown { quantity }, _)
                if restarts_on_breakdown(method)
                    && left
                    && breakdowns < MAX_BREAKDOWN_RESTARTS
                    && stop.iterations > 0 =>
            {
                breakdowns += 1;
                breakdown_restart_note(quantity, iterations)
            }
            _ => break stop,
        };
        restart_log.push(note);
        restarts += 1;
    };
    report.seconds = start.elapsed().as_secs_f64();

    let true_rel = true_relative_residual(a, b, &x);
    report.relative_residual = true_rel;
    report.history = history;
    report.iterations = iterations;
    report.restarts = restarts;
    report.replacements = gaps + stop.replacements;
    report.restart_log = restart_log;
    let stop = if restarts > stop.restarts {
        Stop {
            detail: format!(
                "at iteration {iterations} in all, after {} restart(s): {}",
                restarts - stop.restarts,
                stop.detail
            ),
            ..stop
        }
    } else {
        stop
    };
    let true_abs = true_rel * b_norm;
    let (reason, detail) = match stop.reason {
        StopReason::Converged if !confirms_convergence(true_abs, sys.tau) => (
            StopReason::ResidualGap,
            format!(
                "residual gap at iteration {}: the tracked residual met the threshold {:.3e} \
                 but the true |b - Ax| = {true_abs:.3e} (|b - Ax|/|b| = {true_rel:.3e}) does not",
                iterations, sys.tau
            ),
        ),
        StopReason::Converged => (StopReason::Converged, stop.detail),
        other => (other, stop.detail),
    };
    report.converged = reason == StopReason::Converged;
    report.reason = reason;
    report.reason_detail = detail;
    Ok(Solution { x, report })
}

/// Adds to the detail of an f32 solve stopped by a residual gap what f32 attained and the way
/// past it: below about ε_f32·κ(A) the f32 x cannot represent a better answer, so restarting
/// does not help, and `--precision mixed` (f32 solves refined in f64 or double-single) does.
pub fn explain_f32_gap(report: &mut SolveReport) {
    if report.precision == crate::base::Precision::F32 && report.reason == StopReason::ResidualGap {
        report.reason_detail = format!(
            "{}; f32 attained |b - Ax|/|b| = {:.2e}, near what x in f32 can represent for this \
             matrix: --precision mixed refines f32 solves to f64 accuracy",
            report.reason_detail, report.relative_residual
        );
    }
}

/// Checks a scalar for NaN/∞, returning the `NonFinite` stop naming it.
pub(crate) fn finite_or_stop<T: Scalar>(v: T, iterations: usize, quantity: &str) -> Option<Stop> {
    if v.is_finite() {
        None
    } else {
        Some(Stop::non_finite(iterations, quantity, v.as_f64()))
    }
}
