//! Mixed-precision iterative refinement on the GPU (`--precision mixed`; issue 15): f64
//! accuracy from f32 Krylov solves, also on GPUs without f64.
//!
//! The loop is the CPU reference's ([`crate::cpu::mixed::refine`], which documents the
//! algorithm and its stops); here both halves run on the GPU:
//!
//! * the **outer** half keeps x and b on the device in the outer precision and computes
//!   r = b − Ax there (`outer`): in f64 (`refine_residual`, `refine_update`) when the
//!   adapter has SHADER_F64, else in double-single — pairs of f32 with error-free
//!   transformations (`refine_residual_ds`, `refine_update_ds`, A's values split into
//!   hi + lo f32 pairs). Per outer iteration: one residual launch (r rounded to f32 and the
//!   partials of ‖r‖², two readbacks), one update launch (the correction d uploaded).
//! * the **inner** half is an ordinary f32 GPU solve ([`super::solve_gpu`]) of A d = r/‖r‖
//!   with the method, preconditioner, side, variant and format of the options: every f32
//!   kernel, fused and pipelined as usual.
//!
//! The report's `refinement` holds the outer and inner counts and the outer precision;
//! `iterations` sums the inner iterations; `counts` add the outer launches and transfers.
//!
//! Pipelined CG with no preconditioner or Jacobi (`Refinement::Auto`, the default) runs
//! instead as one f32 CG with reliable updates ([`reliable`]): its x folded into the outer x
//! and its residual replaced by the outer one on the GPU, its search direction kept, so CG
//! does not restart at every outer step.

mod outer;
pub mod reliable;

use crate::base::error::Result;
use crate::base::options::Reorder;
use crate::base::{OuterPrecision, Precision, RefineOptions};
use crate::gpu::{ChosenDevice, Engine};
use crate::matrix::Csr;
use crate::solvers::{Monitor, Solution, SolveOptions, SolveReport};

pub use outer::GpuOuter;

/// Solves A x = b by mixed-precision refinement on `engine`'s GPU: x and the residual in f64
/// (or double-single without SHADER_F64, or when `refine.outer` asks for it), inner solves in
/// f32 with `opts`.
///
/// ```no_run
/// use krylov_wgpu::base::RefineOptions;
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{mixed, SolveOptions};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f64>(64);
/// let b = a.mul_vec(&vec![1.0; a.ncols()])?;
/// let opts = SolveOptions { rtol: 1e-10, ..Default::default() };
/// let sol = mixed::solve(&engine, &a, &b, None, &opts, &RefineOptions::default(), &mut ())?;
/// assert!(sol.report.converged && sol.report.relative_residual <= 1e-10);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn solve(
    engine: &Engine,
    a: &Csr<f64>,
    b: &[f64],
    x0: Option<&[f64]>,
    opts: &SolveOptions,
    refine: &RefineOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<f64>> {
    refine.validate()?;
    // The rows are reordered (or not) and balanced (or not) once, for the outer loop and
    // every inner solve alike (P·A x = P·b: the same x and residual norms), so the inner
    // solves all see one matrix. The system is checked after the reordering, as every other
    // solve checks it: a zero diagonal that the matching moves off is no error for Jacobi.
    crate::cpu::with_reordering(a, b, x0, opts, opts.reorder, |a, b, x0, o| {
        crate::matrix::validate_system(a, b, o)?;
        crate::matrix::check_initial_guess(x0, a.ncols())?;
        let as_given = SolveOptions {
            reorder: Reorder::None,
            equilibrate: false,
            ..o.clone()
        };
        solve_as_given(engine, a, b, x0, &as_given, refine, monitor)
    })
}

/// [`solve`] on A x = b as given.
fn solve_as_given(
    engine: &Engine,
    a: &Csr<f64>,
    b: &[f64],
    x0: Option<&[f64]>,
    opts: &SolveOptions,
    refine: &RefineOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<f64>> {
    let counts0 = engine.counters().snapshot();
    let has_f64 = engine.context().supports(Precision::F64);
    let double_single = match refine.outer {
        OuterPrecision::Auto => !has_f64,
        OuterPrecision::F64 => {
            engine.context().require(Precision::F64)?;
            false
        }
        OuterPrecision::DoubleSingle => true,
    };
    let mut report = SolveReport::new(
        opts.method,
        opts.variant,
        Precision::F32,
        a.nrows(),
        a.nnz(),
    );
    report.device = crate::gpu::DeviceInfo::gpu(&engine.context().summary);
    report.device_reason = "the GPU engine the solver was given".into();
    report.b_norm = crate::cpu::norm2_f64(b);
    // The inner solves share A's upload and M (a32 lives, unchanged, until the scope ends;
    // inside a caller's scope, for later refinements of the same A too).
    let _reuse = super::reuse_uploads();
    let a32 = super::reuse::cast_f32(engine, a)?;
    // A's f32 upload, M and the input checks before refinement's clock starts, as a single
    // solve's `seconds` leave them out.
    super::reuse::prepare(engine, &a32, opts)?;
    if double_single && has_f64 {
        report
            .notes
            .push("double-single outer loop requested on a device with f64".into());
    }
    if reliable::applies(opts, refine) {
        return reliable::solve(engine, a, &a32, b, x0, opts, double_single, report, monitor);
    }
    let mut outer = GpuOuter::upload(engine, a, b, x0, double_single)?;
    let mut inner =
        |rhs: &[f32], o: &SolveOptions| super::solve_gpu(engine, &a32, rhs, None, o, monitor);
    let x = crate::cpu::mixed::refine(&mut outer, &mut inner, opts, refine, &mut report)?;
    // The inner solves' counts were added as they ran; the outer launches and transfers are
    // the rest of what this engine counted.
    report.counts = engine.counters().snapshot().since(&counts0);
    Ok(Solution { x, report })
}

/// [`solve`] on the device a [`crate::gpu::DeviceChoice`] resolved to (for f32, the
/// precision of the inner solves): the GPU when there is one, else the CPU reference's
/// refinement ([`crate::cpu::mixed::solve`]). The report's `device` and `device_reason` say
/// which and why.
#[allow(clippy::too_many_arguments)] // solve's arguments and the device
pub fn solve_on(
    device: &ChosenDevice,
    engine: Option<&Engine>,
    a: &Csr<f64>,
    b: &[f64],
    x0: Option<&[f64]>,
    opts: &SolveOptions,
    refine: &RefineOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<f64>> {
    let mut sol = match (&device.context, engine) {
        (Some(_), Some(engine)) => solve(engine, a, b, x0, opts, refine, monitor)?,
        (Some(ctx), None) => solve(&Engine::new(ctx.clone()), a, b, x0, opts, refine, monitor)?,
        (None, _) => crate::cpu::mixed::solve(a, b, x0, opts, refine)?,
    };
    sol.report.device = device.info.clone();
    sol.report.device_reason = device.reason.clone();
    Ok(sol)
}
