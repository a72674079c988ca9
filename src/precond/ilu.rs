//! ILU(0) and IC(0) preconditioning on the GPU (paper 004): the factors are computed on the
//! host in f64 ([`crate::cpu::ilu::Ilu0`], with its pivot shift), split into the unit-lower
//! L and the upper U, uploaded once, and applied as two sparse triangular solves
//! ([`GpuTriangular`], level-scheduled or by Jacobi sweeps). The transposed pair Uᵀ, Lᵀ (for
//! BiCG's M⁻ᵀ) is formed and uploaded on first use. The CPU twin is
//! [`crate::cpu::precond::Ilu`]; both resolve `--trisolve auto` the same way, so CPU and GPU
//! run the same preconditioner.

use std::cell::OnceCell;

use super::trisolve::GpuTriangular;
use super::{ApplySite, ApplyStep, GpuPreconditioner};
use crate::base::error::Result;
use crate::base::options::{Precond, Trisolve};
use crate::base::report::PrecondInfo;
use crate::base::scalar::Scalar;
use crate::cpu::precond::Ilu as HostIlu;
use crate::gpu::Engine;
use crate::matrix::Csr;
use wgpu::Buffer;

/// M = LU (ILU(0)) or M = L·D·Lᵀ (IC(0)) resident on the GPU.
pub struct Ilu<T> {
    host: HostIlu<T>,
    l: GpuTriangular,
    u: GpuTriangular,
    transposed: OnceCell<(GpuTriangular, GpuTriangular)>,
    info: PrecondInfo,
}

impl<T: Scalar> Ilu<T> {
    /// Factors A on the host (`kind`: ILU(0) or IC(0)), resolves `how` and uploads L and U.
    pub fn new(engine: &Engine, a: &Csr<T>, kind: Precond, how: Trisolve) -> Result<Self> {
        let start = std::time::Instant::now();
        let host = HostIlu::new(a, kind, how)?;
        let (l, u) = host.triangular();
        let (l, u) = (
            GpuTriangular::upload(engine, l)?,
            GpuTriangular::upload(engine, u)?,
        );
        let mut info =
            crate::cpu::precond::CpuPreconditioner::info(&host).expect("ILU reports its set-up");
        info.setup_seconds = start.elapsed().as_secs_f64();
        Ok(Ilu {
            host,
            l,
            u,
            transposed: OnceCell::new(),
            info,
        })
    }

    /// The resolved triangular-solve strategy.
    pub fn trisolve(&self) -> Trisolve {
        self.host.trisolve()
    }

    /// z = T₂⁻¹ T₁⁻¹ r as launches, with the scratch vectors they need.
    fn bind_pair(
        &self,
        at: &ApplySite<'_>,
        (first, second): (&GpuTriangular, &GpuTriangular),
        r: &Buffer,
        z: &Buffer,
    ) -> Result<ApplyStep> {
        let how = self.trisolve();
        let n = first.n();
        // The bind groups keep these alive as long as the step.
        let y = at.engine.storage_zeroed::<T>("ilu y", n)?;
        let spare = match how {
            Trisolve::Sweeps(_) => at.engine.storage_zeroed::<T>("ilu sweep", n)?,
            _ => at.engine.storage_zeroed::<T>("ilu sweep (unused)", 1)?,
        };
        let mut launches = first.bind::<T>(at, how, r, &y, &spare)?;
        launches.extend(second.bind::<T>(at, how, &y, z, &spare)?);
        Ok(ApplyStep::new(launches))
    }
}

impl<T: Scalar> GpuPreconditioner<T> for Ilu<T> {
    fn kind(&self) -> Precond {
        self.info.kind
    }

    fn inverse_diagonal(&self) -> Option<&Buffer> {
        None
    }

    fn bind_apply(&self, at: &ApplySite<'_>, r: &Buffer, z: &Buffer) -> Result<Option<ApplyStep>> {
        self.bind_pair(at, (&self.l, &self.u), r, z).map(Some)
    }

    fn bind_apply_transposed(
        &self,
        at: &ApplySite<'_>,
        r: &Buffer,
        z: &Buffer,
    ) -> Result<Option<ApplyStep>> {
        if self.info.kind == Precond::Ic0 {
            // M = L·D·Lᵀ is symmetric: M⁻ᵀ = M⁻¹.
            return self.bind_apply(at, r, z);
        }
        if self.transposed.get().is_none() {
            let (ut, lt) = self.host.triangular_transposed();
            let pair = (
                GpuTriangular::upload(at.engine, ut)?,
                GpuTriangular::upload(at.engine, lt)?,
            );
            let _ = self.transposed.set(pair);
        }
        let (ut, lt) = self.transposed.get().expect("set above");
        self.bind_pair(at, (ut, lt), r, z).map(Some)
    }

    fn info(&self) -> Option<PrecondInfo> {
        Some(self.info.clone())
    }
}
