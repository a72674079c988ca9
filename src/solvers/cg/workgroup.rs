//! One-workgroup CG: classical CG (paper 000, Alg. 1) for a small system in **one workgroup**,
//! [`ITERATIONS_PER_LAUNCH`] whole iterations per launch, `cg_workgroup`.
//!
//! Below ~1e4 rows an iteration of [`PipelinedCg`](super::PipelinedCg) or
//! [`FusedCg`](super::FusedCg) costs its launches and their global reductions, not
//! bandwidth: a launch is 3–4.5 µs on an H200 whatever it does. In one workgroup every
//! inner product is a workgroup sum (barriers, no global reduction), so a launch can run
//! many iterations and its cost is shared by all of them; the direction p, which the
//! product gathers at every stored entry, is kept in workgroup memory. That memory bounds
//! the rows ([`max_rows`]: the adapter's `max_compute_workgroup_storage_size`, e.g. 11 200
//! rows in f32 and 5 088 in f64 at 48 KiB); one workgroup is one GPU core, so past a few
//! thousand rows the GPU-wide variants are faster anyway.
//!
//! Setup (both modes): `cg_init` in one workgroup (r = b − Ax, p = D⁻¹r, ⟨r,z⟩ and ⟨r,r⟩),
//! then a `cg_workgroup` launch with no iterations that records and tests ‖r₀‖². `device`
//! mode records launches of [`ITERATIONS_PER_LAUNCH`] iterations (the driver rounds its
//! batches up to whole launches; a launch stops at the iteration limit and on any status by
//! itself); `paper` mode runs one iteration per launch and reads its ‖r‖² back.

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{SolverBuffers, solver_kernel, workgroup_vector_cap};
use crate::gpu::{Batch, Engine, FormatKernel, Kernel, ShaderConfig};
use crate::solvers::CheckMode;

use super::super::driver::{GpuIterative, LoopEnd, PaperLoop, Run, counted};
use super::{System, cg_init_bind_group};

/// Iterations one `device`-mode launch runs (at most: it stops on convergence, a failure or
/// the iteration limit). A launch costs ≈ 4 µs; an iteration of a system that fits ≈ 1–5 µs.
pub const ITERATIONS_PER_LAUNCH: usize = 32;

/// `WGCG_FIRST` of `cg_workgroup.wgsl`: the launch after `cg_init`.
const FLAG_FIRST: u32 = 1;

/// Mirrors `struct WorkgroupCgParams` of `cg_workgroup.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct WorkgroupCgParams {
    iters: u32,
    limit: u32,
    flags: u32,
    pad: u32,
}

/// The configuration `cg_workgroup` runs with on a system of `n` rows whose matrix kernels
/// use `base`: p sized to the system (`WG_VECTOR` = n, so each thread walks exactly its
/// ⌈n / WG⌉ rows: every slot more cost ~0.2 µs an iteration on an H200), and the fewest
/// threads that give each thread its fewest rows and still leave p room in workgroup memory;
/// or `Err` with the most rows any configuration holds.
///
/// More threads shorten each thread's chain of rows (a thread's rows run one after another,
/// each a chain of dependent loads), but take more workgroup memory for the reduction's
/// scratch, and threads without a row still wait at every barrier. The row-per-thread formats
/// (CSR, ELL, DIA) take any workgroup size at least the matrix's (a chunk of the kernel's WG
/// rows covers the matrix's chunks; the extra chunks are empty); SELL and BCSR lay their rows
/// out for the matrix's own size, which the kernel keeps.
pub fn config_for(
    engine: &Engine,
    base: ShaderConfig,
    n: usize,
) -> std::result::Result<ShaderConfig, usize> {
    let limits = &engine.context().limits;
    let rows_format = matches!(
        base.format,
        FormatKernel::Csr | FormatKernel::CsrSplit { .. } | FormatKernel::Ell | FormatKernel::Dia
    );
    let widest = if rows_format {
        limits
            .max_compute_invocations_per_workgroup
            .min(1024)
            .min((n as u32).next_power_of_two())
            .max(base.workgroup_size)
    } else {
        base.workgroup_size
    };
    let mut wg = widest;
    let mut most = 0;
    while wg >= base.workgroup_size {
        let config = ShaderConfig {
            workgroup_size: wg,
            ..base
        };
        let cap = workgroup_vector_cap(limits.max_compute_workgroup_storage_size, config);
        if n <= cap {
            return Ok(ShaderConfig {
                workgroup_vector: n.max(1) as u32,
                ..config
            });
        }
        most = most.max(cap);
        wg /= 2;
    }
    Err(most)
}

/// The most rows the workgroup variant takes for a matrix whose kernels use `base` on
/// `engine`'s adapter (its direction p in workgroup memory: [`workgroup_vector_cap`] at the
/// matrix's own workgroup size).
pub fn max_rows(engine: &Engine, base: ShaderConfig) -> usize {
    workgroup_vector_cap(
        engine.context().limits.max_compute_workgroup_storage_size,
        base,
    )
}

/// Rows per thread up to which `--variant auto` takes the workgroup variant (and at most
/// [`crate::gpu::WORKGROUP_MAX_ENTRIES_PER_THREAD`] stored entries per thread): on an H200 it
/// was about even with fused CG at 4 rows per thread (3969 rows of a 2D stencil in f32 on
/// 1024 threads: 7.1 against 7.3 µs an iteration) and slower from 5.
pub const AUTO_ROWS_PER_THREAD: usize = 4;

/// The most rows `--variant auto` runs in one workgroup for a matrix stored in `format` in
/// `precision` on an adapter with `limits` (and subgroup operations where `subgroups`), and
/// the threads of that workgroup: at most [`AUTO_ROWS_PER_THREAD`] rows per thread of the
/// widest workgroup the format allows (1024 threads for CSR, ELL and DIA; SELL and BCSR keep
/// the matrix's 256), and within what that workgroup's memory holds. Checked before any
/// kernel exists.
pub fn auto_rows(
    limits: &wgpu::Limits,
    subgroups: bool,
    precision: crate::base::Precision,
    format: crate::base::Format,
) -> (usize, usize) {
    use crate::base::Format;
    let (kernel, wg) = match format {
        Format::Sell => (FormatKernel::Sell { c: 32 }, 256),
        Format::Bcsr1 | Format::Bcsr2 | Format::Bcsr4 | Format::Bcsr8 => {
            (FormatKernel::Bcsr { n: 1, bx: 1 }, 256)
        }
        _ => (
            FormatKernel::Csr,
            limits.max_compute_invocations_per_workgroup.min(1024),
        ),
    };
    let config = ShaderConfig {
        workgroup_size: wg,
        subgroups,
        format: kernel,
        ..ShaderConfig::new(precision)
    };
    let rows = workgroup_vector_cap(limits.max_compute_workgroup_storage_size, config)
        .min(AUTO_ROWS_PER_THREAD * wg as usize);
    (rows, wg as usize)
}

/// One-workgroup CG: `cg_workgroup`, [`ITERATIONS_PER_LAUNCH`] iterations per launch and no
/// global reduction (`Variant::Workgroup` of [`cg::solve`](super::solve)).
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{cg, SolveOptions, Variant};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f32>(32);
/// let b = vec![1.0f32; a.nrows()];
/// let opts = SolveOptions { variant: Variant::Workgroup, rtol: 1e-5, ..Default::default() };
/// let sol = cg::solve(&engine, &a, &b, None, &opts, &mut ())?;
/// assert!(sol.report.converged);
/// assert!(sol.report.dispatches_per_iteration < 1.0);
/// assert_eq!(sol.report.reductions_per_iteration, 0.0);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub struct WorkgroupCg<'a, T> {
    _t: std::marker::PhantomData<T>,
    bufs: &'a SolverBuffers,
    init: Kernel,
    kernel: Kernel,
    bg_init: wgpu::BindGroup,
    /// Launches: [setup's first (no iterations), a loop launch, a one-iteration launch].
    bg: [wgpu::BindGroup; 3],
}

impl<'a, T: Scalar> WorkgroupCg<'a, T> {
    /// Compiles the kernels for `sys` (solved with `bufs` of one workgroup) and the iteration
    /// limit `max_iter`. Errors when the system has more rows than [`max_rows`].
    pub(crate) fn new(
        engine: &Engine,
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
        max_iter: usize,
    ) -> Result<Self> {
        debug_assert_eq!(bufs.groups, 1, "one workgroup");
        let cfg = sys.a.shader_config(engine);
        let wide = config_for(engine, cfg, sys.n);
        if let Err(cap) = wide {
            return Err(KrylovError::Unsupported(format!(
                "the workgroup variant keeps CG's direction in one workgroup's memory: at most \
                 {cap} rows in {} on this adapter ({} bytes of workgroup memory), and this \
                 system has {}; use --variant fused or pipelined",
                T::PRECISION,
                engine.context().limits.max_compute_workgroup_storage_size,
                sys.n
            )));
        }
        let init = solver_kernel::<T>(engine, "cg_init", cfg)?;
        let wide = wide.expect("checked above");
        let kernel = solver_kernel::<T>(engine, "cg_workgroup", wide)?;
        let params = engine.uniform_from("cg params", &sys.params(bufs));
        let bg_init = cg_init_bind_group(engine, &init, sys, bufs, &params);
        let limit = max_iter.min(u32::MAX as usize) as u32;
        let bind = |iters: usize, flags: u32| {
            let wg = engine.uniform_from(
                "cg_workgroup params",
                &WorkgroupCgParams {
                    iters: iters as u32,
                    limit,
                    flags,
                    pad: 0,
                },
            );
            let mut e = bufs.common(&params);
            e.extend(sys.iterate_bindings());
            e.push((10, &wg));
            e.extend(sys.a.bindings(false));
            engine.bind_group_at(&kernel, &e)
        };
        let bg = [
            bind(0, FLAG_FIRST),
            bind(ITERATIONS_PER_LAUNCH, 0),
            bind(1, 0),
        ];
        Ok(WorkgroupCg {
            _t: std::marker::PhantomData,
            bufs,
            init,
            kernel,
            bg_init,
            bg,
        })
    }
}

impl<T: Scalar> GpuIterative<T> for WorkgroupCg<'_, T> {
    /// `cg_init` and the first `cg_workgroup` launch (no iterations: it records ‖r₀‖² and
    /// tests it); the new history entry read back.
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, _mode: CheckMode) -> Result<Option<f64>> {
        let mut batch = engine.begin("cg setup");
        batch.dispatch(&self.init, &self.bg_init, 1);
        batch.dispatch(&self.kernel, &self.bg[0], 1);
        let v: Vec<T> = batch.submit_and_read(&self.bufs.history, run.history.len(), 1)?;
        Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
    }

    /// One launch: up to [`ITERATIONS_PER_LAUNCH`] iterations.
    fn record_iteration(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.kernel, &self.bg[1], 1);
    }

    fn iterations_per_launch(&self) -> usize {
        ITERATIONS_PER_LAUNCH
    }

    /// One iteration per launch, its ‖r‖² read back and judged on the host (the GPU's tol²
    /// is 0 in `paper` mode). A launch that stops before recording (⟨p,Ap⟩ ≤ 0) leaves the
    /// entry at its poison −1: the status word says why.
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        loop {
            if let Some(end) = run.paper_stop(opts.max_iter) {
                return Ok(end);
            }
            let at = run.history.len();
            let v: Vec<T> = counted(engine, run, |_| {
                let mut batch = engine.begin("cg iteration");
                batch.dispatch(&self.kernel, &self.bg[2], 1);
                batch.submit_and_read(&self.bufs.history, at, 1)
            })?;
            run.recorded += 1;
            run.batch_size = 1;
            let rr = v[0].as_f64();
            if v[0] < T::zero() {
                return Ok(LoopEnd::GpuStopped);
            }
            run.push(rr.sqrt());
            if !rr.is_finite() {
                return Ok(LoopEnd::NonFinite);
            }
            if rr.sqrt() <= threshold {
                return Ok(LoopEnd::Converged);
            }
        }
    }
}
