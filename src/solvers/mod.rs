//! Solver options and reports shared by every back end, and the GPU solvers.
//!
//! The GPU solvers live one file per method, classical and pipelined variants side by side
//! ([`cg`]); their kernels are in `shaders/` with host sides in [`crate::gpu`].

pub mod batch;
pub mod bicg;
pub mod bicgstab;
pub mod cagmres;
pub mod cg;
pub mod dist;
mod driver;
pub mod gmres;
pub mod host_check;
pub mod jacobi;
mod method_rule;
pub mod mixed;
pub(crate) mod pool;
mod precond_rule;
mod reuse;
pub mod slow_guard;

pub use reuse::{KeptUploads, ReuseScope, reuse_uploads, reuse_uploads_from};
mod system;
pub(crate) use driver::kernel_times_since;

// The vocabulary lives in the ground floor (`crate::base`); solver users find it here too.
pub use crate::base::ca::{Basis, CaOptions, CaReport, Tsqr};
pub use crate::base::monitor::{ChannelMonitor, FnMonitor, Monitor, Progress};
pub use crate::base::options::{
    CheckMode, Format, GramSchmidt, Method, OuterPrecision, Precond, Reduction, RefineOptions,
    Refinement, Reorder, Side, SolveOptions, Trisolve, Variant,
};
pub use crate::base::report::{
    KernelTime, PrecondInfo, RefinementReport, Solution, SolveReport, StopReason, WorkCounts,
};
pub use crate::matrix::validate_system;
pub use method_rule::{MethodChoice, SYMMETRY_TOL, choose_method_for};
pub use precond_rule::{
    auto_precond_failed_note, auto_precond_for, auto_precond_note, auto_precond_retry_warranted,
};
pub use slow_guard::{SlowGuard, SlowWatch};

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::{ChosenDevice, Engine};
use crate::matrix::Csr;

/// Whether `method` (in `variant`) runs on the GPU in this version.
pub fn on_gpu(method: Method, _variant: Variant) -> bool {
    matches!(
        method,
        Method::Cg
            | Method::Bicgstab
            | Method::Bicg
            | Method::Jacobi
            | Method::Gmres
            | Method::CaGmres
    )
}

/// Solves A x = b on the GPU with the method of `opts` (see [`cg::solve`]), after the row
/// reordering `opts.reorder` ([`crate::cpu::with_reordering`], as the CPU reference does).
/// Methods not yet on the GPU return [`KrylovError::Unsupported`]; use [`crate::cpu::solve`].
/// An f32 solve that overflows is solved again on balanced rows and columns
/// ([`crate::cpu::recovery::balance_after_f32_overflow`], as the CPU reference does).
pub fn solve_gpu<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    let mut solve = |opts: &SolveOptions| {
        crate::cpu::with_reordering(a, b, x0, opts, opts.reorder, |a, b, x0, opts| {
            solve_gpu_as_given(engine, a, b, x0, opts, monitor)
        })
    };
    let first = solve(opts)?;
    let mut sol = crate::cpu::recovery::balance_after_f32_overflow(first, opts, solve)?;
    crate::cpu::explain_f32_gap(&mut sol.report);
    host_check::contradicts_convergence(a, b, opts.rtol, opts.atol, &mut sol);
    Ok(sol)
}

/// [`solve_gpu`] on A x = b exactly as given.
fn solve_gpu_as_given<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    opts.validate()?;
    // The fused pipelined kernels only know a diagonal M (they scale by D⁻¹ inside their
    // updates); a factored M needs its apply step between launches, which the classical
    // variants record.
    let factored = matches!(opts.precond, Precond::Ilu0 | Precond::Ic0 | Precond::Ilut);
    let left = matches!(opts.method, Method::Gmres | Method::Bicgstab)
        && opts.side == Side::Left
        && opts.precond != Precond::None;
    if (factored || left)
        && opts.variant != Variant::Classical
        && matches!(opts.method, Method::Cg | Method::Bicgstab | Method::Gmres)
    {
        let classical = SolveOptions {
            variant: Variant::Classical,
            ..opts.clone()
        };
        let mut sol = solve_gpu_as_given(engine, a, b, x0, &classical, monitor)?;
        sol.report.notes.insert(
            0,
            format!(
                "{} {} fuses only a diagonal preconditioner on the right into its \
                 kernels: ran the classical variant, which launches the {} apply between its \
                 steps",
                opts.variant, opts.method, opts.precond
            ),
        );
        return Ok(sol);
    }
    match opts.method {
        Method::Cg => cg::solve(engine, a, b, x0, opts, monitor),
        Method::Bicgstab => bicgstab::solve(engine, a, b, x0, opts, monitor),
        Method::Bicg => bicg::solve(engine, a, b, x0, opts, monitor),
        Method::Jacobi => jacobi::solve(engine, a, b, x0, opts, monitor),
        Method::Gmres => gmres::solve(engine, a, b, x0, opts, monitor),
        Method::CaGmres => cagmres::solve(engine, a, b, x0, opts, monitor),
        // Every method runs on the GPU now; kept for methods added later.
        #[allow(unreachable_patterns)]
        other => Err(KrylovError::Unsupported(format!(
            "{other} does not run on the GPU yet (use the CPU solver)"
        ))),
    }
}

/// Solves A x = b on the device a [`crate::gpu::DeviceChoice`] resolved to: on `engine` (an
/// engine on `device`'s GPU, or `None` for a fresh one) when it is a GPU, with the CPU
/// reference otherwise. The report's `device` and `device_reason` say which and why.
///
/// ```
/// use krylov_wgpu::gpu::{DeviceChoice, DevicePreference};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{self, SolveOptions};
/// use krylov_wgpu::Precision;
/// let a = poisson_2d_fd::<f64>(32);
/// let b = a.mul_vec(&vec![1.0; a.ncols()])?;
/// let device = DeviceChoice::from_env(DevicePreference::Auto).precision(Precision::F64).resolve()?;
/// let sol = solvers::solve_on(&device, None, &a, &b, None, &SolveOptions::default(), &mut ())?;
/// assert!(sol.report.converged && !sol.report.device_reason.is_empty());
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn solve_on<T: Scalar>(
    device: &ChosenDevice,
    engine: Option<&Engine>,
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    let mut sol = match (&device.context, engine) {
        (Some(_), Some(engine)) => solve_gpu(engine, a, b, x0, opts, monitor)?,
        (Some(ctx), None) => solve_gpu(&Engine::new(ctx.clone()), a, b, x0, opts, monitor)?,
        (None, _) => crate::cpu::solve(a, b, x0, opts)?,
    };
    sol.report.device = device.info.clone();
    sol.report.device_reason = device.reason.clone();
    Ok(sol)
}
