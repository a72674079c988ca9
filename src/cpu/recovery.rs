//! Recoveries a whole solve makes after it failed, shared by the CPU reference
//! ([`super::solve`]) and the GPU ([`crate::solvers::solve_gpu`]) so that both take the
//! same decisions.

use crate::base::error::Result;
use crate::base::options::SolveOptions;
use crate::base::report::{Solution, StopReason};
use crate::base::scalar::{Precision, Scalar};

/// The recovery for an f32 overflow: a badly scaled matrix (bcsstk01's entries reach 2.5e9)
/// overflows f32's 3.4e38 in the inner products — pipelined CG's ⟨Ap, Ap⟩ at its first
/// iteration, BiCG's breakdown bound ε·‖p̃‖‖Ap‖ (then infinite) at iteration 0. Balanced rows
/// and columns (`--equilibrate`) keep every quantity near 1, and the same solve converges
/// there (CG on bcsstk01 in 47 iterations). When an f32 solve that was not balanced stopped
/// on a non-finite value, or broke down before its first iteration, `again` solves once
/// more with balancing; the report is the second solve's, with the first failure as its
/// first restart (`restart_log`, `notes`) and both solves' seconds (or the first solve's,
/// with a note, when balancing is refused).
pub fn balance_after_f32_overflow<T: Scalar>(
    sol: Solution<T>,
    opts: &SolveOptions,
    again: impl FnOnce(&SolveOptions) -> Result<Solution<T>>,
) -> Result<Solution<T>> {
    let overflowed = match &sol.report.reason {
        StopReason::NonFinite { quantity } => Some(format!("non-finite {quantity}")),
        StopReason::Breakdown { quantity } if sol.report.iterations == 0 => {
            Some(format!("breakdown ({quantity})"))
        }
        _ => None,
    };
    let Some(what) = overflowed else {
        return Ok(sol);
    };
    if T::PRECISION != Precision::F32 || opts.equilibrate {
        return Ok(sol);
    }
    let why = format!(
        "{what} at iteration {} in f32: rows and columns balanced (--equilibrate) and solved \
         again from the start",
        sol.report.iterations
    );
    let mut second = match again(&SolveOptions {
        equilibrate: true,
        ..opts.clone()
    }) {
        Ok(second) => second,
        // Balancing refused this matrix: the first failure stands, with the reason.
        Err(e) => {
            let mut sol = sol;
            sol.report.notes.push(format!(
                "{what} in f32; balancing rows and columns failed: {e}"
            ));
            return Ok(sol);
        }
    };
    second.report.seconds += sol.report.seconds;
    second.report.restarts += 1;
    second.report.restart_log.insert(0, why.clone());
    second.report.notes.insert(0, why);
    Ok(second)
}
