//! Jacobi preconditioning, M = D = diag(A): set-up D⁻¹ on the host
//! ([`crate::cpu::precond::inverse_diagonal`], its CPU twin), apply z = D⁻¹ r either fused
//! into the solver kernels (they bind D⁻¹) or as the `diag_scale` kernel
//! (`shaders/precond/diag_scale.wgsl`).

use super::{ApplySite, ApplyStep, GpuPreconditioner};
use crate::base::error::Result;
use crate::base::options::Precond;
use crate::base::scalar::Scalar;
use crate::gpu::Engine;
use crate::gpu::kernels::solver_kernel;
use crate::matrix::Csr;
use wgpu::Buffer;

/// D⁻¹ resident on the GPU.
pub struct Jacobi {
    dinv: wgpu::Buffer,
}

impl Jacobi {
    /// Computes D⁻¹ of `a` in `T` and uploads it (one counted upload).
    pub fn new<T: Scalar>(engine: &Engine, a: &Csr<T>) -> Result<Self> {
        let d = crate::cpu::precond::inverse_diagonal(a);
        Ok(Jacobi {
            dinv: engine.storage_from("dinv", &d)?,
        })
    }
}

impl<T: Scalar> GpuPreconditioner<T> for Jacobi {
    fn kind(&self) -> Precond {
        Precond::Jacobi
    }

    fn inverse_diagonal(&self) -> Option<&wgpu::Buffer> {
        Some(&self.dinv)
    }

    fn bind_apply(&self, at: &ApplySite<'_>, r: &Buffer, z: &Buffer) -> Result<Option<ApplyStep>> {
        let ApplySite {
            engine,
            config,
            bufs,
            params,
        } = *at;
        let kernel = solver_kernel::<T>(engine, "diag_scale", config)?;
        let bg = bufs.bind(engine, &kernel, params, &[(5, &self.dinv), (6, r), (7, z)]);
        Ok(Some(ApplyStep::new(vec![(kernel, bg, bufs.groups)])))
    }

    fn info(&self) -> Option<crate::base::report::PrecondInfo> {
        Some(crate::cpu::precond::diagonal_info())
    }
}
