//! Cooperative CG: fused CG's iteration ([`FusedCg`](super::FusedCg)) run
//! [`ITERATIONS_PER_LAUNCH`] times per launch by workgroups that are all resident at once and
//! meet at a **grid barrier** between iterations, `cg_cooperative`.
//!
//! From 1e4 to 1e6 rows fused CG's time per iteration is largely its launch: start, tail and
//! the gap before the next one (3–8 µs on an H200) beside a product of 1–15 µs. Here a launch
//! is paid once per [`ITERATIONS_PER_LAUNCH`] iterations, and an iteration costs a barrier:
//! each workgroup adds one to an arrival counter and waits until all have arrived, then
//! finishes the global reduction redundantly from the per-workgroup partial sums (as fused
//! CG's launches do). The arithmetic is fused CG's, operation for operation: with the same
//! workgroups the two produce the same iterates bit for bit.
//!
//! A barrier between workgroups holds only if all are resident at once, which WGSL does not
//! promise. So the launch has no more workgroups than a probe launch of the same pipeline
//! found resident ([`Engine::resident_groups`]; a power of two, at most one per row chunk and
//! `Tuning::max_groups`), every wait is bounded, and a wait that runs out stops the launch
//! (status `STATUS_GRID_TIMEOUT`): [`cg::solve`](super::solve) then solves again with fused
//! CG and says so in the report. Nothing waits forever.
//!
//! Measured (BENCHMARKS.md, 2026-12-07): the buffers one workgroup writes and another reads
//! must be `@coherent` (without it an H200 computed wrong iterates), which costs the product's
//! gathers their per-core cache; on an H200 the variant is faster than fused CG only at ~1e3
//! rows (where one-workgroup CG is faster still) and 6–18 % slower from 1e4 to 1e6, on an H100
//! 3–23 % faster in 30-iteration loops up to 1e5. So it is opt-in; `auto` does not take it.
//!
//! Setup (`device` mode): `cg_init` + `spmv_dot_cg` (pipelined CG's) and a first
//! `cg_cooperative` launch of one iteration, so that each loop launch records exactly
//! [`ITERATIONS_PER_LAUNCH`] residuals (a launch tests the iterate it starts from, as fused
//! CG's do); a launch stops by itself at the iteration limit and on any status. `paper` mode:
//! one iteration per launch, its partial sums read back and finished on the host.

use std::cell::Cell;

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{Params, SolverBuffers, solver_kernel};
use crate::gpu::{Batch, Engine, Kernel};
use crate::solvers::CheckMode;

use super::super::driver::{GpuIterative, LoopEnd, PaperLoop, Run, counted, sum_component};
use super::{PipelinedCg, System};

/// Iterations one `device`-mode launch runs (at most: it stops on convergence, a failure or
/// the iteration limit). Even, so that every loop launch starts from the same set of vectors.
pub const ITERATIONS_PER_LAUNCH: usize = 16;

/// Polls of the arrival counter before a solve's wait gives up (~1–4 s on an H200: a
/// thousand times an iteration at 1e8 rows). A probe waits [`PROBE_SPIN_LIMIT`].
const SPIN_LIMIT: u32 = 1 << 22;
/// Polls before a residency probe's wait gives up (a few ms).
const PROBE_SPIN_LIMIT: u32 = 1 << 12;

/// `COOP_FIRST` / `COOP_PROBE` of `cg_cooperative.wgsl`.
const FLAG_FIRST: u32 = 1;
const FLAG_PROBE: u32 = 2;

/// Mirrors `struct CoopParams` of `cg_cooperative.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct CoopParams {
    iters: u32,
    limit: u32,
    flags: u32,
    parity: u32,
    spin_limit: u32,
    setup_groups: u32,
    pad: [u32; 2],
}

/// Cooperative CG: `cg_cooperative`, [`ITERATIONS_PER_LAUNCH`] iterations per launch, one
/// grid barrier and one global reduction per iteration (`Variant::Cooperative` of
/// [`cg::solve`](super::solve)).
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{cg, SolveOptions, Variant};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f32>(64);
/// let b = vec![1.0f32; a.nrows()];
/// let opts = SolveOptions { variant: Variant::Cooperative, rtol: 1e-5, ..Default::default() };
/// let sol = cg::solve(&engine, &a, &b, None, &opts, &mut ())?;
/// assert!(sol.report.converged);
/// assert!(sol.report.dispatches_per_iteration < 1.0);
/// assert_eq!(sol.report.reductions_per_iteration, 1.0);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub struct CooperativeCg<'a, T> {
    steps: PipelinedCg<'a, T>,
    bufs: &'a SolverBuffers,
    kernel: Kernel,
    /// `kernel` counted for a whole launch's [`ITERATIONS_PER_LAUNCH`] reductions.
    kernel_whole: Kernel,
    /// The launch's workgroups: all resident at once.
    groups: u32,
    /// Launches: [first (after the setup, one iteration), loop, one iteration from the
    /// second set, one iteration from the first set].
    bg: [wgpu::BindGroup; 4],
    /// Launches since the last setup.
    launched: Cell<usize>,
    /// History index of the first residual the next loop launch records (device mode): a
    /// launch makes an iterate after each entry below the limit, and counts one global
    /// reduction for each.
    next_entry: Cell<usize>,
    /// Arrivals and the timed-out flag of the grid barrier.
    grid: wgpu::Buffer,
    /// The per-workgroup partial sums of the iterations: two slots of `groups`.
    sums: wgpu::Buffer,
    max_iter: usize,
    /// Kept alive beside the bind groups: the second set of r, p, Ap.
    _set_b: [wgpu::Buffer; 3],
}

impl<'a, T: Scalar> CooperativeCg<'a, T> {
    pub(crate) fn new(
        engine: &Engine,
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
        max_iter: usize,
    ) -> Result<Self> {
        if !engine.context().has_coherent() {
            return Err(KrylovError::Unsupported(
                "the cooperative variant needs coherent storage buffers \
                 (wgpu's MEMORY_DECORATION_COHERENT), which this adapter lacks; use --variant \
                 fused"
                    .into(),
            ));
        }
        let steps = PipelinedCg::new(engine, sys, bufs)?;
        let kernel = solver_kernel::<T>(engine, "cg_cooperative", sys.a.shader_config(engine))?;
        let set_b = sys.second_set(engine)?;
        let grid = engine.storage_zeroed::<u32>("grid barrier", 4)?;
        let most = crate::gpu::residency::MAX_RESIDENT_PROBE as usize;
        let sums = engine.storage_zeroed::<[T; 4]>("cooperative sums", 2 * most)?;
        let limit = max_iter.min(u32::MAX as usize) as u32;
        let bind = |groups: u32, iters: usize, flags: u32, parity: u32, spin_limit: u32| {
            let params = engine.uniform_from(
                "cg params",
                &Params {
                    groups,
                    ..sys.params(bufs)
                },
            );
            let coop = engine.uniform_from(
                "cg_cooperative params",
                &CoopParams {
                    iters: iters as u32,
                    limit,
                    flags,
                    parity,
                    spin_limit,
                    setup_groups: bufs.groups,
                    pad: [0; 2],
                },
            );
            let mut e = bufs.common(&params);
            e.extend(sys.iterate_bindings());
            e.extend([
                (10, &set_b[0]),
                (11, &set_b[1]),
                (12, &set_b[2]),
                (13, &grid),
                (14, &sums),
                (15, &coop),
            ]);
            e.extend(sys.a.bindings(false));
            engine.bind_group_at(&kernel, &e)
        };
        // A software adapter runs workgroups on the host's threads: on lavapipe launches of
        // several workgroups passed the barrier's count yet computed wrong iterates now and
        // then (its stores are not ordered by the barrier as a GPU's are), so there one
        // workgroup runs the launch (the arithmetic is the same).
        let software = engine.context().summary.software;
        let forced = engine.tuning().cooperative_groups.is_some();
        let resident = if forced {
            1
        } else {
            engine.resident_groups(&kernel, |g| {
                if software {
                    return Ok(false);
                }
                let bg = bind(g, 0, FLAG_PROBE, 0, PROBE_SPIN_LIMIT);
                let mut batch = engine.begin("residency probe");
                batch.clear(&grid, 0, 16);
                batch.dispatch(&kernel.without_reduction(), &bg, g);
                let v: Vec<u32> = batch.submit_and_read(&grid, 0, 2)?;
                Ok(v[1] == 0 && v[0] == g)
            })?
        };
        let groups = match engine.tuning().cooperative_groups {
            Some(g) => g
                .clamp(1, crate::gpu::residency::MAX_RESIDENT_PROBE)
                .next_power_of_two(),
            None => groups_for(resident, engine.tuning().max_groups, sys.a.passes()),
        };
        let k = ITERATIONS_PER_LAUNCH;
        let spin = engine
            .tuning()
            .cooperative_spin_limit
            .unwrap_or(SPIN_LIMIT)
            .max(1);
        let bg = [
            bind(groups, 1, FLAG_FIRST, 0, spin),
            bind(groups, k, 0, 1, spin),
            bind(groups, 1, 0, 1, spin),
            bind(groups, 1, 0, 0, spin),
        ];
        Ok(CooperativeCg {
            steps,
            bufs,
            kernel_whole: kernel.with_reductions(k as u32),
            kernel,
            groups,
            bg,
            launched: Cell::new(0),
            next_entry: Cell::new(0),
            grid,
            sums,
            max_iter,
            _set_b: set_b,
        })
    }

    /// The workgroups of each launch.
    pub fn groups(&self) -> u32 {
        self.groups
    }

    /// Whether a grid barrier's wait ran out since the last setup (the launch's workgroups
    /// were not all resident; the iterates are not to be trusted).
    pub fn timed_out(&self, engine: &Engine) -> Result<bool> {
        Ok(engine.read::<u32>(&self.grid, 1, 1)?[0] != 0)
    }

    /// Records one launch of `iters` iterations with bind group `bg`.
    fn launch(&self, batch: &mut Batch<'_>, bg: usize, iters: u32) {
        // The loop's whole launches reuse one kernel handle counted for 16; only a launch cut
        // by the iteration limit (and the one-iteration launches) needs another count.
        let kernel = match iters as usize {
            ITERATIONS_PER_LAUNCH => &self.kernel_whole,
            _ => &self.kernel.with_reductions(iters),
        };
        batch.dispatch(kernel, &self.bg[bg], self.groups);
        self.launched.set(self.launched.get() + 1);
    }
}

/// The workgroups of a cooperative launch: the largest power of two within what was found
/// resident, `max_groups` and the operator's row chunks (a workgroup without a chunk would
/// only wait at every barrier).
///
/// ```
/// use krylov_wgpu::solvers::cg::cooperative::groups_for;
/// assert_eq!(groups_for(512, 1024, 40), 32);
/// assert_eq!(groups_for(512, 1024, 100_000), 512);
/// assert_eq!(groups_for(1024, 200, 100_000), 128);
/// assert_eq!(groups_for(2, 1024, 1), 1);
/// ```
pub fn groups_for(resident: u32, max_groups: u32, passes: u32) -> u32 {
    let cap = resident.min(max_groups).min(passes).max(1);
    1 << (31 - cap.leading_zeros())
}

impl<T: Scalar> GpuIterative<T> for CooperativeCg<'_, T> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        self.launched.set(0);
        let mut batch = engine.begin("cg setup");
        batch.clear(&self.grid, 0, 16);
        match mode {
            CheckMode::Device => {
                self.steps.record_setup(&mut batch);
                // The setup records entry h (h = entries recorded so far) and the first launch
                // makes iterate h + 1 if the limit allows it; the loop's launches then record
                // whole launches from entry h + 1 on.
                let h = run.history.len();
                if h < self.max_iter {
                    self.launch(&mut batch, 0, 1);
                }
                self.next_entry.set(h + 1);
                let v: Vec<T> = batch.submit_and_read(&self.bufs.history, run.history.len(), 1)?;
                Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
            }
            CheckMode::Paper => {
                batch.submit()?;
                self.steps.setup(engine, run, mode)
            }
        }
    }

    /// One launch: up to [`ITERATIONS_PER_LAUNCH`] iterations (its reductions counted up to
    /// the iteration limit).
    fn record_iteration(&self, batch: &mut Batch<'_>) {
        let k = ITERATIONS_PER_LAUNCH;
        let next = self.next_entry.get();
        let iterates = self.max_iter.saturating_sub(next).min(k);
        self.launch(batch, 1, iterates as u32);
        self.next_entry.set(next + k);
    }

    fn iterations_per_launch(&self) -> usize {
        ITERATIONS_PER_LAUNCH
    }

    /// One iteration per launch, its partial sums read back and finished on the host. A
    /// launch that stops writes ‖r‖² = −1 into its slot: the status word says why.
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        let g = self.groups as usize;
        loop {
            if let Some(end) = run.paper_stop(opts.max_iter) {
                return Ok(end);
            }
            // Launch j reads set j % 2 and writes the sums of slot j % 2 (parity = j % 2).
            let j = self.launched.get();
            let (bg, slot) = match j {
                0 => (0, 0),
                j if j % 2 == 1 => (2, 1),
                _ => (3, 0),
            };
            let parts: Vec<T> = counted(engine, run, |_| {
                let mut batch = engine.begin("cg iteration");
                self.launch(&mut batch, bg, 1);
                batch.submit_and_read(&self.sums, 4 * slot * g, 4 * g)
            })?;
            run.recorded += 1;
            run.batch_size = 1;
            let rr = sum_component(&parts, g, 0, 1);
            let pap = sum_component(&parts, g, 0, 2);
            if rr < 0.0 {
                return Ok(LoopEnd::GpuStopped);
            }
            if let Some(end) = super::paper_verdict(run, rr, pap, threshold) {
                return Ok(end);
            }
        }
    }
}
