//! The side of the preconditioner for GMRES and BiCGStab ([`Side`]), and the pieces the two
//! methods share for left preconditioning.
//!
//! * **Right** (the default): the method runs on `A M⁻¹ y = b`, `x = M⁻¹ y`. Its residual is
//!   the true residual b − Ax, monitored against `sys.tau` = max(rtol·‖b‖, atol).
//! * **Left**: the method runs on `M⁻¹A x = M⁻¹b`. Its residual is the preconditioned
//!   r̂ = M⁻¹(b − Ax), monitored against τ_L = max(rtol·‖M⁻¹b‖, atol) (`Target::left`),
//!   SciPy's and PETSc's GMRES convention. ‖r̂‖ small does not make ‖b − Ax‖ small (M⁻¹
//!   may shrink some components of the residual far more than others), so the true residual
//!   guards every convergence claim (`on_side`): when the monitored residual meets τ_L,
//!   ‖b − Ax‖ is recomputed in f64; if it misses `sys.tau`, τ_L is tightened ([`tighten`])
//!   and the method restarts from the current x with its fresh preconditioned residual, at
//!   most [`MAX_GUARD_RESTARTS`] times (each counted in `Stop::restarts`); after that the
//!   claim stands and the driver reports the residual gap.
//!
//! With M = I both sides are the same method: `on_side` then runs the right-preconditioned
//! core, so the results are identical bit for bit.

use super::{Stop, System, confirms_convergence, scaled_norm2, true_relative_residual};
use crate::base::scalar::Scalar;
use crate::base::{Side, StopReason};

/// Restarts after the monitored residual of a left-preconditioned solve met τ_L but the true
/// residual missed the threshold, before the claim is handed to the driver (which then reports
/// `ResidualGap`); the same bound as GMRES's [`MAX_GAP_RESTARTS`](super::gmres::MAX_GAP_RESTARTS).
pub const MAX_GUARD_RESTARTS: usize = super::gmres::MAX_GAP_RESTARTS;

/// What a method core monitors and runs on: the side (with M = I always right), the absolute
/// threshold of its monitored residual, and where in the solve it starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    /// Whether the core runs on M⁻¹A (left) instead of A M⁻¹ (right).
    pub left: bool,
    /// Absolute threshold of the monitored residual: `sys.tau` (right) or τ_L (left).
    pub tau: f64,
    /// The norm the monitored residual is relative to in the stop details: ‖b‖ (right) or
    /// ‖M⁻¹b‖ (left).
    pub scale: f64,
    /// Iterations done before this run (non-zero after a guard restart).
    pub first_iter: usize,
    /// Whether this run restarts after a guard: the fresh residual of the current x then
    /// replaces the last history entry ([`Target::record_start`]) and is not tested before the
    /// first iteration (the guard has just found that x insufficient).
    pub resumed: bool,
}

impl Target {
    /// The right-preconditioned (or unpreconditioned) target: `sys.tau` from iteration 0.
    pub fn right<T: Scalar>(sys: &System<'_, T>) -> Self {
        Target {
            left: false,
            tau: sys.tau,
            scale: sys.b_norm,
            first_iter: 0,
            resumed: false,
        }
    }

    /// The left-preconditioned target from iteration 0: τ_L = max(rtol·‖M⁻¹b‖, atol), with
    /// ‖M⁻¹b‖ evaluated in f64 as the driver evaluates ‖b‖ (τ_L = `sys.tau` for M = I).
    pub fn left<T: Scalar>(sys: &System<'_, T>, rtol: f64, atol: f64) -> Self {
        let mut mb = vec![T::zero(); sys.n()];
        sys.m.apply(sys.b, &mut mb);
        let mb_norm = scaled_norm2(&mb);
        Target {
            left: true,
            tau: (rtol * mb_norm).max(atol),
            scale: mb_norm,
            first_iter: 0,
            resumed: false,
        }
    }

    /// Records the norm of the run's initial residual in the history: a new entry for a fresh
    /// run, or the replacement of the entry of the iteration a resumed run restarts at (the
    /// driver's convention for restarts: one entry per iteration, the latest value).
    pub fn record_start(&self, hist: &mut Vec<f64>, res: f64) {
        match hist.last_mut() {
            Some(last) if self.resumed => *last = res,
            _ => hist.push(res),
        }
    }

    /// Whether a monitored residual norm meets the threshold (or the thread's cancel check
    /// fired: [`super::cancellable`]).
    pub fn done(&self, res: f64) -> bool {
        super::cancel_requested_at(res) || res <= self.tau
    }

    /// The residual the method monitors: r = b − Ax (right) or r = M⁻¹(b − Ax) (left, with
    /// `tmp` = b − Ax).
    pub fn residual<T: Scalar>(&self, sys: &System<'_, T>, x: &[T], r: &mut [T], tmp: &mut [T]) {
        if self.left {
            sys.residual(x, tmp);
            sys.m.apply(tmp, r);
        } else {
            sys.residual(x, r);
        }
    }

    /// The operator of the preconditioned system: w = A(M⁻¹v) (right, `tmp` = M⁻¹v) or
    /// w = M⁻¹(Av) (left, `tmp` = Av).
    pub fn operator<T: Scalar>(&self, sys: &System<'_, T>, v: &[T], w: &mut [T], tmp: &mut [T]) {
        if self.left {
            sys.spmv(v, tmp);
            sys.m.apply(tmp, w);
        } else {
            sys.m.apply(v, tmp);
            sys.spmv(tmp, w);
        }
    }
}

/// The tightened left threshold after a claim at τ_L whose true residual `true_abs` missed
/// `tau`: τ_L·tau/‖b − Ax‖ (the ratio by which the true residual has to shrink, assuming
/// ‖b − Ax‖/‖M⁻¹(b − Ax)‖ stays what it is now), and at least a halving.
pub fn tighten(tau_left: f64, tau: f64, true_abs: f64) -> f64 {
    if true_abs.is_finite() && true_abs > 0.0 {
        (tau_left * (tau / true_abs)).min(0.5 * tau_left)
    } else {
        0.5 * tau_left
    }
}

/// The restart log's entry for a guard restart of a left-preconditioned solve (the GPU
/// drivers log each one; the count is in `restarts` on both).
pub fn guard_restart_note(iteration: usize, true_rel: f64, tau_left: f64) -> String {
    format!(
        "left-preconditioned residual met its threshold at iteration {iteration} but the true \
         |b - Ax|/|b| = {true_rel:.3e} did not: threshold tightened to {tau_left:.3e}, \
         restarted from x"
    )
}

/// Runs the method core `run(x, hist, target)` on the side `side` (rtol and atol of the
/// options, for τ_L): right, or left with M = I, is a single run against `sys.tau`. Left with
/// M ≠ I runs against τ_L, and a `Converged` stop (the monitored ‖M⁻¹r‖ met τ_L) is accepted
/// only once the true ‖b − Ax‖ (in f64, exactly as the driver recomputes it) confirms it;
/// otherwise τ_L is [tightened](tighten) and `run` resumes from the current x (at iteration
/// `Stop::iterations`, with `Target::resumed`), at most [`MAX_GUARD_RESTARTS`] times, or
/// until the iteration limit. `Stop::restarts` adds up the restarts of all runs and guards.
pub(crate) fn on_side<T: Scalar>(
    sys: &System<'_, T>,
    x: &mut [T],
    hist: &mut Vec<f64>,
    side: Side,
    rtol: f64,
    atol: f64,
    mut run: impl FnMut(&mut [T], &mut Vec<f64>, Target) -> Stop,
) -> Stop {
    if side == Side::Right || sys.m.is_identity() {
        return run(x, hist, Target::right(sys));
    }
    let mut target = Target::left(sys, rtol, atol);
    let (mut restarts, mut replacements) = (0, 0);
    let mut guards = 0;
    loop {
        let mut stop = run(x, hist, target);
        restarts += stop.restarts;
        stop.restarts = restarts;
        replacements += stop.replacements;
        stop.replacements = replacements;
        stop.detail = format!(
            "{} [left-preconditioned: threshold {:.3e} = max(rtol*|M^-1 b|, atol), \
             |M^-1 b| = {:.3e}]",
            stop.detail
                .replace("tracked |r|", "tracked |M^-1 r|")
                .replace("|r|/|b|", "|M^-1 r|/|M^-1 b|"),
            target.tau,
            target.scale
        );
        if stop.reason != StopReason::Converged {
            return stop;
        }
        let true_abs = true_relative_residual(sys.a, sys.b, x) * sys.b_norm;
        if confirms_convergence(true_abs, sys.tau) {
            return stop;
        }
        if guards >= MAX_GUARD_RESTARTS || stop.iterations >= sys.max_iter {
            // The claim stands; the driver reports the residual gap.
            return stop;
        }
        guards += 1;
        restarts += 1;
        target.tau = tighten(target.tau, sys.tau, true_abs);
        target.first_iter = stop.iterations;
        target.resumed = true;
    }
}

/// Test matrices and checks shared by the left-preconditioning tests of GMRES and BiCGStab.
#[cfg(test)]
pub(crate) mod testing {
    use crate::base::scalar::Scalar;
    use crate::base::{Method, Precond, Side, Solution, SolveOptions, Variant};
    use crate::cpu::precond::{CpuPreconditioner, Jacobi};
    use crate::matrix::Csr;

    /// Both variants.
    pub const VARIANTS: [Variant; 2] = [Variant::Classical, Variant::Pipelined];

    /// The options of a test solve: rtol 1e-8, at most 2000 iterations, GMRES(30).
    pub fn options(method: Method, variant: Variant, precond: Precond, side: Side) -> SolveOptions {
        SolveOptions {
            method,
            variant,
            precond,
            side,
            rtol: 1e-8,
            max_iter: 2000,
            restart: 30,
            ..Default::default()
        }
    }

    /// Solves with `opts` and checks that the solve converged with a true relative residual
    /// ‖b − Ax‖/‖b‖ ≤ rtol.
    pub fn solve_converged<T: Scalar>(a: &Csr<T>, b: &[T], opts: &SolveOptions) -> Solution<T> {
        let sol = crate::cpu::solve(a, b, None, opts).unwrap();
        let what = format!(
            "{} {} {} {}",
            opts.method, opts.variant, opts.precond, opts.side
        );
        assert!(sol.report.converged, "{what}: {}", sol.report.reason_detail);
        assert!(
            sol.report.relative_residual <= opts.rtol,
            "{what}: true |b - Ax|/|b| = {:.3e} > rtol {:.1e}",
            sol.report.relative_residual,
            opts.rtol
        );
        sol
    }

    /// Checks that two solves are the same run: iterations, restarts, reason, history and x
    /// bit for bit.
    pub fn assert_same_run(p: &Solution<f64>, q: &Solution<f64>) {
        assert_eq!(p.report.iterations, q.report.iterations);
        assert_eq!(p.report.restarts, q.report.restarts);
        assert_eq!(p.report.reason, q.report.reason);
        assert_eq!(p.report.history, q.report.history);
        assert!(
            p.x.iter()
                .zip(&q.x)
                .all(|(u, v)| u.to_bits() == v.to_bits())
        );
    }

    /// `a` with row i multiplied by 10^k, k = (i mod 7) − 3 ∈ −3..=3: a badly row-scaled
    /// matrix, on which left Jacobi (which undoes the scaling) helps GMRES(m) with a small m.
    pub fn row_scaled<T: Scalar>(a: &Csr<T>) -> Csr<T> {
        a.scale_rows(|i| T::from_f64(10f64.powi((i % 7) as i32 - 3)))
    }

    /// A right-hand side with entries of both signs and varying size.
    pub fn rhs<T: Scalar>(n: usize) -> Vec<T> {
        (0..n)
            .map(|i| T::from_f64(1.0 + ((i * 7) % 11) as f64 - 0.3 * (i % 3) as f64))
            .collect()
    }

    /// ‖D⁻¹(b − Ax)‖₂ in f64: the residual a left-Jacobi solve monitors.
    pub fn jacobi_residual<T: Scalar>(a: &Csr<T>, b: &[T], x: &[T]) -> f64 {
        let ax = crate::cpu::spmv_f64(a, x);
        let r: Vec<T> = b
            .iter()
            .zip(&ax)
            .map(|(bi, axi)| T::from_f64(bi.as_f64() - axi))
            .collect();
        let mut z = vec![T::zero(); b.len()];
        Jacobi::new(a).apply(&r, &mut z);
        z.iter().map(|v| v.as_f64().powi(2)).sum::<f64>().sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{
        VARIANTS, assert_same_run, jacobi_residual, options, rhs, solve_converged,
    };
    use super::*;
    use crate::base::{Method, Precond, Side, Variant};
    use crate::matrix::generators::{
        ConvectionField, convection_diffusion_3d, random_nonsymmetric,
    };

    /// GMRES and BiCGStab (the methods with a side) in every variant.
    fn methods_and_variants() -> impl Iterator<Item = (Method, Variant)> {
        [Method::Gmres, Method::Bicgstab]
            .into_iter()
            .flat_map(|m| VARIANTS.map(|v| (m, v)))
    }

    #[test]
    fn left_jacobi_converges_on_nonsymmetric_matrices() {
        let convection = convection_diffusion_3d::<f64>(8, 0.1, ConvectionField::Circular);
        let random = random_nonsymmetric::<f64>(400, 7, 11);
        for a in [&convection, &random] {
            let b = rhs::<f64>(a.nrows());
            for (method, variant) in methods_and_variants() {
                let opts = options(method, variant, Precond::Jacobi, Side::Left);
                solve_converged(a, &b, &opts);
            }
        }
    }

    #[test]
    fn left_equals_right_without_preconditioner() {
        let a = random_nonsymmetric::<f64>(300, 6, 5);
        let b = rhs::<f64>(a.nrows());
        for (method, variant) in methods_and_variants() {
            let right = options(method, variant, Precond::None, Side::Right);
            let left = options(method, variant, Precond::None, Side::Left);
            let right = solve_converged(&a, &b, &right);
            let left = solve_converged(&a, &b, &left);
            assert_same_run(&left, &right);
        }
    }

    #[test]
    fn left_history_is_the_preconditioned_residual() {
        let a = random_nonsymmetric::<f64>(400, 7, 3);
        let b = rhs::<f64>(a.nrows());
        for (method, variant) in methods_and_variants() {
            let opts = options(method, variant, Precond::Jacobi, Side::Left);
            let sol = solve_converged(&a, &b, &opts);
            let h = &sol.report.history;
            assert_eq!(h.len(), sol.report.iterations + 1);
            // x0 = 0: r̂0 = D⁻¹(b − A·0) = D⁻¹b.
            let h0 = jacobi_residual(&a, &b, &vec![0.0; b.len()]);
            assert!((h[0] - h0).abs() <= 1e-12 * h0, "{} vs {h0}", h[0]);
            // The tracked r̂ at the end is D⁻¹(b − A x) of the returned x.
            let last = *h.last().unwrap();
            let recomputed = jacobi_residual(&a, &b, &sol.x);
            assert!(
                (last - recomputed).abs() <= 1e-2 * recomputed,
                "{method} {variant}: history {last:.6e} vs recomputed {recomputed:.6e}"
            );
        }
    }

    #[test]
    fn left_jacobi_converges_in_f32() {
        let a = convection_diffusion_3d::<f32>(8, 0.1, ConvectionField::Circular);
        let b = rhs::<f32>(a.nrows());
        for (method, variant) in methods_and_variants() {
            let opts = crate::base::SolveOptions {
                rtol: 1e-4,
                ..options(method, variant, Precond::Jacobi, Side::Left)
            };
            solve_converged(&a, &b, &opts);
        }
    }
    #[test]
    fn tighten_scales_by_the_gap_and_at_least_halves() {
        // The true residual is 10× too large: τ_L shrinks 10×.
        assert_eq!(tighten(1e-6, 1e-8, 1e-7), 1e-7);
        // Barely missed: still halved.
        assert_eq!(tighten(1e-6, 1e-8, 1.01e-8), 5e-7);
        // A non-finite true residual: halved.
        assert_eq!(tighten(1e-6, 1e-8, f64::INFINITY), 5e-7);
    }
}
