//! Solver options and reports shared by every back end, and the GPU solvers.
//!
//! The GPU solvers live one file per method, classical and pipelined variants side by side
//! ([`cg`]); their kernels are in `shaders/` with host sides in [`crate::gpu`].

pub mod bicg;
pub mod bicgstab;
pub mod cg;
mod driver;
pub mod gmres;
pub mod jacobi;
pub(crate) use driver::kernel_times_since;
mod monitor;
mod options;
mod report;

pub use monitor::{ChannelMonitor, FnMonitor, Monitor, Progress};
pub use options::{
    CheckMode, Format, GramSchmidt, Method, Precond, SolveOptions, Variant, validate_system,
};
pub use report::{KernelTime, Solution, SolveReport, StopReason, WorkCounts};

use crate::error::{KrylovError, Result};
use crate::gpu::Engine;
use crate::matrix::Csr;
use crate::scalar::Scalar;

/// Whether `method` (in `variant`) runs on the GPU in this version.
pub fn on_gpu(method: Method, _variant: Variant) -> bool {
    matches!(
        method,
        Method::Cg | Method::Bicgstab | Method::Bicg | Method::Jacobi | Method::Gmres
    )
}

/// Solves A x = b on the GPU with the method of `opts` (see [`cg::solve`]).
/// Methods not yet on the GPU return [`KrylovError::Unsupported`]; use [`crate::cpu::solve`].
pub fn solve_gpu<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    match opts.method {
        Method::Cg => cg::solve(engine, a, b, x0, opts, monitor),
        Method::Bicgstab => bicgstab::solve(engine, a, b, x0, opts, monitor),
        Method::Bicg => bicg::solve(engine, a, b, x0, opts, monitor),
        Method::Jacobi => jacobi::solve(engine, a, b, x0, opts, monitor),
        Method::Gmres => gmres::solve(engine, a, b, x0, opts, monitor),
        // Every method runs on the GPU now; kept for methods added later.
        #[allow(unreachable_patterns)]
        other => Err(KrylovError::Unsupported(format!(
            "{other} does not run on the GPU yet (use the CPU solver)"
        ))),
    }
}
