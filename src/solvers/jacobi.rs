//! The Jacobi iteration x ← x + D⁻¹(b − Ax) on the GPU (paper 001), f32 and f64.
//!
//! **One launch per sweep**: `jacobi_sweep` computes r_k = b − A·x_k row by row, writes
//! x_{k+1} = x_k + D⁻¹r_k and the first reduction stage of ‖r_k‖². The second stage of
//! ‖r_k‖² is done redundantly by every workgroup of the next sweep (paper 000's scheme, no
//! launch of its own), which records it, tests convergence and divergence, and — when the
//! solve stops — returns before writing, so x_k is the x returned. x rotates through three
//! buffers (sweep k reads buffer k mod 3 and writes buffer k + 1 mod 3; x_k survives the
//! sweep that finishes its residual), and so do the partial slots.
//!
//! * `paper` mode: the host reads the partial sums of ‖r_k‖² after every sweep and finishes
//!   them itself: **1 launch, 1 readback, 0 uploads per sweep** (and 1 global reduction,
//!   ‖r_k‖², in both modes).
//! * `device` mode: the setup runs two sweeps (the second finishes ‖r_0‖²); every further
//!   sweep records one residual; the host reads the history **once per batch**.
//!
//! The report's `variant` is whatever the options say: the Jacobi iteration has a single
//! formulation and both variants run this kernel (as on the CPU, [`crate::cpu::jacobi`]).
//! `opts.precond` is ignored (D⁻¹ is the method itself).
//!
//! It stops as [`StopReason::Diverged`] when ‖r_k‖ exceeds
//! [`DIVERGENCE_FACTOR`](crate::cpu::DIVERGENCE_FACTOR) × ‖r_0‖ or is not finite (the same
//! rule as the CPU reference), with a `reason_detail` that says why: the matrix is not
//! diagonally dominant enough (the spectral radius of I − D⁻¹A is ≥ 1). A zero diagonal entry
//! is the typed error [`KrylovError::ZeroDiagonal`](crate::KrylovError::ZeroDiagonal) (from [`validate_system`](crate::solvers::validate_system)).
//!
//! [`StopReason::Diverged`]: crate::solvers::StopReason::Diverged

use std::cell::{Cell, OnceCell};

use crate::base::error::Result;
use crate::base::scalar::{Precision, Scalar};
use crate::gpu::ds::TrueResidualDs;
use crate::gpu::kernels::{GpuStatus, Params, SolverBuffers, solver_kernel};
use crate::gpu::{Batch, Engine, GpuOperator, Kernel};
use crate::matrix::Csr;
use crate::solvers::{CheckMode, Method, Monitor, Precond, Solution, SolveOptions, StopReason};

use super::driver::{GpuIterative, LoopEnd, PaperLoop, Run, StopCheck, add, drive, sum_component};
use super::system::{GpuSystem, Start, solver_buffers_for, start_gpu_solve};

// Kernel flags (JACOBI_* in shaders/jacobi/jacobi_sweep.wgsl).
const FLAG_START: u32 = 16;
const FLAG_FIRST: u32 = 32;
const FLAG_CHECKS: u32 = 64;
/// How the loop reports a divergence through the shared driver (which knows breakdowns,
/// not divergence); [`solve`] turns it into [`StopReason::Diverged`].
const DIVERGED: &str = "jacobi divergence";

/// Which kind of sweep a launch is.
#[derive(Clone, Copy)]
enum Sweep {
    /// The setup sweep: no residual to finish yet.
    Start = 0,
    /// Finishes ‖r_0‖² (and stores it as the divergence reference).
    First = 1,
    Normal = 2,
}

struct JacobiIteration<'a, T> {
    engine: &'a Engine,
    a: &'a Csr<T>,
    b: &'a [T],
    n: usize,
    bufs: &'a SolverBuffers,
    mode: CheckMode,
    sweep: Kernel,
    /// The three x buffers of the rotation.
    x: [wgpu::Buffer; 3],
    /// A and b on the device, and the f32 guard's kernel bound to each x buffer (made on
    /// first use).
    op: &'a dyn GpuOperator<T>,
    b_gpu: &'a wgpu::Buffer,
    ds: [OnceCell<TrueResidualDs>; 3],
    /// `[kind][k]`: sweep of that kind reading x from buffer k, writing buffer k + 1 and
    /// partial slot k, finishing slot k − 1 (mod 3).
    bg: [[wgpu::BindGroup; 3]; 3],
    /// Rotation index of the next sweep.
    next: Cell<usize>,
    /// Rotation index of x at the last setup and the iteration it was (x_k lives in buffer
    /// `(base + k − it0) mod 3`).
    base: Cell<(usize, usize)>,
    /// `paper` mode: the latest iteration whose residual the host has (x's index).
    latest: Cell<usize>,
    /// `paper` mode: ‖r_0‖ (the divergence reference).
    r0: Cell<f64>,
}

impl<'a, T: Scalar> JacobiIteration<'a, T> {
    fn dispatch(&self, batch: &mut Batch<'_>, kind: Sweep) {
        let k = self.next.get();
        batch.dispatch(&self.sweep, &self.bg[kind as usize][k], self.bufs.groups);
        self.next.set((k + 1) % 3);
    }

    /// The rotation index of the buffer holding x_k.
    fn x_buffer(&self, k: usize) -> usize {
        let (base, it0) = self.base.get();
        (base + k - it0) % 3
    }

    /// The index k of the last residual recorded (the x the solve returns).
    fn last_iteration(&self) -> Result<usize> {
        match self.mode {
            CheckMode::Paper => Ok(self.latest.get()),
            CheckMode::Device => {
                let st: Vec<u32> = self.engine.read(&self.bufs.state, 1, 1)?;
                Ok((st[0] as usize).saturating_sub(1))
            }
        }
    }

    fn read_x(&self, k: usize) -> Result<Vec<T>> {
        self.engine.read(&self.x[self.x_buffer(k)], 0, self.n)
    }
}

impl<T: Scalar> GpuIterative<T> for JacobiIteration<'_, T> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        let it0 = run.history.len();
        // After a restart x_it0 is where the last loop left it.
        let base = if it0 == 0 { 0 } else { self.x_buffer(it0) };
        self.base.set((base, it0));
        self.next.set(base);
        self.latest.set(it0);
        let mut batch = engine.begin("jacobi setup");
        self.dispatch(&mut batch, Sweep::Start);
        let g = self.bufs.groups as usize;
        match mode {
            CheckMode::Device => {
                self.dispatch(&mut batch, Sweep::First);
                let v: Vec<T> = batch.submit_and_read(&self.bufs.history, it0, 1)?;
                Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
            }
            CheckMode::Paper => {
                let parts: Vec<T> =
                    batch.submit_and_read(&self.bufs.partials, 4 * g * base, 4 * g)?;
                let rr = sum_component(&parts, g, 0, 0);
                self.r0.set(rr.sqrt());
                Ok(Some(rr))
            }
        }
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.dispatch(batch, Sweep::Normal);
    }

    /// One sweep per submit and one readback of its partial sums of ‖r_k‖², finished here.
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        let g = self.bufs.groups as usize;
        let r0 = self.r0.get();
        let mut kind = Sweep::First;
        loop {
            if let Some(end) = run.paper_stop(opts.max_iter) {
                return Ok(end);
            }
            let before = engine.counters().snapshot();
            let slot = self.next.get();
            let mut batch = engine.begin("jacobi sweep");
            self.dispatch(&mut batch, kind);
            kind = Sweep::Normal;
            let parts: Vec<T> = batch.submit_and_read(&self.bufs.partials, 4 * g * slot, 4 * g)?;
            run.loop_counts = add(
                &run.loop_counts,
                &engine.counters().snapshot().since(&before),
            );
            run.recorded += 1;
            run.batch_size = 1;
            let res = sum_component(&parts, g, 0, 0).sqrt();
            run.push(res);
            self.latest.set(run.iterations());
            if !res.is_finite() || res > crate::cpu::DIVERGENCE_FACTOR * r0 {
                return Ok(LoopEnd::Breakdown(DIVERGED.into()));
            }
            if res <= threshold {
                return Ok(LoopEnd::Converged);
            }
        }
    }
}

/// The guard takes the x of the last recorded sweep (x rotates, so no init kernel can
/// recompute r in place): f32 solves compute ‖b − Ax‖ on the GPU in double-single
/// (`true_residual_ds` on that x buffer, no download of x), f64 solves read x back for the
/// host's f64 residual. It also decodes the sweep's divergence status.
impl<T: Scalar> StopCheck for JacobiIteration<'_, T> {
    fn true_relative(&self, engine: &Engine) -> Result<f64> {
        let k = self.last_iteration()?;
        if T::PRECISION == Precision::F32 {
            let i = self.x_buffer(k);
            let ds = match self.ds[i].get() {
                Some(ds) => ds,
                None => {
                    let made = TrueResidualDs::new(engine, self.op, &self.x[i], self.b_gpu)?;
                    self.ds[i].get_or_init(|| made)
                }
            };
            let bn = crate::cpu::norm2_f64(self.b);
            return Ok(ds.norm2::<T>(engine)?.sqrt() / if bn > 0.0 { bn } else { 1.0 });
        }
        let x = self.read_x(k)?;
        Ok(crate::cpu::true_relative_residual(self.a, self.b, &x))
    }

    fn stop_reason(&self, status: GpuStatus) -> LoopEnd {
        match status {
            GpuStatus::Converged => LoopEnd::Converged,
            // The only breakdown jacobi_sweep reports is a divergence (code 3 in state[3]).
            GpuStatus::Breakdown => LoopEnd::Breakdown(DIVERGED.into()),
            _ => LoopEnd::NonFinite,
        }
    }
}

/// Runs the Jacobi iteration on the GPU (`opts.check_mode` picks the convergence checking;
/// `opts.variant` and `opts.precond` do not change anything, see the module docs).
///
/// Errors: the input checks of [`validate_system`](crate::solvers::validate_system) (a zero diagonal entry is
/// [`KrylovError::ZeroDiagonal`](crate::KrylovError::ZeroDiagonal)), f64 on a device without SHADER_F64
/// ([`KrylovError::MissingFeature`](crate::KrylovError::MissingFeature)), buffers over the device limits. Divergence is a result
/// (`reason: diverged`, with the growth in `reason_detail`), never a convergence.
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::random_nonsymmetric;
/// use krylov_wgpu::solvers::{jacobi, Method, SolveOptions};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = random_nonsymmetric::<f64>(2000, 7, 42); // strictly diagonally dominant
/// let b = vec![1.0; a.nrows()];
/// let opts = SolveOptions { method: Method::Jacobi, rtol: 1e-10, ..Default::default() };
/// let sol = jacobi::solve(&engine, &a, &b, None, &opts, &mut ())?;
/// assert!(sol.report.converged);
/// assert_eq!(sol.report.dispatches_per_iteration, 1.0);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn solve<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    let Start {
        counts0,
        mut report,
        threshold,
    } = start_gpu_solve(engine, Method::Jacobi, a, b, x0, opts)?;
    // The iteration is x ← x + M⁻¹(b − Ax) with M the Jacobi preconditioner, whatever
    // `opts.precond` says; x rotates through three buffers (the system's x is the first).
    let with_jacobi = SolveOptions {
        precond: Precond::Jacobi,
        ..opts.clone()
    };
    let sys = GpuSystem::upload(engine, a, b, x0, &with_jacobi, &mut report)?;
    let n = sys.n;
    let GpuSystem {
        a: gpu_a,
        b: b_buf,
        x: x_first,
        ..
    } = &sys;
    let dinv = sys.dinv();
    let x = [
        x_first.clone(),
        sys.vector(engine, "x (rotation 1)")?,
        sys.vector(engine, "x (rotation 2)")?,
    ];
    let bufs = solver_buffers_for::<T>(engine, n, gpu_a.passes(), 3, opts, &mut report)?;
    let groups = bufs.groups;
    let sweep = solver_kernel::<T>(engine, "jacobi_sweep", gpu_a.shader_config(engine))?;
    let checks = if opts.check_mode == CheckMode::Device {
        FLAG_CHECKS
    } else {
        0
    };
    let bind = |kind: u32, k: usize| {
        let params = engine.uniform_from(
            "jacobi params",
            &Params {
                n: n as u32,
                groups,
                slot: k as u32,
                num: ((k + 2) % 3) as u32,
                flags: kind | checks,
                ..Default::default()
            },
        );
        let mut e = gpu_a.bindings(false);
        e.extend([(8, b_buf), (9, dinv), (10, &x[k]), (11, &x[(k + 1) % 3])]);
        bufs.bind(engine, &sweep, &params, &e)
    };
    let bg = [FLAG_START, FLAG_FIRST, 0].map(|kind| [0, 1, 2].map(|k| bind(kind, k)));
    let solver = JacobiIteration {
        engine,
        a,
        b,
        n,
        bufs: &bufs,
        mode: opts.check_mode,
        sweep,
        x,
        op: gpu_a,
        b_gpu: b_buf,
        ds: Default::default(),
        bg,
        next: Cell::new(0),
        base: Cell::new((0, 0)),
        latest: Cell::new(0),
        r0: Cell::new(0.0),
    };
    drive(
        engine,
        &solver,
        &solver,
        &bufs,
        opts,
        threshold,
        None,
        monitor,
        &mut report,
        &counts0,
    )?;
    let sol_x = solver.read_x(report.iterations)?;
    let diverged = match &report.reason {
        StopReason::Breakdown { quantity } => quantity == DIVERGED,
        StopReason::NonFinite { .. } => true,
        _ => false,
    };
    if diverged {
        let k = report.iterations;
        let r0 = report.history.first().copied().unwrap_or(f64::NAN);
        let rk = report.history.last().copied().unwrap_or(f64::NAN);
        report.reason = StopReason::Diverged;
        report.reason_detail = format!(
            "diverged at iteration {k}: the residual grew from {r0:.3e} to {rk:.3e} ({:.1e}x) — \
             the matrix is not diagonally dominant enough for the Jacobi iteration (the \
             spectral radius of I - D^-1 A is not below 1)",
            rk / r0
        );
    }
    report.counts = engine.counters().snapshot().since(&counts0);
    Ok(Solution { x: sol_x, report })
}
