//! Fused CG: pipelined CG's recurrences (paper 000, Alg. 2 with eq. 3) in **one launch per
//! iteration** and one global reduction, `update_spmv_dot_cg`.
//!
//! [`PipelinedCg`](super::PipelinedCg) needs two launches because its product A·p reads the
//! new direction p everywhere, which only exists once `update_cg` has finished. But p's update
//! is elementwise given α and β: p' = D⁻¹(r − αAp) + βp. So the product can form p' on the
//! fly from the previous iterate's r, Ap and p wherever it reads it, and the same launch
//! writes x, r', p' and Ap' for its own rows. The previous iterate is read while the new one
//! is written, so r, p and Ap live in two sets that successive launches alternate (A → B,
//! B → A); x is updated in place (only its own row reads it).
//!
//! A launch tests the residual of the iterate it starts from: the device-side stop comes one
//! launch later than pipelined CG's. The setup therefore records the first fused launch after
//! `cg_init` and `spmv_dot_cg` (device mode), so that the loop's k-th launch records the
//! k-th residual, and the launch an iteration limit ends on only records and tests (so x is
//! the iterate the history ends with). In `paper` mode the host finishes each launch's sums
//! itself and needs neither; a launch that stops writes ‖r‖² = −1 into its slot, so the host
//! asks the status word why rather than reading an older launch's sums.

use std::cell::Cell;

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{Params, SolverBuffers, solver_kernel};
use crate::gpu::{Batch, Engine, Kernel};
use crate::solvers::CheckMode;

use super::super::driver::{GpuIterative, LoopEnd, PaperLoop, Run, counted, sum_component};
use super::{PipelinedCg, System};

/// Partial-sum slots of the fused launches: the first writes slot 2, then they alternate
/// (slots 0 and 1 are `cg_init`'s and `spmv_dot_cg`'s).
pub(super) const SLOTS: u32 = 4;
const FLAG_FIRST: u32 = 16;
const FLAG_RECORD_ONLY: u32 = 32;

/// Fused CG: `update_spmv_dot_cg`, one launch and one global reduction per iteration
/// (`Variant::Fused` of [`cg::solve`](super::solve)).
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{cg, SolveOptions, Variant};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f32>(64);
/// let b = vec![1.0f32; a.nrows()];
/// let opts = SolveOptions { variant: Variant::Fused, rtol: 1e-5, ..Default::default() };
/// let sol = cg::solve(&engine, &a, &b, None, &opts, &mut ())?;
/// assert!(sol.report.converged);
/// assert_eq!(sol.report.dispatches_per_iteration, 1.0);
/// assert_eq!(sol.report.reductions_per_iteration, 1.0);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub struct FusedCg<'a, T> {
    steps: PipelinedCg<'a, T>,
    bufs: &'a SolverBuffers,
    fused: Kernel,
    /// Launches of the loop: [first, A → B, B → A]; the record-only ones [A → B, B → A].
    bg: [wgpu::BindGroup; 3],
    bg_last: [wgpu::BindGroup; 2],
    /// Fused launches recorded since the last setup (which set the next one reads).
    launched: Cell<usize>,
    /// The iteration limit of the loop: the setup's first fused launch only within it.
    max_iter: usize,
    /// Kept alive beside the bind groups: the second set of r, p, Ap.
    _set_b: [wgpu::Buffer; 3],
}

impl<'a, T: Scalar> FusedCg<'a, T> {
    pub(crate) fn new(
        engine: &Engine,
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
        max_iter: usize,
    ) -> Result<Self> {
        let steps = PipelinedCg::new(engine, sys, bufs)?;
        let fused = solver_kernel::<T>(engine, "update_spmv_dot_cg", sys.a.shader_config(engine))?;
        let set_b = sys.second_set(engine)?;
        let set_a = [&sys.r, &sys.p, &sys.ap];
        let bind = |from: [&wgpu::Buffer; 3], to: [&wgpu::Buffer; 3], slot, dst, flags| {
            let params = engine.uniform_from(
                "fused cg params",
                &Params {
                    slot,
                    dst,
                    flags,
                    ..sys.params(bufs)
                },
            );
            let mut e = bufs.common(&params);
            e.extend([
                (5, &sys.x),
                (6, from[0]),
                (7, from[1]),
                (8, from[2]),
                (9, sys.dinv()),
                (10, to[0]),
                (11, to[1]),
                (12, to[2]),
            ]);
            e.extend(sys.a.bindings(false));
            engine.bind_group_at(&fused, &e)
        };
        let b = [&set_b[0], &set_b[1], &set_b[2]];
        let bg = [
            bind(set_a, b, 0, 2, FLAG_FIRST),
            bind(set_a, b, 3, 2, 0),
            bind(b, set_a, 2, 3, 0),
        ];
        let bg_last = [
            bind(set_a, b, 3, 2, FLAG_RECORD_ONLY),
            bind(b, set_a, 2, 3, FLAG_RECORD_ONLY),
        ];
        Ok(FusedCg {
            steps,
            bufs,
            fused,
            bg,
            bg_last,
            launched: Cell::new(0),
            max_iter,
            _set_b: set_b,
        })
    }

    /// The bind group of the next launch (index into `bg`): first, then B → A, A → B, ….
    fn next(&self) -> usize {
        match self.launched.get() {
            0 => 0,
            k if k % 2 == 1 => 2,
            _ => 1,
        }
    }

    /// The partials slot the launch with bind group `bg` writes.
    fn written_slot(bg: usize) -> usize {
        if bg == 2 { 3 } else { 2 }
    }
}

impl<T: Scalar> GpuIterative<T> for FusedCg<'_, T> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        self.launched.set(0);
        match mode {
            CheckMode::Device => {
                let mut batch = engine.begin("cg setup");
                self.steps.record_setup(&mut batch);
                // The setup records iterate h's residual (h = entries recorded so far); the
                // first fused launch makes iterate h + 1 if the limit allows it.
                if run.history.len() < self.max_iter {
                    self.record_iteration(&mut batch);
                }
                let v: Vec<T> = batch.submit_and_read(&self.bufs.history, run.history.len(), 1)?;
                Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
            }
            CheckMode::Paper => self.steps.setup(engine, run, mode),
        }
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        let i = self.next();
        batch.dispatch(&self.fused, &self.bg[i], self.bufs.groups);
        self.launched.set(self.launched.get() + 1);
    }

    /// The launch that reaches the iteration limit records and tests its iterate only.
    fn record_last_iteration(&self, batch: &mut Batch<'_>) {
        match self.next() {
            0 => self.record_iteration(batch),
            i => {
                let last = self.fused.without_reduction();
                batch.dispatch(&last, &self.bg_last[i - 1], self.bufs.groups);
                self.launched.set(self.launched.get() + 1);
            }
        }
    }

    /// One launch per iteration, its partial sums read back and finished on the host.
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        let g = self.bufs.groups as usize;
        loop {
            if let Some(end) = run.paper_stop(opts.max_iter) {
                return Ok(end);
            }
            let slot = Self::written_slot(self.next());
            let parts: Vec<T> = counted(engine, run, |_| {
                let mut batch = engine.begin("cg iteration");
                self.record_iteration(&mut batch);
                batch.submit_and_read(&self.bufs.partials, 4 * slot * g, 4 * g)
            })?;
            run.recorded += 1;
            run.batch_size = 1;
            let rr = sum_component(&parts, g, 0, 1);
            let pap = sum_component(&parts, g, 0, 2);
            if rr < 0.0 {
                // The launch stopped on a status (⟨p,Ap⟩ ≤ 0, …): its slot says so.
                return Ok(LoopEnd::GpuStopped);
            }
            if let Some(end) = super::paper_verdict(run, rr, pap, threshold) {
                return Ok(end);
            }
        }
    }
}
