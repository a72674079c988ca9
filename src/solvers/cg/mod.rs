//! Conjugate gradients on the GPU: [`ClassicalCg`], [`PipelinedCg`] and [`FusedCg`] side by
//! side.
//!
//! * **Pipelined** (paper 000, Alg. 2): two fused kernels per iteration —
//!   `update_cg` (x, r, p updates + first stage of ⟨r,z⟩, ⟨r,r⟩) and `spmv_dot_cg`
//!   (Ap = A·p + first stage of ⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩). The second reduction stage is done
//!   redundantly by every workgroup of the next kernel, so no extra launch is needed.
//! * **Fused**: the same recurrences in one kernel per iteration, `update_spmv_dot_cg`: the
//!   product forms the new direction on the fly from the previous iterate (see [`FusedCg`]);
//!   one launch and one global reduction per iteration.
//! * **Cooperative**: fused CG's iteration, many per launch, by workgroups that are all
//!   resident at once and meet at a grid barrier between iterations, `cg_cooperative` (see
//!   [`CooperativeCg`]); one barrier and one global reduction per iteration.
//! * **Workgroup**: the classical recurrence for a small system in one workgroup, whole
//!   iterations per launch with no global reduction, `cg_workgroup` (see [`WorkgroupCg`]).
//! * **Classical** (paper 000, Alg. 1) as a BLAS-based code runs it: `spmv_csr`, `dot`,
//!   `axpy`, `axpy`, `dot`, `xpay` (+ `diag_scale` and one more `dot` with Jacobi) — at least
//!   six launches; in `paper` mode every inner product is read back and its value sent back up.
//!
//! Global reductions per iteration (`reductions_per_iteration`): pipelined 2 (one per fused
//! kernel: Alg. 2's two reduction phases), classical 2 (⟨p,Ap⟩, ⟨r,z⟩) or 3 with Jacobi
//! (+ ⟨r,r⟩), each `dot` one, its `dot_finish` none.
//!
//! Convergence checks ([`CheckMode`](crate::solvers::CheckMode)): `paper` reads the partial sums back every iteration and
//! finishes them on the host; `device` records k iterations per submit and reads the history
//! once per batch. Kernels test a status word first, so iterations recorded after convergence
//! change nothing: the x returned is the x of the converging iteration.
//!
//! After the loop the true residual ‖b − Ax‖/‖b‖ is recomputed in f64 (on the GPU with the
//! `cg_init` kernel for f64 solves, on the CPU for f32 solves); if it misses the tolerance
//! the solve restarts from x (at most [`MAX_RESTARTS`] times) and otherwise reports

mod classical;
pub mod cooperative;
mod fused;
pub(crate) mod pipelined;
pub mod workgroup;

pub use classical::ClassicalCg;
pub use cooperative::CooperativeCg;
pub use fused::FusedCg;
pub use pipelined::PipelinedCg;
pub use workgroup::WorkgroupCg;

use crate::base::Reduction;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{Params, SolverBuffers, solver_kernel};
use crate::gpu::{Engine, Kernel};
use crate::matrix::Csr;
use crate::solvers::{Method, Monitor, Solution, SolveOptions, Variant};

pub use super::driver::MAX_RESTARTS;
use super::driver::{GpuIterative, LoopEnd, Run, StopCheck, TrueResidual, drive};
use super::system::{
    GpuSystem, Start, finish, one_workgroup_buffers, solver_buffers_for, start_gpu_solve,
};

/// CG's vectors beside the shared system (A, b, x, M).
pub(crate) struct System<T> {
    core: GpuSystem<T>,
    pub(crate) r: wgpu::Buffer,
    pub(super) p: wgpu::Buffer,
    pub(super) ap: wgpu::Buffer,
}

impl<T: Scalar> System<T> {
    /// The kernels' parameters every CG launch starts from: n, the reduction's workgroups
    /// and whether the fused kernels scale by D⁻¹.
    pub(crate) fn params(&self, bufs: &SolverBuffers) -> Params {
        Params {
            n: self.n as u32,
            groups: bufs.groups,
            jacobi: self.jacobi() as u32,
            ..Default::default()
        }
    }

    /// The iterate's bindings shared by the CG kernels: x at 5, r, p, Ap at 6–8, D⁻¹ at 9.
    pub(crate) fn iterate_bindings(&self) -> [(u32, &wgpu::Buffer); 5] {
        [
            (5, &self.x),
            (6, &self.r),
            (7, &self.p),
            (8, &self.ap),
            (9, self.dinv()),
        ]
    }

    /// A second set of r, p and Ap, for the variants whose launches read one iterate while
    /// writing the next (fused and cooperative CG alternate the two sets).
    pub(crate) fn second_set(&self, engine: &Engine) -> Result<[wgpu::Buffer; 3]> {
        Ok([
            self.vector(engine, "r (second set)")?,
            self.vector(engine, "p (second set)")?,
            self.vector(engine, "ap (second set)")?,
        ])
    }

    pub(crate) fn new(engine: &Engine, core: GpuSystem<T>) -> Result<Self> {
        Ok(System {
            r: core.vector(engine, "r")?,
            p: core.vector(engine, "p")?,
            ap: core.vector(engine, "ap")?,
            core,
        })
    }
}

super::system::derefs_to_gpu_system!(System);

/// The host's verdict after one `paper`-mode iteration of pipelined or fused CG, from the
/// finished ‖r‖² and ⟨p,Ap⟩ of the new iterate (‖r‖ pushed to the history): non-finite,
/// converged (‖r‖ ≤ `threshold`), not SPD (⟨p,Ap⟩ ≤ 0), or `None` to go on.
pub(super) fn paper_verdict(
    run: &mut Run<'_>,
    rr: f64,
    pap: f64,
    threshold: f64,
) -> Option<LoopEnd> {
    run.push(rr.sqrt());
    if !rr.is_finite() {
        Some(LoopEnd::NonFinite)
    } else if rr.sqrt() <= threshold {
        Some(LoopEnd::Converged)
    } else if pap.is_nan() {
        Some(LoopEnd::NonFinite)
    } else if pap <= 0.0 {
        Some(LoopEnd::NotSpd)
    } else {
        None
    }
}

pub(super) fn cg_init_bind_group<T: Scalar>(
    engine: &Engine,
    init: &Kernel,
    sys: &System<T>,
    bufs: &SolverBuffers,
    params: &wgpu::Buffer,
) -> wgpu::BindGroup {
    let mut e = vec![
        (1, &bufs.partials),
        (4, params),
        (8, &sys.x),
        (9, &sys.b),
        (10, &sys.r),
        (11, &sys.p),
        (12, sys.dinv()),
    ];
    e.extend(sys.a.bindings(false));
    engine.bind_group_at(init, &e)
}

/// Solves A x = b by CG on the GPU (`opts.variant` picks [`ClassicalCg`], [`PipelinedCg`],
/// [`FusedCg`] or [`WorkgroupCg`],
/// `opts.check_mode` the convergence checking, `opts.precond` Jacobi or none).
///
/// Errors: the input checks of [`validate_system`](crate::solvers::validate_system), a nonsymmetric matrix
/// ([`KrylovError::MethodMismatch`]), f64 on a device without SHADER_F64, buffers over the
/// device limits. A matrix that turns out not to be SPD is a result (`reason: not_spd`).
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{cg, SolveOptions, Variant};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f32>(64);
/// let b = vec![1.0f32; a.nrows()];
/// let opts = SolveOptions { variant: Variant::Pipelined, rtol: 1e-5, ..Default::default() };
/// let sol = cg::solve(&engine, &a, &b, None, &opts, &mut ())?;
/// assert!(sol.report.converged);
/// assert_eq!(sol.report.dispatches_per_iteration, 2.0);
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
    } = start_gpu_solve(engine, Method::Cg, a, b, x0, opts)?;
    if !crate::solvers::reuse::is_symmetric(engine, a, 1e-10) {
        return Err(KrylovError::MethodMismatch(
            "cg needs a symmetric positive definite matrix and this one is not symmetric; use bicgstab or gmres".into(),
        ));
    }
    if opts.variant == Variant::Workgroup && report.reduction == Reduction::Compensated {
        // Its sums run over at most a few thousand terms in one workgroup, plain.
        report.reduction = Reduction::Plain;
        report.notes.push(
            "reduction: the workgroup variant sums in one workgroup in plain arithmetic \
             (--reduction compensated applies to the global reductions of the other variants)"
                .into(),
        );
    }
    if opts.variant == Variant::Cooperative && report.reduction == Reduction::Compensated {
        // Its own partial sums are plain (one vec4 per workgroup in its coherent buffer).
        let plain = SolveOptions {
            reduction: Reduction::Plain,
            ..opts.clone()
        };
        let mut sol = solve(engine, a, b, x0, &plain, monitor)?;
        sol.report.notes.insert(
            0,
            "reduction: the cooperative variant sums in plain arithmetic (--reduction \
             compensated applies to the fused, pipelined and classical variants)"
                .into(),
        );
        return Ok(sol);
    }
    let sys = System::new(
        engine,
        GpuSystem::upload(engine, a, b, x0, opts, &mut report)?,
    )?;
    let slots = match opts.variant {
        Variant::Fused => fused::SLOTS,
        _ => 3,
    };
    let bufs = if opts.variant == Variant::Workgroup {
        one_workgroup_buffers::<T>(engine, slots, opts, &mut report)?
    } else {
        solver_buffers_for::<T>(engine, sys.n, sys.a.passes(), slots, opts, &mut report)?
    };
    let mut cooperative = None;
    let boxed: Box<dyn GpuIterative<T> + '_>;
    let solver: &dyn GpuIterative<T> = match opts.variant {
        Variant::Cooperative => cooperative.insert(CooperativeCg::new(
            engine,
            &sys,
            &bufs,
            opts.max_iter.min(bufs.history_len - 2),
        )?),
        _ => {
            boxed = plain_solver(engine, &sys, &bufs, opts)?;
            boxed.as_ref()
        }
    };
    let check = CgCheck::new(engine, b, &sys, &bufs)?;
    drive(
        engine,
        solver,
        &check,
        &bufs,
        opts,
        threshold,
        None,
        monitor,
        &mut report,
        &counts0,
    )?;
    if let Some(coop) = &cooperative {
        report.notes.push(format!(
            "cooperative: {} workgroups per launch (resident at once on this adapter)",
            coop.groups()
        ));
        if coop.timed_out(engine)? {
            // The barrier did not hold: the iterates are not to be trusted. Solve again.
            let fused = SolveOptions {
                variant: Variant::Fused,
                ..opts.clone()
            };
            let mut sol = solve(engine, a, b, x0, &fused, monitor)?;
            sol.report.notes.insert(
                0,
                format!(
                    "cooperative: a grid barrier's wait ran out ({} workgroups were not all \
                     resident at once); solved again with fused CG",
                    coop.groups()
                ),
            );
            return Ok(sol);
        }
    }
    finish(engine, &sys.x, sys.n, report, &counts0)
}

/// The solver of every variant but the cooperative one.
fn plain_solver<'a, T: Scalar>(
    engine: &Engine,
    sys: &'a System<T>,
    bufs: &'a SolverBuffers,
    opts: &SolveOptions,
) -> Result<Box<dyn GpuIterative<T> + 'a>> {
    Ok(match opts.variant {
        Variant::Pipelined => Box::new(PipelinedCg::new(engine, sys, bufs)?),
        Variant::Classical => Box::new(ClassicalCg::new(engine, sys, bufs)?),
        Variant::Fused => Box::new(FusedCg::new(
            engine,
            sys,
            bufs,
            opts.max_iter.min(bufs.history_len - 2),
        )?),
        Variant::Workgroup => Box::new(WorkgroupCg::new(
            engine,
            sys,
            bufs,
            opts.max_iter.min(bufs.history_len - 2),
        )?),
        Variant::Cooperative => unreachable!("cg::solve makes the cooperative solver itself"),
        Variant::P1 => {
            return Err(crate::base::options::variant_refused(
                crate::solvers::Method::Cg,
                Variant::P1,
            ));
        }
    })
}

/// CG's stop checks: the true-residual guard runs `cg_init`, which recomputes r = b − Ax
/// with ⟨r,r⟩ in component 1 of partial slot 0.
struct CgCheck<'a, T> {
    guard: TrueResidual<'a, T>,
    init: Kernel,
    bg_init: wgpu::BindGroup,
}

impl<'a, T: Scalar> CgCheck<'a, T> {
    fn new(
        engine: &Engine,
        b: &'a [T],
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
    ) -> Result<Self> {
        let init = solver_kernel::<T>(engine, "cg_init", sys.a.shader_config(engine))?;
        let params = engine.uniform_from("cg params", &sys.params(bufs));
        let bg_init = cg_init_bind_group(engine, &init, sys, bufs, &params);
        let guard = TrueResidual {
            b,
            x: &sys.x,
            bufs,
            op: &sys.a,
            b_gpu: &sys.b,
            ds: Default::default(),
            comp: 1,
        };
        Ok(CgCheck {
            guard,
            init,
            bg_init,
        })
    }
}

impl<T: Scalar> StopCheck for CgCheck<'_, T> {
    fn true_relative(&self, engine: &Engine) -> Result<f64> {
        let groups = self.guard.bufs.groups;
        self.guard.relative(engine, &|batch| {
            batch.dispatch(&self.init, &self.bg_init, groups)
        })
    }
}
