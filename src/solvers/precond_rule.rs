//! `precond auto` (the CLI's `krylov solve --precond auto`, its default; the Python package's
//! `precond="auto"`): solve without a preconditioner first and, when that solve on one
//! device stops short for a reason a preconditioner addresses, solve again with one — IC(0)
//! for CG (symmetric, with its pivot shift), ILUT for GMRES and BiCGStab (fill-in and its own
//! shift: what solves the indefinite and badly scaled matrices ILU(0) does not).
//!
//! The rule lives here so that every front end retries alike and says so in the same words;
//! which requests take part (not an explicit preconditioner, an iteration limit the user set,
//! or several devices, which take no factored M) is the front end's to decide. The first
//! solve is watched by [`crate::solvers::SlowGuard`] (GPU) or
//! [`crate::cpu::cancellable_watching`] (CPU) with a [`crate::solvers::SlowWatch`], so that a
//! hopeless one stops early; mixed-precision refinement is not watched (its outer loop stops
//! a stalled solve itself) but is solved again alike.

use crate::base::options::{Method, Precond};
use crate::base::report::{SolveReport, StopReason};

/// The preconditioner `precond auto` solves again with after `method` without one stopped
/// short: IC(0) for CG, ILUT for GMRES and BiCGStab, `None` (no retry) for other methods.
///
/// ```
/// use krylov_wgpu::solvers::{Method, Precond, auto_precond_for};
/// assert_eq!(auto_precond_for(Method::Cg), Some(Precond::Ic0));
/// assert_eq!(auto_precond_for(Method::Gmres), Some(Precond::Ilut));
/// assert_eq!(auto_precond_for(Method::Bicgstab), Some(Precond::Ilut));
/// assert_eq!(auto_precond_for(Method::Jacobi), None);
/// ```
pub fn auto_precond_for(method: Method) -> Option<Precond> {
    match method {
        Method::Cg => Some(Precond::Ic0),
        Method::Gmres | Method::Bicgstab => Some(Precond::Ilut),
        _ => None,
    }
}

/// Whether a finished solve without a preconditioner warrants `precond auto`'s retry: it
/// stopped for a reason a preconditioner addresses — stagnation, a breakdown, divergence,
/// non-finite values, the iteration limit, or the slow-convergence guard's cancel
/// (`guard_fired`: the [`crate::solvers::SlowWatch`] fired) — not f32's residual floor, CG's
/// indefinite matrix, nor a user's cancel; and it did not converge. Mixed-precision
/// refinement that stalls (its report's reason: stagnation) takes the retry too: f32 inner
/// solves that cannot reduce the residual without a preconditioner often can with one.
///
/// ```
/// use krylov_wgpu::solvers::{Method, SolveReport, StopReason, Variant, auto_precond_retry_warranted};
/// use krylov_wgpu::Precision;
/// let mut report = SolveReport::new(Method::Gmres, Variant::Classical, Precision::F64, 10, 28);
/// report.reason = StopReason::Stagnation;
/// assert!(auto_precond_retry_warranted(&report, false));
/// report.reason = StopReason::Cancelled; // by the user, or by the slow guard
/// assert!(!auto_precond_retry_warranted(&report, false));
/// assert!(auto_precond_retry_warranted(&report, true));
/// report.reason = StopReason::ResidualGap;
/// assert!(!auto_precond_retry_warranted(&report, false));
/// ```
pub fn auto_precond_retry_warranted(report: &SolveReport, guard_fired: bool) -> bool {
    let retry = match report.reason {
        StopReason::Stagnation
        | StopReason::Breakdown { .. }
        | StopReason::Diverged
        | StopReason::NonFinite { .. }
        | StopReason::MaxIterations => true,
        StopReason::Cancelled => guard_fired,
        _ => false,
    };
    retry && !report.converged
}

/// The note of a retry: `report` is the first solve's (of `method`, without a
/// preconditioner), `slow` why the slow guard stopped it (if it did), `precond` the retry's.
///
/// ```
/// use krylov_wgpu::solvers::{Method, Precond, SolveReport, StopReason, Variant, auto_precond_note};
/// use krylov_wgpu::Precision;
/// let mut report = SolveReport::new(Method::Gmres, Variant::Classical, Precision::F64, 10, 28);
/// (report.reason, report.iterations, report.seconds) = (StopReason::Stagnation, 750, 0.25);
/// assert_eq!(
///     auto_precond_note(Method::Gmres, &report, None, Precond::Ilut),
///     "precond auto: gmres without a preconditioner stopped (stagnation), at iteration 750 \
///      after 0.250 s: solved again with ilut"
/// );
/// ```
pub fn auto_precond_note(
    method: Method,
    report: &SolveReport,
    slow: Option<&str>,
    precond: Precond,
) -> String {
    let why = match slow {
        Some(why) => format!("was stopped early: {why}"),
        None => format!("stopped ({})", report.reason.name()),
    };
    format!(
        "precond auto: {} without a preconditioner {why}, at iteration {} after {:.3} s: \
         solved again with {precond}",
        method, report.iterations, report.seconds
    )
}

/// The note when the retry with `precond` failed with `error` (the preconditioner could not
/// be built, say): the first solve's report stands, and says why.
///
/// ```
/// use krylov_wgpu::solvers::{Precond, auto_precond_failed_note};
/// assert_eq!(
///     auto_precond_failed_note(Precond::Ic0, "zero pivot"),
///     "precond auto: ic0 failed: zero pivot"
/// );
/// ```
pub fn auto_precond_failed_note(precond: Precond, error: impl std::fmt::Display) -> String {
    format!("precond auto: {precond} failed: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::options::Variant;
    use crate::base::scalar::Precision;

    fn report(reason: StopReason) -> SolveReport {
        let mut r = SolveReport::new(Method::Cg, Variant::Classical, Precision::F64, 4, 10);
        r.reason = reason;
        r
    }

    #[test]
    fn every_short_stop_warrants_a_retry_and_nothing_else_does() {
        for reason in [
            StopReason::Stagnation,
            StopReason::Breakdown {
                quantity: "<r, r0*>".into(),
            },
            StopReason::Diverged,
            StopReason::NonFinite {
                quantity: "alpha".into(),
            },
            StopReason::MaxIterations,
        ] {
            assert!(auto_precond_retry_warranted(&report(reason.clone()), false));
            assert!(auto_precond_retry_warranted(&report(reason), true));
        }
        for reason in [
            StopReason::Converged,
            StopReason::NotSpd,
            StopReason::ResidualGap,
        ] {
            assert!(!auto_precond_retry_warranted(&report(reason), true));
        }
        let mut converged = report(StopReason::MaxIterations);
        converged.converged = true;
        assert!(!auto_precond_retry_warranted(&converged, false));
    }

    #[test]
    fn the_guard_note_says_why_it_stopped() {
        let mut r = report(StopReason::Cancelled);
        (r.iterations, r.seconds) = (1200, 1.5);
        assert_eq!(
            auto_precond_note(Method::Cg, &r, Some("too slow"), Precond::Ic0),
            "precond auto: cg without a preconditioner was stopped early: too slow, at \
             iteration 1200 after 1.500 s: solved again with ic0"
        );
    }
}
