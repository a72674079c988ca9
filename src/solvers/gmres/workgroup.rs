//! One-workgroup GMRES (variant `workgroup`): pipelined GMRES's steps (Alg. 6, classical
//! Gram–Schmidt once or twice) for a small system in **one workgroup**, a whole cycle in one
//! launch, `gmres_workgroup`.
//!
//! Below ~1e4 rows a step of p(1)-GMRES is one launch and one global reduction, ~20 µs on an
//! H100 whatever it computes. In one workgroup every inner product is a workgroup sum
//! (barriers, no global reduction), so the m steps of a cycle are one launch, and a cycle
//! costs [update of x] + `gmres_residual` + this launch + one readback — the same submit and
//! readback as every GMRES variant's `device` cycle. The product's input D⁻¹v_{i−1} lives in
//! workgroup memory, which bounds the rows ([`max_rows`]: about 9 800 rows in f32 and 3 700
//! in f64 at 48 KiB); one workgroup is one GPU core, so past about a thousand rows the
//! GPU-wide variants are faster anyway (on an H100 0.77–0.89× p(1)-GMRES's time per step up
//! to 1024 rows, 1.2–1.4× at 2025: BENCHMARKS.md, 2026-12-07), and `--variant auto` takes it
//! up to [`crate::gpu::GMRES_WORKGROUP_MAX_ROWS`].
//!
//! | launch | does |
//! |---|---|
//! | `gmres_workgroup` (device: steps 1 … k) | finishes ρ0, tests it, v_0 = r/ρ0; per step: w = A D⁻¹v_{i−1}, R's column by CGS (CGS2), R_{i,i}, v_i, ξ_i, the estimate and the stop tests |
//! | `gmres_workgroup` (paper: step i) | the same for step i alone; its record read back |
//!
//! Its steps are pipelined GMRES's (same basis, R, ξ and estimate up to rounding), so its CPU
//! twin is [`crate::cpu::gmres::pipelined`]. Global reductions: none in the steps, 1 per
//! cycle (the restart's ‖r‖²).

use super::basis::GmresSystem;
use super::cycles::{GmresVariant, paper_steps_with};
use super::least_squares::CycleData;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{Params, solver_kernel};
use crate::gpu::{Batch, Engine, Kernel, ShaderConfig};
use crate::solvers::driver::Run;
use crate::solvers::{CheckMode, GramSchmidt};

// `gmres_workgroup` flags.
const FIRST: u32 = 1;
const MONITOR: u32 = 2;
const CGS2: u32 = 4;

/// The longest cycle one workgroup runs (`WGM_MAX` of `gmres_workgroup.wgsl`: R's column and
/// the Gram–Schmidt coefficients live in workgroup memory).
pub const MAX_RESTART: usize = 128;

/// Subgroup totals the kernel's batched inner products keep (`wgm_part`: 256 of vec4).
const PART_SUMS: usize = 256;

/// Workgroup memory the kernel takes beside its vector, in entries of the precision: R's
/// column, both passes' coefficients, the batched inner products' subgroup totals, a few
/// scalars.
const RESERVED_ENTRIES: usize = 3 * MAX_RESTART + 4 * PART_SUMS + 17;

/// The configuration `gmres_workgroup` runs with on `n` rows whose kernels use `base`
/// ([`crate::solvers::cg::workgroup::config_for`]'s choice of threads, with room for R's column), or
/// `Err` with the most rows any configuration holds.
fn config_for(
    engine: &Engine,
    base: ShaderConfig,
    n: usize,
) -> std::result::Result<ShaderConfig, usize> {
    let base = ShaderConfig {
        compensated: false,
        ..base
    };
    crate::solvers::cg::workgroup::config_for(engine, base, n + RESERVED_ENTRIES)
        .map(|c| ShaderConfig {
            workgroup_vector: n.max(1) as u32,
            ..c
        })
        .map_err(|most| most.saturating_sub(RESERVED_ENTRIES))
}

/// The most rows one-workgroup GMRES takes for a matrix whose kernels use `base` on
/// `engine`'s adapter.
pub fn max_rows(engine: &Engine, base: ShaderConfig) -> usize {
    crate::solvers::cg::workgroup::max_rows(engine, base).saturating_sub(RESERVED_ENTRIES)
}

/// [`crate::solvers::cg::workgroup::auto_rows`] for one-workgroup GMRES: the most rows
/// `--variant auto` may run in one workgroup (what its memory holds beside R's column and
/// the batched sums), and the workgroup's threads.
pub fn auto_rows(
    limits: &wgpu::Limits,
    subgroups: bool,
    precision: crate::base::Precision,
    format: crate::base::Format,
) -> (usize, usize) {
    let (rows, threads) =
        crate::solvers::cg::workgroup::auto_rows(limits, subgroups, precision, format);
    (rows.saturating_sub(RESERVED_ENTRIES), threads)
}

/// One-workgroup GMRES's kernel and its launches.
pub(super) struct Workgroup<'a, T> {
    sys: &'a GmresSystem<'a, T>,
    kernel: Kernel,
    /// `device` mode: steps 1 … k in one launch, at k − 1.
    cycle: Vec<wgpu::BindGroup>,
    /// Step i alone, at i − 1 (`paper` mode's launches).
    single: Vec<wgpu::BindGroup>,
}

impl<'a, T: Scalar> Workgroup<'a, T> {
    pub(super) fn new(sys: &'a GmresSystem<'a, T>) -> Result<Self> {
        let (m, lay, at, engine) = (sys.m, sys.lay, sys.at, sys.engine);
        if m > MAX_RESTART {
            return Err(KrylovError::InvalidOption(format!(
                "one-workgroup GMRES keeps a step's Gram-Schmidt coefficients in workgroup \
                 memory: restart at most {MAX_RESTART} (got {m}; use --variant p1 or fused)"
            )));
        }
        let config = config_for(engine, sys.shader_config(), sys.n).map_err(|most| {
            KrylovError::Unsupported(format!(
                "the workgroup variant keeps GMRES's product vector in one workgroup's memory: \
                 at most {most} rows in {} on this adapter ({} bytes of workgroup memory), and \
                 this system has {}; use --variant p1 or fused",
                T::PRECISION,
                engine.context().limits.max_compute_workgroup_storage_size,
                sys.n
            ))
        })?;
        let kernel = solver_kernel::<T>(engine, "gmres_workgroup", config)?;
        let device = sys.mode == CheckMode::Device;
        let cgs2 = if sys.gs == GramSchmidt::Cgs2 { CGS2 } else { 0 };
        let launch = |i0: usize, i1: usize| {
            sys.bind(
                &kernel,
                Params {
                    // One workgroup: `gm_open_cycle`'s loop covers every row.
                    groups: 1,
                    slot: sys.g,
                    num: i0 as u32,
                    comp_monitor: i1 as u32,
                    den: at.r(),
                    comp: lay.steps as u32,
                    dst: lay.r as u32,
                    flags: if i0 == 1 { FIRST } else { 0 }
                        | if device { MONITOR } else { 0 }
                        | cgs2
                        | ((m as u32 + 1) << 8),
                    ..sys.params()
                },
            )
        };
        let cycle = if device {
            (1..=m).map(|k| launch(1, k)).collect()
        } else {
            Vec::new()
        };
        let single = (1..=m).map(|i| launch(i, i)).collect();
        Ok(Workgroup {
            sys,
            kernel,
            cycle,
            single,
        })
    }
}

impl<T: Scalar> GmresVariant<T> for Workgroup<'_, T> {
    /// The product applies D⁻¹ as it loads its vector: no z.
    fn residual_flags(&self) -> u32 {
        0
    }

    /// Nothing beyond r = b − Ax: the launch finishes ρ0 and writes v_0.
    fn record_restart(&self, _: &mut Batch<'_>) {}

    /// Step i alone ([`Self::record_steps`] records a cycle as one launch).
    fn record_step(&self, batch: &mut Batch<'_>, i: usize) {
        batch.dispatch(&self.kernel, &self.single[i - 1], 1);
    }

    /// Steps 1 … k in one launch of one workgroup.
    fn record_steps(&self, batch: &mut Batch<'_>, k: usize) {
        if k >= 1 {
            batch.dispatch(&self.kernel, &self.cycle[k - 1], 1);
        }
    }

    /// One launch and one readback of its record per step (ξ_i finished on the device),
    /// then R once.
    fn paper_steps(&self, run: &mut Run<'_>, mc: usize, data: &mut CycleData<T>) -> Result<()> {
        let lay = &self.sys.lay;
        paper_steps_with(
            self.sys,
            (run, mc, data),
            |batch, i| batch.dispatch(&self.kernel, &self.single[i - 1], 1),
            |i| lay.step(i) + 1,
            |c, i| (c[lay.step(i)].as_f64(), None),
        )
    }

    fn last_xi_on_host(&self) -> bool {
        false
    }
}
