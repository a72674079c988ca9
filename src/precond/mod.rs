//! Preconditioners M ≈ A on the GPU behind the one interface the solvers are written
//! against, [`GpuPreconditioner`]: its set-up runs once on the host, its apply z = M⁻¹ r is
//! recorded either **fused** into a solver's own kernels (the diagonal form D⁻¹ that the
//! pipelined kernels multiply by inside their vector updates, switched on by `Params.jacobi`)
//! or as a **separate step** ([`ApplyStep`], what the classical variants launch).
//!
//! One file per preconditioner: [`jacobi`] (M = D), [`ilu`] (M = LU: ILU(0) and IC(0), with
//! the triangular solves of [`trisolve`]); none (M = I) is [`Identity`]. Their CPU twins are
//! in [`crate::cpu::precond`]. Adding one means a file here that implements
//! [`GpuPreconditioner`] (its kernels in `shaders/precond/`), an arm in [`build`], its twin in
//! `cpu/precond.rs` and a value of [`Precond`]; no solver changes, because solvers only ask
//! for [`GpuPreconditioner::inverse_diagonal`] and [`GpuPreconditioner::bind_apply`]. A
//! preconditioner without a diagonal form returns `None` from the first; the solver then
//! records its apply step (the classical variants; a pipelined variant whose fused kernels
//! only know D⁻¹ runs its classical twin and says so in the report's `notes`).
//!
//! ```no_run
//! use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
//! use krylov_wgpu::matrix::generators::poisson_2d_fd;
//! use krylov_wgpu::precond;
//! use krylov_wgpu::solvers::Precond;
//! let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
//! let a = poisson_2d_fd::<f32>(8);
//! let m = precond::build(&engine, &a, Precond::Jacobi, Default::default())?;
//! assert_eq!(m.kind(), Precond::Jacobi);
//! assert!(m.inverse_diagonal().is_some());
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

pub mod ilu;
pub mod jacobi;
pub mod trisolve;

use crate::base::error::Result;
use crate::base::options::{Precond, Trisolve};
use crate::base::report::PrecondInfo;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::SolverBuffers;
use crate::gpu::{Batch, Engine, Kernel, ShaderConfig};
use crate::matrix::Csr;
use wgpu::Buffer;

pub use ilu::Ilu;
pub use jacobi::Jacobi;

/// A preconditioner resident on the GPU, as the solvers use it (`Send + Sync`: a matrix
/// handle may keep it between calls from any thread).
pub trait GpuPreconditioner<T>: Send + Sync {
    /// Which preconditioner this is (the report's and the CLI's name).
    fn kind(&self) -> Precond;
    /// D⁻¹ when M is diagonal: the fused solver kernels bind it and scale by it inside their
    /// updates. `None` for M = I and for preconditioners without a diagonal form.
    fn inverse_diagonal(&self) -> Option<&wgpu::Buffer>;
    /// z = M⁻¹ r for the buffers `r` and `z` as a recorded step of solver kernels compiled
    /// and bound where `at` says. `None` when M = I: the solver then uses r itself as z.
    fn bind_apply(&self, at: &ApplySite<'_>, r: &Buffer, z: &Buffer) -> Result<Option<ApplyStep>>;
    /// z = M⁻ᵀ r, as [`Self::bind_apply`] (BiCG's shadow system). The default is right for
    /// a symmetric M (Jacobi, IC(0)); ILU(0) overrides it with the transposed solves.
    fn bind_apply_transposed(
        &self,
        at: &ApplySite<'_>,
        r: &Buffer,
        z: &Buffer,
    ) -> Result<Option<ApplyStep>> {
        self.bind_apply(at, r, z)
    }
    /// What M is and costs, for the report (`None` for M = I).
    fn info(&self) -> Option<PrecondInfo> {
        None
    }
}

/// Where an apply step's kernels run: the engine, the configuration a solver's kernels
/// compile with, the solver's common buffers and a params uniform (whose `n` and `groups`
/// the kernels read).
#[derive(Clone, Copy)]
pub struct ApplySite<'a> {
    pub engine: &'a Engine,
    pub config: ShaderConfig,
    pub bufs: &'a SolverBuffers,
    pub params: &'a Buffer,
}

/// z = M⁻¹ r bound to its buffers: the launches to record, in order.
pub struct ApplyStep {
    launches: Vec<(Kernel, wgpu::BindGroup, u32)>,
}

impl ApplyStep {
    /// A step of `(kernel, bind group, workgroups)` launches.
    pub fn new(launches: Vec<(Kernel, wgpu::BindGroup, u32)>) -> Self {
        ApplyStep { launches }
    }

    /// Records the step's launches into `batch`.
    pub fn record(&self, batch: &mut Batch<'_>) {
        for (kernel, bind_group, groups) in &self.launches {
            batch.dispatch(kernel, bind_group, *groups);
        }
    }

    /// Kernel launches per apply (for the launch-count tables).
    pub fn launches(&self) -> usize {
        self.launches.len()
    }
}

/// M = I.
pub struct Identity;

impl<T: Scalar> GpuPreconditioner<T> for Identity {
    fn kind(&self) -> Precond {
        Precond::None
    }
    fn inverse_diagonal(&self) -> Option<&wgpu::Buffer> {
        None
    }
    fn bind_apply(&self, _: &ApplySite<'_>, _: &Buffer, _: &Buffer) -> Result<Option<ApplyStep>> {
        Ok(None)
    }
}

/// Sets up preconditioner `kind` for A on `engine` (host set-up, then upload); `how`: the
/// triangular solves of ILU(0)/IC(0).
pub fn build<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    kind: Precond,
    how: Trisolve,
) -> Result<Box<dyn GpuPreconditioner<T>>> {
    Ok(match kind {
        Precond::None => Box::new(Identity),
        Precond::Jacobi => Box::new(Jacobi::new(engine, a)?),
        Precond::Ilu0 | Precond::Ic0 | Precond::Ilut => Box::new(Ilu::new(engine, a, kind, how)?),
    })
}

/// A preconditioner as the solver kernels bind it: M, plus what the fused kernels bind at
/// their D⁻¹ binding when M has no diagonal form (a 1-entry dummy: the kernels branch on
/// `Params.jacobi` but bind the buffer either way). Derefs to M. Clones share M (its
/// buffers and factors): how repeated solves of one matrix reuse it.
pub struct SolverPrecond<T> {
    m: std::sync::Arc<dyn GpuPreconditioner<T>>,
    unused_dinv: Option<Buffer>,
}

impl<T> Clone for SolverPrecond<T> {
    fn clone(&self) -> Self {
        SolverPrecond {
            m: self.m.clone(),
            unused_dinv: self.unused_dinv.clone(),
        }
    }
}

impl<T: Scalar> SolverPrecond<T> {
    /// [`build`]s preconditioner `kind` for A, with the dummy D⁻¹ when M has no diagonal.
    pub fn build(engine: &Engine, a: &Csr<T>, kind: Precond, how: Trisolve) -> Result<Self> {
        let m = build(engine, a, kind, how)?;
        let unused_dinv = match m.inverse_diagonal() {
            Some(_) => None,
            None => Some(engine.storage_zeroed::<T>("dinv (unused)", 1)?),
        };
        Ok(SolverPrecond {
            m: m.into(),
            unused_dinv,
        })
    }

    /// Whether the fused kernels scale by D⁻¹ (`Params.jacobi`).
    pub fn fused_diagonal(&self) -> bool {
        self.m.inverse_diagonal().is_some()
    }

    /// The buffer the fused kernels bind as D⁻¹: M's, or the dummy.
    pub fn dinv(&self) -> &Buffer {
        self.m
            .inverse_diagonal()
            .or(self.unused_dinv.as_ref())
            .expect("a dummy D⁻¹ exists when M has no diagonal")
    }
}

impl<T> std::ops::Deref for SolverPrecond<T> {
    type Target = dyn GpuPreconditioner<T>;
    fn deref(&self) -> &Self::Target {
        self.m.as_ref()
    }
}
