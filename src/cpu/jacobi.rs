//! The Jacobi iteration x ← x + D⁻¹(b − Ax) (paper 001): converges when A is strictly
//! diagonally dominant (more generally when the spectral radius of I − D⁻¹A is below 1).
//!
//! It stops as [`StopReason::Diverged`] when the residual exceeds
//! [`super::DIVERGENCE_FACTOR`] times the initial one or is not finite.
//! There is no classical/pipelined distinction (both run the same loop) and no separate
//! preconditioner (D⁻¹ is the method).
//!
//! [`StopReason::Diverged`]: crate::base::StopReason::Diverged

use super::precond::{CpuPreconditioner, Jacobi};
use super::{DIVERGENCE_FACTOR, Stop, System, dot};
use crate::base::scalar::Scalar;

entry_point! {
    /// Jacobi iteration (the report says `variant: classical`). Errors with
    /// `KrylovError::ZeroDiagonal` when a diagonal entry is zero.
    pub fn jacobi_iteration(opts) => Jacobi, Classical, jacobi_core
}

/// The Jacobi loop, run by [`jacobi_iteration`] and by [`super::solve`] with either variant.
pub(super) fn jacobi_core<T: Scalar>(
    sys: &System<'_, T>,
    x: &mut [T],
    hist: &mut Vec<f64>,
) -> Stop {
    let n = sys.n();
    // D⁻¹ is the method, whatever `opts.precond` says: the Jacobi preconditioner, set up
    // here (the driver hands this core M = I).
    let d = Jacobi::new(sys.a);
    let mut z = vec![T::zero(); n];
    // r_0 = b − A x_0.
    let mut r = vec![T::zero(); n];
    sys.residual(x, &mut r);
    let r0 = dot(&r, &r).sqrt().as_f64();
    let mut res = r0;
    hist.push(res);
    if !res.is_finite() {
        return Stop::diverged(0, res, r0);
    }
    if sys.done(res) {
        return Stop::converged(0, res, sys.b_norm);
    }
    for i in 0..sys.max_iter {
        // x_{i+1} = x_i + D⁻¹ r_i.
        d.apply(&r, &mut z);
        for (xj, &zj) in x.iter_mut().zip(&z) {
            *xj += zj;
        }
        // r_{i+1} = b − A x_{i+1}.
        sys.residual(x, &mut r);
        res = dot(&r, &r).sqrt().as_f64();
        hist.push(res);
        if !res.is_finite() || res > DIVERGENCE_FACTOR * r0 {
            return Stop::diverged(i + 1, res, r0);
        }
        if sys.done(res) {
            return Stop::converged(i + 1, res, sys.b_norm);
        }
    }
    Stop::max_iterations(sys.max_iter, res, sys.b_norm)
}
