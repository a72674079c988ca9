//! Mixed-precision CG with reliable updates: one f32 pipelined CG iteration runs to the end,
//! and whenever its residual has fallen by [`FOLD_FACTOR`] since the last update, its x is
//! folded into the high-precision x and its residual replaced by b − Ax computed in the
//! outer precision — on the GPU, between two batches, with the search direction kept.
//!
//! Restarted refinement ([`crate::cpu::mixed::refine`]) solves A d = r from scratch at every
//! outer step, so CG loses its superlinear phase each time: 1.5–1.8× f64's iterations on the
//! H200 (BENCHMARKS.md, "Where mixed refinement's time goes"). Keeping p across the
//! replacement (the "reliable updates" of Sleijpen & van der Vorst, used for mixed-precision
//! CG by Clark et al.) keeps the f32 iteration on f64's course: x_hi holds the solution,
//! the f32 x only the correction since the last fold (small, so f32 holds it well), and the
//! recursive residual's drift is reset at every fold.
//!
//! One fold, recorded between `update_cg` and `spmv_dot_cg` of an iteration
//! (`GpuOuter::record_fold` + `reliable_replace`): x_hi += x32 / hint, x32 := 0,
//! r = b − A·x_hi in the outer precision, then CG's r := f32(r·hint) with p += D⁻¹(r_new −
//! r_old) (so p = z + β·p_prev holds for the new z), and ⟨r,z⟩, ⟨r,r⟩ recomputed for the
//! `spmv_dot_cg` that follows: the pipelined recurrences (paper 000, eq. 3) stay consistent,
//! as if they had produced the true residual. 3 launches and 3 copies (r also becomes CG's b,
//! what a restart starts from), no host transfer. `hint`, a power of two near 1/‖r₀‖, is
//! fixed for the solve, so x32 and r share one scale throughout.
//! The true-residual guard folds and reads ‖b − A·x_hi‖ in the outer precision; a
//! restart after a gap (the driver's rule) starts CG afresh from the folded residual.
//!
//! On lavapipe (rtol 1e-10) it needs fewer iterations than restarted refinement on 8 of 9
//! problems (nos6 + Jacobi 245 against 705, poisson2d:128 372 against 503, bcsstk21 515
//! against 558); the exception is 494_bus without a preconditioner (6870 against 3839): a
//! badly scaled matrix on which f32 CG loses its way and restarts help. Restarting p when a
//! fold interval doubled fixed that case only partly (5034) and cost every other one
//! (poisson2d:128 450, bcsstk21 638), so it was not kept; Jacobi is the cure there (902
//! against 1013).

use std::cell::Cell;

use crate::base::Precision;
use crate::base::error::{KrylovError, Result};
use crate::base::{Method, RefineOptions, RefinementReport, Solution, SolveOptions, SolveReport};
use crate::cpu::mixed::Outer;
use crate::gpu::kernels::solver_kernel;
use crate::gpu::{Batch, Engine, Kernel};
use crate::matrix::Csr;
use crate::solvers::cg::System;
use crate::solvers::cg::pipelined::PipelinedCg;
use crate::solvers::driver::{GpuIterative, LoopEnd, PaperLoop, Run, StopCheck, drive};
use crate::solvers::system::{GpuSystem, Start, solver_buffers_for, start_gpu_solve};
use crate::solvers::{CheckMode, Monitor, Precond, Refinement, Variant};

use super::GpuOuter;

/// A fold when the residual has fallen below this fraction of the last fold's. The recursive
/// residual drifts from b − Ax by about ε₃₂·κ·‖r at the last fold‖ and x32 holds the
/// correction since then in f32: frequent folds keep both near ε₃₂·κ/δ of the current residual
/// (δ = 0.1 in the mixed-precision CG of Clark et al.); a fold costs about one f64 SpMV. On
/// lavapipe (poisson2d:128, laplace3d:32, rtol 1e-10) 0.3 took 2–8 % fewer iterations than 0.1,
/// and f32 CG itself needs ~1.35× f64's iterations there however often it folds (a NumPy
/// classical CG with exact folds: 369 against 268), which no fold schedule recovers.
pub const FOLD_FACTOR: f64 = 0.3;

/// Whether `--precision mixed` runs reliable-update CG for these options: pipelined CG with
/// no preconditioner or Jacobi (the fused kernels), device-side checks, `refinement: auto`.
pub fn applies(opts: &SolveOptions, refine: &RefineOptions) -> bool {
    refine.refinement == Refinement::Auto
        && opts.method == Method::Cg
        && opts.variant == Variant::Pipelined
        && matches!(opts.precond, Precond::None | Precond::Jacobi)
        && opts.check_mode == CheckMode::Device
}

/// Pipelined f32 CG whose batches may carry a fold in their first iteration, between its two
/// kernels (see the module documentation).
struct ReliableCg<'a> {
    cg: PipelinedCg<'a, f32>,
    sys: &'a System<f32>,
    outer: &'a GpuOuter<'a>,
    zeros: &'a wgpu::Buffer,
    replace: (Kernel, wgpu::BindGroup),
    groups: u32,
    /// A fold is due in the next iteration recorded (set by `before_batch` from the residuals
    /// read back so far).
    due: Cell<bool>,
    /// The residual norm (f32 system's units) at the last fold or the start.
    at_fold: Cell<f64>,
    folds: Cell<usize>,
}

impl GpuIterative<f32> for ReliableCg<'_> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        let rr = self.cg.setup(engine, run, mode)?;
        if let Some(rr) = rr {
            self.at_fold.set(rr.max(0.0).sqrt());
        }
        Ok(rr)
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.cg.record_update(batch);
        if self.due.take() {
            self.outer.record_fold(batch, &self.sys.x, self.zeros);
            batch.dispatch(&self.replace.0, &self.replace.1, self.groups);
            batch.copy(self.outer.r32(), 0, &self.sys.b, 0, 4 * self.sys.n as u64);
            self.folds.set(self.folds.get() + 1);
        }
        self.cg.record_spmv_dot(batch);
    }

    fn before_batch(&self, _batch: &mut Batch<'_>, history: &[f64]) {
        let Some(&last) = history.last() else {
            return;
        };
        if last <= FOLD_FACTOR * self.at_fold.get() {
            self.due.set(true);
            self.at_fold.set(last);
        }
    }

    /// A quarter of the iterations the recent convergence rate needs to fall by
    /// [`FOLD_FACTOR`], between 4 and 128: a fold is decided from residuals read back one or
    /// two batches behind the GPU, so long batches would make it late (on lavapipe a half took
    /// 4–7 % more iterations, an uncapped batch up to 15 %).
    fn batch_cap(&self, history: &[f64]) -> Option<usize> {
        let n = history.len();
        if n < 3 {
            return Some(4);
        }
        let span = (n - 1).min(32);
        let (r0, r1) = (history[n - 1 - span], history[n - 1]);
        let rate = (r1.ln() - r0.ln()) / span as f64;
        let per_fold = if rate < 0.0 {
            FOLD_FACTOR.ln() / rate
        } else {
            128.0
        };
        Some(((per_fold / 4.0).ceil() as usize).clamp(4, 128))
    }

    fn paper_loop(&self, _lp: &PaperLoop<'_>, _run: &mut Run<'_>) -> Result<LoopEnd> {
        Err(KrylovError::Unsupported(
            "reliable-update CG checks convergence on the device (check mode `device`)".into(),
        ))
    }
}

/// The guard: fold, then ‖b − A·x_hi‖ in the outer precision, relative to ‖r₀‖ (the f32
/// system's ‖b‖, which the driver's threshold is relative to).
struct ReliableCheck<'a> {
    sys: &'a System<f32>,
    outer: &'a GpuOuter<'a>,
    zeros: &'a wgpu::Buffer,
    r0: f64,
    /// ‖b − A·x_hi‖ at the last check, and the checks made.
    last: Cell<f64>,
    checks: Cell<usize>,
    history: std::cell::RefCell<Vec<f64>>,
}

impl StopCheck for ReliableCheck<'_> {
    fn true_relative(&self, engine: &Engine) -> Result<f64> {
        let mut batch = engine.begin("reliable fold");
        self.outer.record_fold(&mut batch, &self.sys.x, self.zeros);
        // A restart (the driver's, after a gap) starts CG from r = b − A·0 = this residual.
        batch.copy(self.outer.r32(), 0, &self.sys.b, 0, 4 * self.sys.n as u64);
        let norm = self.outer.submit_norm(batch)?;
        self.last.set(norm);
        self.checks.set(self.checks.get() + 1);
        self.history.borrow_mut().push(norm);
        Ok(norm / self.r0)
    }
}

/// Mixed CG with reliable updates on `engine` (see the module documentation): A (f64) and
/// its f32 copy `a32` (already uploaded in the caller's reuse scope), b and x0 in f64, x and
/// the residual in the outer precision (double-single when `double_single`). `report` comes
/// started (device, ‖b‖); it is returned filled, with `refinement.strategy = "reliable"`.
#[allow(clippy::too_many_arguments)]
pub(super) fn solve(
    engine: &Engine,
    a: &Csr<f64>,
    a32: &Csr<f32>,
    b: &[f64],
    x0: Option<&[f64]>,
    opts: &SolveOptions,
    double_single: bool,
    mut report: SolveReport,
    monitor: &mut dyn Monitor,
) -> Result<Solution<f64>> {
    let counts0 = engine.counters().snapshot();
    let b_norm = report.b_norm;
    let tau = opts.threshold(b_norm);
    let rel = |v: f64| v / if b_norm > 0.0 { b_norm } else { 1.0 };
    let mut outer = GpuOuter::upload(engine, a, b, x0, double_single)?;
    let r0 = outer.residual_norm(crate::cpu::mixed::pow2_inverse(b_norm))?;
    let mut rr = RefinementReport {
        outer_precision: outer.precision().into(),
        inner_precision: Precision::F32,
        inner_rtol: vec![FOLD_FACTOR],
        outer_iterations: 0,
        inner_iterations: Vec::new(),
        inner_reasons: Vec::new(),
        outer_residuals: vec![rel(r0)],
        inner_setup_seconds: 0.0,
        inner_seconds: Vec::new(),
        inner_loop_seconds: Vec::new(),
        strategy: "reliable".into(),
    };
    if !r0.is_finite() || r0 <= tau {
        // Nothing to iterate (x0 solves it already) or nothing finite to iterate on.
        report.converged = r0 <= tau;
        report.reason = if report.converged {
            crate::base::StopReason::Converged
        } else {
            crate::base::StopReason::NonFinite {
                quantity: "initial residual".into(),
            }
        };
        report.reason_detail = format!("{} at iteration 0", report.reason);
        report.relative_residual = rel(r0);
        report.history = vec![r0];
        report.refinement = Some(rr);
        let x = outer.solution()?;
        return Ok(Solution { x, report });
    }
    // The f32 system A·x32 = r₀·hint from x32 = 0, stopped at τ·hint.
    let hint = crate::cpu::mixed::pow2_inverse(r0);
    let (_, r32) = outer.residual(hint)?;
    outer.set_scale(1.0 / hint);
    let o = SolveOptions {
        rtol: tau / r0,
        atol: 0.0,
        ..opts.clone()
    };
    let Start {
        report: mut inner,
        threshold,
        ..
    } = start_gpu_solve(engine, Method::Cg, a32, &r32, None, &o)?;
    if !crate::solvers::reuse::is_symmetric(engine, a32, 1e-10) {
        return Err(KrylovError::MethodMismatch(
            "cg needs a symmetric positive definite matrix and this one is not symmetric; use \
             bicgstab or gmres"
                .into(),
        ));
    }
    let sys = System::new(
        engine,
        GpuSystem::upload(engine, a32, &r32, None, &o, &mut inner)?,
    )?;
    let bufs = solver_buffers_for::<f32>(engine, sys.n, sys.a.passes(), 3, &o, &mut inner)?;
    let zeros = engine.storage_zeroed::<f32>("reliable zeros", sys.n)?;
    let replace = solver_kernel::<f32>(
        engine,
        "reliable_replace",
        engine.shader_config(Precision::F32),
    )?;
    let params = engine.uniform_from("reliable params", &sys.params(&bufs));
    let mut e = bufs.common(&params);
    e.extend([(5, &sys.r), (6, &sys.p), (7, outer.r32()), (8, sys.dinv())]);
    let bg_replace = engine.bind_group_at(&replace, &e);
    let solver = ReliableCg {
        cg: PipelinedCg::new(engine, &sys, &bufs)?,
        sys: &sys,
        outer: &outer,
        zeros: &zeros,
        replace: (replace, bg_replace),
        groups: bufs.groups,
        due: Cell::new(false),
        at_fold: Cell::new(f64::INFINITY),
        folds: Cell::new(0),
    };
    let check = ReliableCheck {
        sys: &sys,
        outer: &outer,
        zeros: &zeros,
        r0,
        last: Cell::new(r0),
        checks: Cell::new(0),
        history: Default::default(),
    };
    drive(
        engine, &solver, &check, &bufs, &o, threshold, None, monitor, &mut inner, &counts0,
    )?;
    let (folds, checks, last) = (solver.folds.get(), check.checks.get(), check.last.get());
    let checked = check.history.take();
    drop((solver, check));
    let x = outer.solution()?;
    // The f32 system's residuals are r·hint: back to A x = b's units.
    inner.history.iter_mut().for_each(|v| *v /= hint);
    inner.b_norm = b_norm;
    inner.relative_residual = rel(last);
    rr.outer_iterations = folds + checks;
    rr.inner_iterations = vec![inner.iterations];
    rr.inner_reasons = vec![inner.reason.to_string()];
    rr.outer_residuals.extend(checked.iter().map(|&v| rel(v)));
    rr.inner_seconds = vec![inner.seconds];
    rr.inner_loop_seconds = vec![inner.loop_seconds];
    inner.notes.push(format!(
        "mixed CG with reliable updates: {} fold(s) of the f32 correction into the {} x with \
         the residual replaced by b - Ax computed in {}, the search direction kept",
        folds, rr.outer_precision, rr.outer_precision
    ));
    inner.device = report.device;
    inner.device_reason = report.device_reason;
    inner.notes.splice(0..0, report.notes);
    inner.refinement = Some(rr);
    inner.counts = engine.counters().snapshot().since(&counts0);
    Ok(Solution { x, report: inner })
}
