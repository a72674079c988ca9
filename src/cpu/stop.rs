//! The CPU reference's stop rules, shared with the GPU solvers: when a tracked residual's
//! convergence is confirmed by the true residual, when a value the recurrences divide by is a
//! breakdown, how many recoveries (residual replacement, shadow-residual restart) a solve
//! gets before it reports a failure by name, and what a method core hands back ([`Stop`]).

use crate::base::scalar::Scalar;
use crate::base::{Method, StopReason};

/// Relative slack allowed between the stopping threshold and the TRUE residual ‖b − Ax‖₂
/// (recomputed in f64) when a solve whose tracked residual met the threshold is confirmed as
/// converged: `true ≤ threshold · (1 + TRUE_RESIDUAL_SLACK)`.
///
/// The tracked residual is a recurrence evaluated in `T`; when it lands right at the
/// threshold, the recomputed one can differ from it in the last digits (f64: ~1e-13 relative
/// on a moderately conditioned matrix; f32: ~1e-4). A 0.1 % slack absorbs that last-digit
/// disagreement only; a genuine residual gap (the recurrence drifting away from b − Ax, as
/// f32 does on an ill-conditioned matrix or with a tight rtol) is a factor 2–1000 and is
/// reported as [`StopReason::ResidualGap`].
pub const TRUE_RESIDUAL_SLACK: f64 = 1e-3;

/// Factor of the "numerically zero" test for the quantities the Krylov recurrences divide by:
/// `|⟨x, y⟩| ≤ BREAKDOWN_FACTOR · ε_T · ‖x‖₂‖y‖₂` (ε_T the unit round-off of `T`) is a
/// breakdown of `⟨x, y⟩`: the cosine of the angle between x and y is below the round-off of
/// `T`, so x ⊥ y to working precision and the value is at the level of the rounding error of
/// its own terms. (Exactly zero is too weak a test: a value at the round-off level divides
/// noise into the next step — unpreconditioned BiCGStab on nos6 then grows the residual to
/// 1e16 — while a √n·ε threshold stops runs that still recover, such as BiCGStab with
/// Jacobi on add32 one iteration before convergence.)
pub const BREAKDOWN_FACTOR: f64 = 1.0;

/// Restarts from the current x after the tracked residual met the threshold but the true
/// residual did not (the recurrence drifted), before the solve reports `ResidualGap`.
pub const MAX_GAP_RESTARTS: usize = 3;

/// Restarts with a fresh shadow residual (r₀* := r) after a near-breakdown of BiCGStab or
/// BiCG, before the breakdown is reported by name. A restart needs progress since the last
/// one (a breakdown right at a restart would repeat).
pub const MAX_BREAKDOWN_RESTARTS: usize = 10;

/// The restart log's entry for a residual-gap restart.
pub fn gap_restart_note(iteration: usize, true_rel: f64) -> String {
    format!(
        "residual gap at iteration {iteration} (true |b - Ax|/|b| = {true_rel:.3e}): \
         residual replaced by b - Ax, restarted from x"
    )
}

/// The restart log's entry for a near-breakdown restart.
pub fn breakdown_restart_note(quantity: &str, iteration: usize) -> String {
    format!("breakdown of {quantity} at iteration {iteration}: restarted from x with r0* := r")
}

/// Whether `method` restarts with a fresh shadow residual on a near-breakdown.
pub fn restarts_on_breakdown(method: Method) -> bool {
    matches!(method, Method::Bicgstab | Method::Bicg)
}

/// Residual growth (relative to the initial residual) beyond which a stationary iteration is
/// declared [`StopReason::Diverged`].
pub const DIVERGENCE_FACTOR: f64 = 1e6;

/// Whether `value = ⟨x, y⟩` is numerically zero given `‖x‖₂·‖y‖₂ = norms` (see
/// [`BREAKDOWN_FACTOR`]); zero norms make any value a breakdown.
pub fn is_breakdown<T: Scalar>(value: f64, norms: f64) -> bool {
    value.abs() <= BREAKDOWN_FACTOR * T::PRECISION.epsilon() * norms
}

/// Whether a solve whose tracked residual met `threshold` is confirmed by its true residual
/// norm `true_abs = ‖b − Ax‖₂` (see [`TRUE_RESIDUAL_SLACK`]).
pub fn confirms_convergence(true_abs: f64, threshold: f64) -> bool {
    true_abs <= threshold * (1.0 + TRUE_RESIDUAL_SLACK)
}

/// What a method core hands back to [`run`](super::run): how it stopped. `Converged` here
/// only means that the TRACKED residual met the threshold; [`run`](super::run) confirms it
/// with the true residual.
#[derive(Debug, Clone)]
pub(crate) struct Stop {
    pub iterations: usize,
    pub reason: StopReason,
    pub detail: String,
    /// Restarts from the current x after the true residual missed the tolerance (GMRES).
    pub restarts: usize,
    /// Of those, residual replacements (GMRES: a cycle's estimate met the threshold, its
    /// restart residual did not).
    pub replacements: usize,
}

impl Stop {
    pub(crate) fn converged(iterations: usize, res: f64, sys_b_norm: f64) -> Self {
        Stop {
            restarts: 0,
            replacements: 0,
            iterations,
            reason: StopReason::Converged,
            detail: format!(
                "converged at iteration {iterations}: tracked |r| = {res:.3e} (|r|/|b| = {:.3e})",
                rel(res, sys_b_norm)
            ),
        }
    }

    pub(crate) fn max_iterations(iterations: usize, res: f64, sys_b_norm: f64) -> Self {
        Stop {
            restarts: 0,
            replacements: 0,
            iterations,
            reason: StopReason::MaxIterations,
            detail: format!(
                "iteration limit {iterations} reached: tracked |r| = {res:.3e} (|r|/|b| = {:.3e})",
                rel(res, sys_b_norm)
            ),
        }
    }

    pub(crate) fn breakdown(iterations: usize, quantity: &str, value: f64, scale: f64) -> Self {
        Stop {
            restarts: 0,
            replacements: 0,
            iterations,
            reason: StopReason::Breakdown {
                quantity: quantity.to_string(),
            },
            detail: format!(
                "breakdown at iteration {iterations}: {quantity} = {value:.3e}, numerically zero \
                 (scale {scale:.3e})"
            ),
        }
    }

    pub(crate) fn non_finite(iterations: usize, quantity: &str, value: f64) -> Self {
        Stop {
            restarts: 0,
            replacements: 0,
            iterations,
            reason: StopReason::NonFinite {
                quantity: quantity.to_string(),
            },
            detail: format!("non-finite {quantity} = {value} at iteration {iterations}"),
        }
    }

    pub(crate) fn not_spd(iterations: usize, what: &str) -> Self {
        Stop {
            restarts: 0,
            replacements: 0,
            iterations,
            reason: StopReason::NotSpd,
            detail: format!("not SPD at iteration {iterations}: {what}"),
        }
    }

    pub(crate) fn diverged(iterations: usize, res: f64, r0: f64) -> Self {
        Stop {
            restarts: 0,
            replacements: 0,
            iterations,
            reason: StopReason::Diverged,
            detail: format!(
                "diverged at iteration {iterations}: |r| = {res:.3e} vs initial {r0:.3e}"
            ),
        }
    }
}

fn rel(res: f64, b_norm: f64) -> f64 {
    if b_norm > 0.0 { res / b_norm } else { res }
}
