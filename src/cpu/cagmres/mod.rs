//! CA-GMRES(s, m), the communication-avoiding GMRES of paper 002 (Yamazaki, Anzt, Tomov,
//! Hoemmen & Dongarra; Hoemmen's thesis): the f64 CPU reference the GPU kernels will be
//! checked against (issue #17). One concept per file:
//!
//! * [`powers`]: the matrix powers kernel (monomial or Newton basis) and its basis change
//!   matrix B;
//! * [`leja`]: Ritz values and their modified Leja order (the Newton shifts);
//! * [`tsqr`]: the TSQR variants and BOrth;
//! * [`hessenberg`]: the Hessenberg reconstruction H = (R⁺B − H̃E)T⁻¹ and the least squares.
//!
//! One restart cycle: r = b − Ax, q₀ = r/‖r‖; for each of the m/s blocks, the matrix powers
//! from the last basis vector (s SpMVs), BOrth against all previous basis vectors and the
//! TSQR of the remainder, and the block's columns of H; min ‖βe₁ − Hy‖ by Givens on the host
//! (its per-column residual norms are the history's per-step estimates; a cycle ends after
//! the block whose estimate meets the threshold, at the first column that does); x += Q y;
//! the true residual b − Ax at each restart.
//!
//! With [`Basis::Newton`] the first cycle is a standard GMRES(m) (Arnoldi with
//! `opts.gs`) whose Hessenberg's Ritz values, Leja-ordered, give the s shifts every later
//! block reuses (paper 002 §IV-A: "these shifts are not available for the first restart-loop,
//! we use the standard GMRES iterations").
//!
//! Rules shared with [`crate::cpu::gmres`]: a cycle whose estimate met the threshold ends
//! the solve only if the recomputed true residual confirms it (else at most
//! [`MAX_GAP_RESTARTS`](super::gmres::MAX_GAP_RESTARTS) restarts, then the driver reports
//! `ResidualGap`); stagnation by name after [`STAGNATION_CYCLES`](super::gmres::STAGNATION_CYCLES)
//! flat cycles (full or truncated). A block whose TSQR R has a (numerically) zero diagonal
//! entry keeps the columns before it: past its first column the cycle ends there and
//! restarts (the basis lost rank: an ill-conditioned monomial basis does this for large s);
//! at its first column (A q_j lies in the span of the basis) the solve stops with
//! `Breakdown("R_kk")` unless the restart residual converged. `iterations` counts the basis
//! vectors the solution used (one history entry each, as GMRES counts steps); a block whose
//! estimate met the threshold at an early column generated more (`CycleInfo::vectors`), and
//! the iteration limit counts those generated.
//!
//! Right preconditioning (`opts.precond`: Jacobi, ILU(0), IC(0), ILUT): the cycles run on
//! A·M⁻¹ (the matrix powers apply M⁻¹ before each SpMV) and x = x₀ + M⁻¹Q y, so the
//! monitored residual is the true one; `--side left` is refused. The first cycle of the
//! Newton basis is Arnoldi with classical Gram–Schmidt twice (blocks of one vector through
//! the same BOrth), whatever `opts.gs` says. m is [`CaOptions::m`] ([`solve`]) or
//! `opts.restart` with s = `opts.s_step` ([`crate::cpu::solve`] with
//! [`Method::CaGmres`](crate::base::Method::CaGmres)); the report's `cagmres` section holds
//! the [`CaReport`].
//!
//! ```
//! use krylov_wgpu::cpu::cagmres::{Basis, CaOptions, solve, tsqr::Tsqr};
//! use krylov_wgpu::matrix::generators::poisson_2d_fd;
//! use krylov_wgpu::solvers::SolveOptions;
//! let a = poisson_2d_fd::<f64>(32);
//! let b = vec![1.0; a.nrows()];
//! let opts = SolveOptions { rtol: 1e-8, ..Default::default() };
//! let ca = CaOptions { s: 4, m: 20, basis: Basis::Newton, tsqr: Tsqr::CholQr2 };
//! let sol = solve(&a, &b, None, &opts, &ca)?;
//! assert!(sol.report.converged && sol.report.relative_residual <= 1e-8);
//! // 1 + 5 blocks × (2 BOrth + 2 CholQR2 − 1: the second BOrth pass is CholQR's first Gram)
//! assert_eq!(sol.ca.reductions_per_cycle, Some(16.0));
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

pub mod hessenberg;
pub mod leja;
pub mod powers;
pub mod tsqr;

mod cycles;
mod driver;
mod source;

pub(crate) use cycles::{BlockResult, CaBackend, Collected, Control, run_cycles};
pub use driver::solve;
pub(crate) use driver::{operator_scale, solve_as, summarise};

use crate::base::GramSchmidt;
pub use crate::base::ca::{Basis, CaOptions, CaReport, CycleInfo};
use crate::base::{Solution, SolveReport};
use tsqr::Tsqr;

/// A CA-GMRES solution: x, the common report and CA-GMRES's own.
#[derive(Debug, Clone)]
pub struct CaSolution {
    pub x: Vec<f64>,
    pub report: SolveReport,
    pub ca: CaReport,
}

impl CaSolution {
    /// The solution as the other solvers return it.
    pub fn into_solution(self) -> Solution<f64> {
        Solution {
            x: self.x,
            report: self.report,
        }
    }
}

/// (reductions, host syncs) of one full CA-GMRES(s, m) cycle with `tsqr`: 1 + m/s·(2 + the
/// TSQR's reductions, one fewer with CholQR and CholQR2, whose first Gram matrix shares the
/// second projection's: [`tsqr::borth_reductions`]) and 1 + m/s·max(1, the TSQR's host
/// syncs) (the restart residual's norm; per block the two BOrth projections, the TSQR, and
/// one read of the block's coefficients, which the host needs for H and the per-step
/// estimates).
pub fn ca_counts_per_cycle(s: usize, m: usize, tsqr: Tsqr) -> (usize, usize) {
    let blocks = m / s.max(1);
    (
        1 + blocks * tsqr::borth_reductions(tsqr, s),
        1 + blocks * tsqr.host_syncs().max(1),
    )
}

/// (reductions, host syncs) of one full standard GMRES(m) cycle (Arnoldi with `gs`, as
/// paper 002 Fig. 1; step i orthogonalises A q_i against q₀…q_i): 1 + Σ per step (MGS: i+1
/// inner products + the norm; CGS: 2; CGS2: 3), and 1 + m (one read of H's new column per
/// step, for the residual estimate).
pub fn gmres_counts_per_cycle(m: usize, gs: GramSchmidt) -> (usize, usize) {
    let per_step = |i: usize| match gs {
        GramSchmidt::Mgs => i + 2,
        GramSchmidt::Cgs => 2,
        GramSchmidt::Cgs2 => 3,
    };
    (1 + (0..m).map(per_step).sum::<usize>(), 1 + m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        let ok = CaOptions::default();
        assert!(ok.validate().is_ok());
        for bad in [
            CaOptions { s: 0, ..ok },
            CaOptions { m: 0, ..ok },
            CaOptions { s: 3, m: 20, ..ok },
        ] {
            let e = bad.validate().unwrap_err().to_string();
            assert!(e.contains("CA-GMRES"), "{e}");
        }
    }

    #[test]
    fn ca_needs_fewer_reductions_than_gmres() {
        for s in [2, 4, 8] {
            let m = 4 * s;
            for t in [Tsqr::CholQr, Tsqr::CholQr2, Tsqr::Svqr, Tsqr::Caqr] {
                let (r, y) = ca_counts_per_cycle(s, m, t);
                let (gr, gy) = gmres_counts_per_cycle(m, GramSchmidt::Cgs2);
                // CholQR2's two host round trips per block tie GMRES's per-step syncs at s = 2.
                let fewer_syncs = if s == 2 { y <= gy } else { y < gy };
                assert!(r < gr && fewer_syncs, "s={s} {t:?}: {r}/{y} vs {gr}/{gy}");
            }
        }
        assert_eq!(gmres_counts_per_cycle(3, GramSchmidt::Mgs).0, 1 + 2 + 3 + 4);
        // 5 blocks of 3 (two projections, the second shared with CholQR's first Gram matrix,
        // and CholQR2's second) and the restart's.
        assert_eq!(ca_counts_per_cycle(4, 20, Tsqr::CholQr2), (16, 11));
    }
}
