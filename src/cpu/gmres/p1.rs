//! p(1)-GMRES's CPU twin ([`p1`]): the recurrences of the GPU's one-launch step
//! (`gmres_p1_step`), run inside [`super`]'s cycles.

use super::{gmres_core, with_cycle_counts};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{GramSchmidt, Solution, SolveOptions, Variant};
use crate::cpu::side::Target;
use crate::cpu::{System, dot};
use crate::matrix::Csr;

/// p(1)-GMRES (Ghysels et al. 2013, shift 0): pipelined GMRES with u_i = A v_{i−1} kept as a
/// second basis and formed by the recurrence u_{i+1} = (A u_i − Σ_{j<i} R_{j,i} u_{j+1})/R_{i,i},
/// R_{i,i} = √(‖u_i‖² − Σ_j R_{j,i}²) and ξ_i = (⟨r0, u_i⟩ − Σ_j R_{j,i} ξ_j)/R_{i,i} — the
/// CPU twin of the GPU's one-launch step (`gmres_p1_step`), classical Gram–Schmidt, with its
/// lagged norm: step i first rescales v_{i−1} and u_i by ‖v_{i−1}‖ and corrects R_{i−1,i−1},
/// ξ_{i−1} and that step's estimate, as the GPU's launch that closes step i does. A step
/// whose ‖u_i‖² − Σ R² is at most √ε‖u_i‖² ends the cycle with the i − 1 steps before it and
/// GMRES restarts from the true residual (counted in the report's `restarts`); after
/// [`P1_MAX_LOST_CYCLES`] such cycles, or one that left the restart residual where it was,
/// the steps are pipelined GMRES's. Reductions and syncs
/// as [`classical`](super::classical)'s with CGS (the distributed machine's count).
///
/// ```
/// use krylov_wgpu::cpu::gmres;
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{Method, SolveOptions, Variant};
/// let a = poisson_2d_fd::<f64>(16);
/// let b = vec![1.0; a.nrows()];
/// let opts = SolveOptions { method: Method::Gmres, variant: Variant::P1, rtol: 1e-8, ..Default::default() };
/// let sol = gmres::p1(&a, &b, None, &opts)?;
/// assert!(sol.report.converged && sol.report.relative_residual <= 1e-8);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn p1<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
) -> Result<Solution<T>> {
    let sol = p1_run(a, b, x0, opts)?;
    Ok(with_cycle_counts(sol, opts, GramSchmidt::Cgs))
}

/// p(1)-GMRES cycles that end early (R_{i,i} lost to cancellation) before the solve goes on
/// with pipelined GMRES's steps (fused GMRES on the GPU): a matrix on which the recurrences
/// keep losing R_{i,i} loses more steps to restarts than p(1)'s launches save. Not fewer: a
/// few such restarts cost less than the switch (on an H100 fused GMRES's kernels took about
/// 15 ms to build mid-solve, where pores_1's three or four lost cycles cost nothing).
pub const P1_MAX_LOST_CYCLES: usize = 8;

/// The note of a p(1)-GMRES solve whose cycles ended early `lost` times (GPU and CPU alike).
pub fn p1_lost_note(lost: usize) -> String {
    format!(
        "p(1)-GMRES: {lost} cycle(s) ended early where R_ii from |u_i|^2 - sum R_ji^2 lost its \
         accuracy (at most sqrt(eps)*|u_i|^2); each restarted from the true residual \
         (counted in restarts)"
    )
}

entry_point! {
    fn p1_run(opts) => Gmres, P1, move |sys, x, h| {
        gmres_core(sys, x, h, Variant::P1, GramSchmidt::Cgs, opts.side, opts.rtol, opts.atol)
    }
}

/// How p(1)-GMRES's step i ended ([`p1_step`]).
pub(super) enum P1Step {
    /// R's column i, v_i and ξ_i are made.
    Made,
    /// ‖u_i‖² − Σ_j R_{j,i}² ≤ √ε‖u_i‖² (R_{i,i} lost to cancellation, or an invariant Krylov
    /// space): the cycle keeps i − 1 steps.
    Lost,
    /// u_i = 0 (R_{i,i}, ‖u_i‖).
    Breakdown(f64, f64),
    /// ‖u_i‖² is not finite.
    NonFinite(f64),
}

/// p(1)-GMRES's step i: u_i by its recurrence (u_1 = A r/ρ0); for i ≥ 2 the lagged explicit
/// norm s = ‖v_{i−1}‖ then corrects step i − 1 (v_{i−1} and u_i divided by s, R_{i−1,i−1}
/// multiplied, ξ_{i−1} divided: `gmres_p1_step` does this in the launch that closes step i);
/// then R_{j,i} = ⟨u_i, v_j⟩, R_{i,i} by Pythagoras, ξ_i and v_i. `u[j]` holds u_j,
/// `rmat[i][j]` R_{j,i}, `w` and `tmp` are scratch.
#[allow(clippy::too_many_arguments)]
pub(super) fn p1_step<T: Scalar>(
    sys: &System<'_, T>,
    target: &Target,
    i: usize,
    (r, rho0): (&[T], T),
    v: &mut [Vec<T>],
    u: &mut [Vec<T>],
    rmat: &mut [Vec<T>],
    xi: &mut [T],
    (w, tmp): (&mut [T], &mut [T]),
) -> P1Step {
    // u_i = (A u_{i−1} − Σ_{j<i−1} R_{j,i−1} u_{j+1}) / R_{i−1,i−1}  (u_1 = A r / ρ0).
    let (src, div) = if i == 1 {
        (r, rho0)
    } else {
        (&u[i - 1][..], rmat[i - 1][i - 1])
    };
    target.operator(sys, src, w, tmp);
    for (row, wr) in w.iter_mut().enumerate() {
        let mut t = *wr;
        if i >= 2 {
            for j in 1..i - 1 {
                t -= rmat[i - 1][j] * u[j + 1][row];
            }
        }
        u[i][row] = t / div;
    }
    if i >= 2 {
        let s = dot(&v[i - 1], &v[i - 1]).sqrt();
        if !s.is_finite() {
            return P1Step::NonFinite(s.as_f64());
        }
        v[i - 1].iter_mut().for_each(|e| *e /= s);
        u[i].iter_mut().for_each(|e| *e /= s);
        rmat[i - 1][i - 1] *= s;
        xi[i - 1] /= s;
    }
    let uu = dot(&u[i], &u[i]);
    if !uu.is_finite() {
        return P1Step::NonFinite(uu.as_f64());
    }
    let ru = dot(r, &u[i]);
    let (mut sq, mut sx) = (T::zero(), T::zero());
    for j in 1..i {
        let c = dot(&u[i], &v[j]);
        rmat[i][j] = c;
        sq += c * c;
        sx += c * xi[j];
    }
    let arg = uu - sq;
    let rii = if arg > T::zero() {
        arg.sqrt()
    } else {
        T::zero()
    };
    let uu64 = uu.as_f64();
    if uu64 == 0.0 {
        return P1Step::Breakdown(rii.as_f64(), 0.0);
    }
    // R_{i,i} ≈ 0 (invariant Krylov space) and R_{i,i} lost to cancellation look the same:
    // both restart from the true residual.
    if arg.as_f64() <= T::PRECISION.epsilon().sqrt() * uu64 {
        return P1Step::Lost;
    }
    rmat[i][i] = rii;
    xi[i] = (ru - sx) / rii;
    for row in 0..w.len() {
        let mut t = u[i][row];
        for j in 1..i {
            t -= rmat[i][j] * v[j][row];
        }
        v[i][row] = t / rii;
    }
    P1Step::Made
}
