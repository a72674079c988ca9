//! Mixed-precision iterative refinement (`--precision mixed`): the loop shared by the CPU
//! reference and the GPU ([`refine`]), the CPU's f64 outer half ([`CpuOuter`]) and the CPU
//! entry point ([`solve`]).
//!
//! The classical scheme (Wilkinson; Moler 1967; Carson & Higham 2018 for Krylov inner
//! solvers): with x in high precision,
//!
//! ```text
//! r_0 = b − A x_0                                  (outer precision: f64 or double-single)
//! for k = 0, 1, …  until ‖r_k‖ ≤ max(rtol·‖b‖, atol)
//!     solve A d = r_k/‖r_k‖ in f32 to rtol_k        (inner: the method, M and variant asked)
//!     x_{k+1} = x_k + ‖r_k‖·d                       (outer precision)
//!     r_{k+1} = b − A x_{k+1}                       (outer precision)
//! ```
//!
//! Each outer step shrinks the residual by about the inner tolerance as long as f32 can solve
//! A d = r at all (κ(A)·ε_f32 well below 1), so f64 accuracy costs a few f32 solves: half the
//! bytes per inner iteration. The residual is normalised before it is rounded to f32 (so
//! neither a tiny ‖b‖ nor a late, tiny residual underflows), and rounded through a power-of-
//! two `hint` so the outer side can store it in f32 without a second pass.
//!
//! Stops: `converged` only when the outer-precision residual meets the threshold (never on
//! an inner claim); `max_iterations` on the iteration limit (inner iterations summed) or
//! [`RefineOptions::max_outer`]; `stagnation` when two outer steps in a row shrink the
//! residual by less than half, or one makes it grow (that step is undone) — f32 cannot solve
//! this system well enough to refine it, and the detail says so.

use super::ds::Ds;
use super::{Solution, SolveOptions, SolveReport, StopReason};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::{Precision, TwoProd};
use crate::base::{RefineOptions, RefinementReport};
use crate::matrix::Csr;

/// An outer step that gains less than this factor counts as a stall.
pub const STALL_RATIO: f64 = 0.5;

/// Consecutive stalls after which refinement stops with `stagnation`.
pub const STALL_STEPS: usize = 2;

/// The high-precision half of refinement: x, and r = b − Ax computed from it.
pub trait Outer {
    /// The name of its precision for the report: `f64` or `double-single`.
    fn precision(&self) -> &'static str;
    /// r = b − A x in the outer precision: ‖r‖₂ (to f32 accuracy at least) and r·`hint`
    /// rounded to f32 (`hint` a power of two, so the scaling is exact).
    fn residual(&mut self, hint: f64) -> Result<(f64, Vec<f32>)>;
    /// x += `scale`·d in the outer precision, keeping the x it replaces for [`Outer::undo`].
    fn update(&mut self, d: &[f32], scale: f64) -> Result<()>;
    /// Restores x exactly as it was before the last [`Outer::update`] (subtracting the step
    /// again would not: a diverged inner solve's huge d wipes x's digits out).
    fn undo(&mut self) -> Result<()>;
    /// x, rounded to f64.
    fn solution(&mut self) -> Result<Vec<f64>>;
}

/// The inner solve of refinement: A d = rhs in f32 with the options given.
pub type InnerSolve<'a> = dyn FnMut(&[f32], &SolveOptions) -> Result<Solution<f32>> + 'a;

/// The power of two nearest to 1/`v` (1 for 0 or non-finite `v`).
pub(crate) fn pow2_inverse(v: f64) -> f64 {
    if v > 0.0 && v.is_finite() {
        2f64.powi(-(v.log2().round() as i32).clamp(-1000, 1000))
    } else {
        1.0
    }
}

/// Runs refinement to a stop and fills `report` (which holds n, nnz, ‖b‖ and the device):
/// iterations (inner, summed), reason, the outer-precision true residual, the history (the
/// inner solves' residual norms scaled back), counts summed over the inner solves, and
/// [`RefinementReport`]. Returns x rounded to f64.
pub fn refine(
    outer: &mut dyn Outer,
    inner: &mut InnerSolve<'_>,
    opts: &SolveOptions,
    refine: &RefineOptions,
    report: &mut SolveReport,
) -> Result<Vec<f64>> {
    refine.validate()?;
    opts.validate()?;
    let start = std::time::Instant::now();
    let b_norm = report.b_norm;
    let tau = opts.threshold(b_norm);
    let rel = |r: f64| r / if b_norm > 0.0 { b_norm } else { 1.0 };
    let mut rr = RefinementReport {
        outer_precision: outer.precision().into(),
        inner_precision: Precision::F32,
        inner_rtol: Vec::new(),
        outer_iterations: 0,
        inner_iterations: Vec::new(),
        inner_reasons: Vec::new(),
        outer_residuals: Vec::new(),
        inner_setup_seconds: 0.0,
        inner_seconds: Vec::new(),
        inner_loop_seconds: Vec::new(),
        strategy: "restart".into(),
    };
    let mut hint = pow2_inverse(b_norm);
    let (mut r_norm, mut r32) = outer.residual(hint)?;
    rr.outer_residuals.push(rel(r_norm));
    report.history = vec![r_norm];
    let (mut iterations, mut stalls) = (0usize, 0usize);
    let (mut weighted_dispatches, mut weighted_transfers) = (0.0, 0.0);
    let (mut weighted_reductions, mut weighted_syncs) = (0.0, 0.0);
    // Restart cycles of the inner solves (GMRES) and their loops' readbacks.
    let (mut cycles, mut cycle_syncs) = (None::<usize>, 0u64);
    let outcome = loop {
        if !r_norm.is_finite() {
            break (
                StopReason::NonFinite {
                    quantity: "outer residual".into(),
                },
                "the outer residual is not finite".to_string(),
            );
        }
        if r_norm <= tau {
            break (
                StopReason::Converged,
                format!(
                    "converged after {} outer iteration(s) ({iterations} inner): |b - Ax|/|b| = \
                     {:.3e} in {}",
                    rr.outer_iterations,
                    rel(r_norm),
                    rr.outer_precision
                ),
            );
        }
        if rr.outer_iterations >= refine.max_outer || iterations >= opts.max_iter {
            break (
                StopReason::MaxIterations,
                format!(
                    "iteration limit after {} outer iteration(s) ({iterations} inner): \
                     |b - Ax|/|b| = {:.3e}",
                    rr.outer_iterations,
                    rel(r_norm)
                ),
            );
        }
        if stalls >= STALL_STEPS {
            break stagnation(&rr, rel(r_norm));
        }
        // The inner system A d = r/‖r‖, to the inner tolerance or, when less is still
        // needed, to half the remaining factor.
        let to_f32 = (1.0 / (r_norm * hint)) as f32;
        let rhs: Vec<f32> = r32.iter().map(|&v| v * to_f32).collect();
        let inner_rtol = refine.inner_rtol.max(0.5 * tau / r_norm).min(0.5);
        let o = SolveOptions {
            rtol: inner_rtol,
            atol: 0.0,
            max_iter: opts.max_iter - iterations,
            ..opts.clone()
        };
        let t_inner = std::time::Instant::now();
        let sol = inner(&rhs, &o)?;
        let ir = &sol.report;
        // What the inner solve's own `seconds` leave out (its input checks, uploads, pipeline
        // creation, the download of d) is left out of refinement's `seconds` too.
        rr.inner_setup_seconds += (t_inner.elapsed().as_secs_f64() - ir.seconds).max(0.0);
        rr.outer_iterations += 1;
        rr.inner_rtol.push(inner_rtol);
        rr.inner_iterations.push(ir.iterations);
        rr.inner_reasons.push(ir.reason.to_string());
        rr.inner_seconds.push(ir.seconds);
        rr.inner_loop_seconds.push(ir.loop_seconds);
        iterations += ir.iterations;
        absorb_inner(report, ir, rr.outer_iterations);
        weighted_dispatches += ir.dispatches_per_iteration * ir.iterations as f64;
        weighted_transfers += ir.transfers_per_iteration * ir.iterations as f64;
        weighted_reductions += ir.reductions_per_iteration * ir.iterations as f64;
        weighted_syncs += ir.syncs_per_iteration * ir.iterations as f64;
        if let Some(c) = ir.cycles {
            cycles = Some(cycles.unwrap_or(0) + c);
            cycle_syncs += ir.loop_counts.readbacks;
        }
        report
            .history
            .extend(ir.history.iter().skip(1).map(|h| h * r_norm));
        if let Some(i) = sol.x.iter().position(|v| !v.is_finite()) {
            return Err(KrylovError::NonFinite {
                what: "correction of an inner f32 solve",
                index: i,
            });
        }
        outer.update(&sol.x, r_norm)?;
        hint = pow2_inverse(r_norm * inner_rtol);
        let (new_norm, new_r32) = outer.residual(hint)?;
        rr.outer_residuals.push(rel(new_norm));
        if new_norm >= r_norm || !new_norm.is_finite() {
            // The correction made x worse (or overflowed the residual: a diverged inner
            // solve): undo it; the same inner solve would follow.
            outer.undo()?;
            r_norm = outer.residual(pow2_inverse(r_norm))?.0;
            rr.outer_residuals.push(rel(r_norm));
            break stagnation(&rr, rel(r_norm));
        }
        stalls = if new_norm > STALL_RATIO * r_norm {
            stalls + 1
        } else {
            0
        };
        r_norm = new_norm;
        r32 = new_r32;
    };
    let (reason, detail) = outcome;
    report.iterations = iterations;
    report.converged = reason == StopReason::Converged;
    report.reason = reason;
    report.reason_detail = detail;
    report.relative_residual = rel(r_norm);
    if iterations > 0 {
        report.dispatches_per_iteration = weighted_dispatches / iterations as f64;
        report.transfers_per_iteration = weighted_transfers / iterations as f64;
        report.reductions_per_iteration = weighted_reductions / iterations as f64;
        report.syncs_per_iteration = weighted_syncs / iterations as f64;
    }
    report.cycles = cycles;
    report.syncs_per_cycle = cycles
        .filter(|&c| c > 0)
        .map(|c| cycle_syncs as f64 / c as f64);
    report.precision = Precision::F32;
    report.seconds = (start.elapsed().as_secs_f64() - rr.inner_setup_seconds).max(0.0);
    report.refinement = Some(rr);
    outer.solution()
}

/// The `stagnation` stop: what refinement reached and why it cannot go on.
fn stagnation(rr: &RefinementReport, rel: f64) -> (StopReason, String) {
    (
        StopReason::Stagnation,
        format!(
            "mixed refinement stalled after {} outer iteration(s) at |b - Ax|/|b| = {rel:.3e}: \
             the f32 inner solves no longer reduce the residual (f32 cannot solve this system \
             accurately enough: cond(A)*eps_f32 is near 1, or the inner method fails); try \
             --precision f64 or a stronger preconditioner",
            rr.outer_iterations
        ),
    )
}

/// Adds an inner solve's counts, restarts, notes and kernel times to the outer report.
fn absorb_inner(report: &mut SolveReport, ir: &SolveReport, k: usize) {
    let add = |a: &mut crate::base::WorkCounts, b: &crate::base::WorkCounts| {
        a.dispatches += b.dispatches;
        a.reductions += b.reductions;
        a.submits += b.submits;
        a.readbacks += b.readbacks;
        a.uploads += b.uploads;
        a.bytes_read_back += b.bytes_read_back;
        a.bytes_uploaded += b.bytes_uploaded;
    };
    add(&mut report.counts, &ir.counts);
    add(&mut report.loop_counts, &ir.loop_counts);
    report.iterations_recorded += ir.iterations_recorded;
    report.restarts += ir.restarts;
    report.replacements += ir.replacements;
    report.restart_log.extend(
        ir.restart_log
            .iter()
            .map(|l| format!("inner solve {k}: {l}")),
    );
    for note in &ir.notes {
        if !report.notes.contains(note) {
            report.notes.push(note.clone());
        }
    }
    for t in &ir.kernel_times {
        match report.kernel_times.iter_mut().find(|s| s.name == t.name) {
            Some(s) => {
                s.calls += t.calls;
                s.seconds += t.seconds;
            }
            None => report.kernel_times.push(t.clone()),
        }
    }
    report.loop_seconds += ir.loop_seconds;
    report.variant = ir.variant;
    report.format = ir.format.clone();
    report.format_reason = ir.format_reason.clone();
    report.matrix_bytes = ir.matrix_bytes;
    report.preconditioner = ir.preconditioner.clone();
    report.reordering = ir.reordering.clone();
    report.check_mode = ir.check_mode;
    report.batch_size = ir.batch_size;
}

/// The CPU's outer half: x and r = b − Ax in f64.
pub struct CpuOuter<'a> {
    a: &'a Csr<f64>,
    b: &'a [f64],
    x: Vec<f64>,
    /// x before the last update.
    x_prev: Vec<f64>,
    r: Vec<f64>,
}

impl<'a> CpuOuter<'a> {
    /// x = x0 (or 0).
    pub fn new(a: &'a Csr<f64>, b: &'a [f64], x0: Option<&[f64]>) -> Self {
        let n = a.nrows();
        CpuOuter {
            a,
            b,
            x: x0.map_or_else(|| vec![0.0; n], <[f64]>::to_vec),
            x_prev: Vec::new(),
            r: vec![0.0; n],
        }
    }
}

impl Outer for CpuOuter<'_> {
    fn precision(&self) -> &'static str {
        "f64"
    }

    fn residual(&mut self, hint: f64) -> Result<(f64, Vec<f32>)> {
        super::spmv(self.a, &self.x, &mut self.r)?;
        for (ri, bi) in self.r.iter_mut().zip(self.b) {
            *ri = bi - *ri;
        }
        let norm = super::norm2_f64(&self.r);
        Ok((norm, self.r.iter().map(|&v| (v * hint) as f32).collect()))
    }

    fn update(&mut self, d: &[f32], scale: f64) -> Result<()> {
        self.x_prev.clone_from(&self.x);
        for (xi, &di) in self.x.iter_mut().zip(d) {
            *xi += scale * di as f64;
        }
        Ok(())
    }

    fn undo(&mut self) -> Result<()> {
        std::mem::swap(&mut self.x, &mut self.x_prev);
        Ok(())
    }

    fn solution(&mut self) -> Result<Vec<f64>> {
        Ok(self.x.clone())
    }
}

/// The CPU twin of `reliable_replace` (mixed CG's residual replacement, f32): r := r32,
/// p += D⁻¹(r32 − r) (D⁻¹ = 1 without `dinv`), and the (⟨r,z⟩, ⟨r,r⟩) of the new r, z = D⁻¹r,
/// summed in f64 here (the kernel sums in f32 per workgroup). Each entry's p and r are what
/// the kernel writes, bit for bit.
pub fn reliable_replace(
    r: &mut [f32],
    p: &mut [f32],
    r32: &[f32],
    dinv: Option<&[f32]>,
) -> (f64, f64) {
    let (mut rz, mut rr) = (0.0f64, 0.0f64);
    for i in 0..r.len() {
        let rn = r32[i];
        let d = dinv.map_or(1.0, |d| d[i]);
        p[i] += d * (rn - r[i]);
        r[i] = rn;
        rz += f64::from(rn * d * rn);
        rr += f64::from(rn * rn);
    }
    (rz, rr)
}

/// The CPU twin of the `refine_residual_ds` kernel, operation for operation: r_i = b_i −
/// Σ_j a_ij·x_j in double-single ([`Ds`]; A's values rounded to Ds with [`Ds::from_f64`]),
/// returned as r·`hint` rounded to f32 (r's hi part times the power of two `hint`) with
/// ‖r‖₂ from those f32 values (summed in f64 here, in f32 partials on the GPU).
pub fn residual_ds(a: &Csr<f64>, x: &[Ds], b: &[Ds], hint: f32, mode: TwoProd) -> (Vec<f32>, f64) {
    let (rows, cols, vals) = (a.row_ptr(), a.col_idx(), a.values());
    let r32: Vec<f32> = (0..a.nrows())
        .map(|i| {
            let mut r = b[i];
            for k in rows[i] as usize..rows[i + 1] as usize {
                r = r.sub(Ds::from_f64(vals[k]).mul(x[cols[k] as usize], mode));
            }
            r.hi * hint
        })
        .collect();
    let sum: f64 = r32.iter().map(|&v| v as f64 * v as f64).sum();
    (r32, sum.sqrt() / hint as f64)
}

/// Solves A x = b by mixed-precision refinement on the CPU: f64 outer loop, f32 inner solves
/// by [`super::solve`] with `opts` (the reference for the GPU's [`refine`] runs).
///
/// ```
/// use krylov_wgpu::base::RefineOptions;
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::SolveOptions;
/// let a = poisson_2d_fd::<f64>(16);
/// let b = a.mul_vec(&vec![1.0; a.ncols()])?;
/// let opts = SolveOptions { rtol: 1e-12, ..Default::default() };
/// let sol = krylov_wgpu::cpu::mixed::solve(&a, &b, None, &opts, &RefineOptions::default())?;
/// assert!(sol.report.converged && sol.report.relative_residual <= 1e-12);
/// assert!(sol.report.refinement.unwrap().outer_iterations >= 2);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn solve(
    a: &Csr<f64>,
    b: &[f64],
    x0: Option<&[f64]>,
    opts: &SolveOptions,
    refine_opts: &RefineOptions,
) -> Result<Solution<f64>> {
    // Rows reordered (or not) and balanced (or not) once for the outer loop and every inner
    // solve, as on the GPU; the system is checked after the reordering (a zero diagonal the
    // matching moves off is no error for Jacobi).
    super::with_reordering(a, b, x0, opts, opts.reorder, |a, b, x0, opts| {
        crate::matrix::validate_system(a, b, opts)?;
        crate::matrix::check_initial_guess(x0, a.ncols())?;
        let as_given = SolveOptions {
            reorder: crate::base::options::Reorder::None,
            equilibrate: false,
            ..opts.clone()
        };
        let a32 = a.cast::<f32>()?;
        let mut report = SolveReport::new(
            opts.method,
            opts.variant,
            Precision::F32,
            a.nrows(),
            a.nnz(),
        );
        report.b_norm = super::norm2_f64(b);
        let mut outer = CpuOuter::new(a, b, x0);
        let mut inner = |rhs: &[f32], o: &SolveOptions| super::solve(&a32, rhs, None, o);
        let x = refine(&mut outer, &mut inner, &as_given, refine_opts, &mut report)?;
        Ok(Solution { x, report })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::Method;
    use crate::matrix::generators::{poisson_2d_fd, random_nonsymmetric};

    fn check(a: &Csr<f64>, method: Method, rtol: f64) -> Solution<f64> {
        let b: Vec<f64> = (0..a.nrows()).map(|i| 1.0 + (i % 7) as f64 * 0.3).collect();
        let opts = SolveOptions {
            method,
            rtol,
            ..Default::default()
        };
        let sol = solve(a, &b, None, &opts, &RefineOptions::default()).unwrap();
        let true_rel = super::super::true_relative_residual(a, &b, &sol.x);
        assert!(sol.report.converged, "{}", sol.report.reason_detail);
        assert!(true_rel <= rtol * 1.001, "{true_rel:e}");
        assert!(
            (sol.report.relative_residual - true_rel).abs() <= 1e-3 * true_rel,
            "{} vs {true_rel}",
            sol.report.relative_residual
        );
        sol
    }

    #[test]
    fn reaches_f64_accuracy_that_f32_alone_cannot() {
        let a = poisson_2d_fd::<f64>(24);
        let sol = check(&a, Method::Cg, 1e-11);
        let rr = sol.report.refinement.unwrap();
        // Each inner solve gains about 1e-4: 1e-11 takes three outer steps or more.
        assert!(rr.outer_iterations >= 3, "{rr:?}");
        assert_eq!(
            rr.inner_iterations.iter().sum::<usize>(),
            sol.report.iterations
        );
        assert_eq!(rr.outer_residuals.len(), rr.outer_iterations + 1);
        assert!(rr.outer_residuals.windows(2).all(|w| w[1] < w[0]), "{rr:?}");
        // f32 alone stops far above: its true residual cannot reach 1e-11.
        let b: Vec<f32> = (0..a.nrows()).map(|i| 1.0 + (i % 7) as f32 * 0.3).collect();
        let f32_opts = SolveOptions {
            rtol: 1e-11,
            ..Default::default()
        };
        let plain = super::super::solve(&a.cast::<f32>().unwrap(), &b, None, &f32_opts).unwrap();
        assert!(!plain.report.converged);
    }

    #[test]
    fn nonsymmetric_gmres_and_bicgstab() {
        let a = random_nonsymmetric::<f64>(200, 5, 3);
        for method in [Method::Gmres, Method::Bicgstab] {
            check(&a, method, 1e-10);
        }
    }

    #[test]
    fn undo_restores_x_exactly_after_a_huge_step() {
        let a = poisson_2d_fd::<f64>(4);
        let b = vec![1.0; a.nrows()];
        let x0: Vec<f64> = (0..a.nrows()).map(|i| 1.0 + i as f64 / 7.0).collect();
        let mut outer = CpuOuter::new(&a, &b, Some(&x0));
        outer.update(&vec![3.0; a.nrows()], 1e30).unwrap();
        outer.undo().unwrap();
        assert_eq!(outer.solution().unwrap(), x0);
    }

    /// An outer half whose residual overflows (as f32's r·hint does on a GPU) once x is huge.
    struct Overflowing<'a>(CpuOuter<'a>);

    impl Outer for Overflowing<'_> {
        fn precision(&self) -> &'static str {
            "f64"
        }
        fn residual(&mut self, hint: f64) -> Result<(f64, Vec<f32>)> {
            let (norm, r) = self.0.residual(hint)?;
            let huge = self.0.x.iter().any(|v| v.abs() > 1e30);
            Ok((if huge { f64::INFINITY } else { norm }, r))
        }
        fn update(&mut self, d: &[f32], scale: f64) -> Result<()> {
            self.0.update(d, scale)
        }
        fn undo(&mut self) -> Result<()> {
            self.0.undo()
        }
        fn solution(&mut self) -> Result<Vec<f64>> {
            self.0.solution()
        }
    }

    #[test]
    fn a_diverged_inner_solve_is_undone_and_named() {
        let a = poisson_2d_fd::<f64>(4);
        let b = vec![1.0; a.nrows()];
        let mut outer = Overflowing(CpuOuter::new(&a, &b, None));
        let n = a.nrows();
        // An inner solve that "returns" a huge correction, as a diverged f32 BiCGStab does.
        let mut inner = |_: &[f32], o: &SolveOptions| {
            let mut report = SolveReport::new(o.method, o.variant, Precision::F32, n, a.nnz());
            report.iterations = 5;
            Ok(Solution {
                x: vec![1e38f32; n],
                report,
            })
        };
        let mut report = SolveReport::new(
            Method::Cg,
            crate::base::Variant::Pipelined,
            Precision::F32,
            n,
            a.nnz(),
        );
        report.b_norm = crate::cpu::norm2_f64(&b);
        let x = refine(
            &mut outer,
            &mut inner,
            &SolveOptions::default(),
            &RefineOptions::default(),
            &mut report,
        )
        .unwrap();
        assert_eq!(
            report.reason,
            StopReason::Stagnation,
            "{}",
            report.reason_detail
        );
        assert!(!report.converged);
        assert_eq!(x, vec![0.0; n], "x restored to x0");
        assert!(
            (report.relative_residual - 1.0).abs() < 1e-12,
            "{}",
            report.relative_residual
        );
    }

    #[test]
    fn bad_options_are_errors() {
        let a = poisson_2d_fd::<f64>(4);
        let b = vec![1.0; a.nrows()];
        for inner_rtol in [0.0, 1.0, f64::NAN] {
            let r = RefineOptions {
                inner_rtol,
                ..Default::default()
            };
            assert!(solve(&a, &b, None, &SolveOptions::default(), &r).is_err());
        }
    }
}
