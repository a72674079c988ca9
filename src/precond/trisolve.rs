//! Sparse triangular solves on the GPU, the apply of ILU(0)/IC(0): one uploaded factor
//! ([`GpuTriangular`]) and the launches that solve x = T⁻¹ rhs with it, by either strategy of
//! [`Trisolve`]:
//!
//! * **levels** — the level schedule is computed once on the host ([`TriFactor::levels`]);
//!   `trisolve_levels` runs one dispatch per [`Stage`](crate::cpu::trisolve::Stage): a wide
//!   level over the whole grid, or a run of narrow levels swept by one workgroup with a
//!   barrier per level. Exact.
//! * **sweeps:K** — K launches of `trisolve_sweep`, each a Jacobi sweep over all rows; no
//!   schedule, the same cost whatever the level count; exact once K reaches it.
//!
//! The CPU twins are [`TriFactor::solve`] and [`TriFactor::sweeps`]. A stacked factor
//! diag(T₁, T₂) ([`TriFactor::stack`]) uploads like any other and solves both systems in the
//! dispatches of one: its stages merge both schedules level by level ([`TriFactor::stages`]),
//! and a sweep covers all 2n rows (the params uniform's `n` is then the stacked order).

use super::ApplySite;
use crate::base::error::Result;
use crate::base::options::Trisolve;
use crate::base::scalar::Scalar;
use crate::cpu::trisolve::TriFactor;
use crate::gpu::kernels::solver_kernel;
use crate::gpu::{Engine, Kernel};
use wgpu::Buffer;

/// One launch: kernel, bind group, workgroups.
pub type Launch = (Kernel, wgpu::BindGroup, u32);

/// Mirrors `struct TriStage` of `trisolve_levels.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct TriStage {
    level_begin: u32,
    level_end: u32,
    rows_at: u32,
    wide: u32,
}

/// Mirrors `struct TriSweep` of `trisolve_sweep.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct TriSweep {
    first: u32,
    _pad: [u32; 3],
}

/// The most workgroups one dispatch of a wide level uses (the kernel strides beyond).
const MAX_GROUPS: usize = 65_535;

/// A triangular factor resident on the GPU with its level schedule.
pub struct GpuTriangular {
    n: usize,
    ptr: Buffer,
    col: Buffer,
    val: Buffer,
    /// Level pointers, then the rows in level order.
    sched: Buffer,
    /// Per stage: its uniform and rows (for the wide ones' workgroup count).
    stages: Vec<(Buffer, usize, bool)>,
    levels: usize,
    /// The `first = 1` and `first = 0` sweep uniforms.
    sweep: [Buffer; 2],
}

impl GpuTriangular {
    /// Uploads `t` and its level schedule (four storage uploads and one uniform per stage).
    pub fn upload<T: Scalar>(engine: &Engine, t: &TriFactor<T>) -> Result<Self> {
        let levels = t.levels();
        let rows_at = levels.ptr.len() as u32;
        let mut sched = levels.ptr.clone();
        sched.extend_from_slice(&levels.rows);
        let stages = t
            .stages(&levels)
            .into_iter()
            .map(|s| {
                let rows = (levels.ptr[s.levels.end] - levels.ptr[s.levels.start]) as usize;
                let u = engine.uniform_from(
                    "trisolve stage",
                    &TriStage {
                        level_begin: s.levels.start as u32,
                        level_end: s.levels.end as u32,
                        rows_at,
                        wide: s.wide as u32,
                    },
                );
                (u, rows, s.wide)
            })
            .collect();
        let sweep = [1, 0].map(|first| {
            engine.uniform_from(
                "trisolve sweep",
                &TriSweep {
                    first,
                    _pad: [0; 3],
                },
            )
        });
        Ok(GpuTriangular {
            n: t.n(),
            ptr: engine.storage_from("tri ptr", &t.ptr)?,
            col: engine.storage_from("tri col", &t.col)?,
            val: engine.storage_from("tri val", &t.val)?,
            sched: engine.storage_from("tri schedule", &sched)?,
            stages,
            levels: levels.count(),
            sweep,
        })
    }

    /// Order of the factor.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Levels of the schedule.
    pub fn levels(&self) -> usize {
        self.levels
    }

    /// Launches of one solve with strategy `how` (`Auto` must be resolved).
    pub fn dispatches(&self, how: Trisolve) -> usize {
        match how {
            Trisolve::Sweeps(k) => k as usize,
            _ => self.stages.len(),
        }
    }

    /// The launches of x = T⁻¹ rhs by `how`. `spare` (n entries, not `rhs` or `x`) holds
    /// the odd sweeps; the levels strategy does not touch it.
    pub fn bind<T: Scalar>(
        &self,
        at: &ApplySite<'_>,
        how: Trisolve,
        rhs: &Buffer,
        x: &Buffer,
        spare: &Buffer,
    ) -> Result<Vec<Launch>> {
        let common = [(5, &self.ptr), (6, &self.col), (7, &self.val)];
        match how {
            Trisolve::Sweeps(k) => {
                let kernel = solver_kernel::<T>(at.engine, "trisolve_sweep", at.config)?;
                let k = k.max(1);
                // The last sweep writes x; earlier ones alternate with `spare`.
                let out = |s: u32| if (k - s).is_multiple_of(2) { x } else { spare };
                Ok((1..=k)
                    .map(|s| {
                        let prev = if s == 1 { rhs } else { out(s - 1) };
                        let mut e = common.to_vec();
                        e.extend([
                            (8, prev),
                            (9, rhs),
                            (10, out(s)),
                            (12, &self.sweep[(s > 1) as usize]),
                        ]);
                        let bg = at.bufs.bind(at.engine, &kernel, at.params, &e);
                        (kernel.clone(), bg, at.bufs.groups)
                    })
                    .collect())
            }
            Trisolve::Levels | Trisolve::Auto => {
                let kernel = solver_kernel::<T>(at.engine, "trisolve_levels", at.config)?;
                let wg = at.config.workgroup_size as usize;
                Ok(self
                    .stages
                    .iter()
                    .map(|(uniform, rows, wide)| {
                        let mut e = common.to_vec();
                        e.extend([(8, &self.sched), (9, rhs), (10, x), (12, uniform)]);
                        let bg = at.bufs.bind(at.engine, &kernel, at.params, &e);
                        let groups = if *wide {
                            rows.div_ceil(wg).clamp(1, MAX_GROUPS)
                        } else {
                            1
                        };
                        (kernel.clone(), bg, groups as u32)
                    })
                    .collect())
            }
        }
    }
}
