//! ILU(0) and IC(0) preconditioning on the GPU (paper 004): the factors are computed on the
//! host in f64 ([`crate::cpu::ilu::Ilu0`], with its pivot shift), split into the unit-lower
//! L and the upper U, uploaded once, and applied as two sparse triangular solves
//! ([`GpuTriangular`], level-scheduled or by Jacobi sweeps). The transposed pair Uᵀ, Lᵀ (for
//! BiCG's M⁻ᵀ) is formed and uploaded on first use. The CPU twin is
//! [`crate::cpu::precond::Ilu`]; both resolve `--trisolve auto` the same way, so CPU and GPU
//! run the same preconditioner.
//!
//! [`StackedIlu`] is the same M for BiCG's concurrent variant: z = M⁻¹r and z̃ = M⁻ᵀr̃ in
//! the dispatches of one apply, as [z; z̃] = diag(U, Lᵀ)⁻¹ diag(L, Uᵀ)⁻¹ [r; r̃] with the
//! stacked factors ([`TriFactor::stack`](crate::cpu::trisolve::TriFactor::stack); IC(0):
//! diag(L, L) and diag(U, U), since M⁻ᵀ = M⁻¹ there).

use std::sync::OnceLock;

use super::trisolve::GpuTriangular;
use super::{ApplySite, ApplyStep, GpuPreconditioner};
use crate::base::error::Result;
use crate::base::options::{Precond, Trisolve};
use crate::base::report::PrecondInfo;
use crate::base::scalar::Scalar;
use crate::cpu::precond::Ilu as HostIlu;
use crate::cpu::trisolve::TriFactor;
use crate::gpu::Engine;
use crate::matrix::Csr;
use wgpu::Buffer;

/// M = LU (ILU(0)) or M = L·D·Lᵀ (IC(0)) resident on the GPU.
pub struct Ilu<T> {
    host: HostIlu<T>,
    l: GpuTriangular,
    u: GpuTriangular,
    transposed: OnceLock<(GpuTriangular, GpuTriangular)>,
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
            transposed: OnceLock::new(),
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
        pair: (&GpuTriangular, &GpuTriangular),
        r: &Buffer,
        z: &Buffer,
    ) -> Result<ApplyStep> {
        bind_pair::<T>(at, self.trisolve(), pair, r, z)
    }
}

/// z = T₂⁻¹ T₁⁻¹ r by `how` as launches, with the scratch vectors they need.
fn bind_pair<T: Scalar>(
    at: &ApplySite<'_>,
    how: Trisolve,
    (first, second): (&GpuTriangular, &GpuTriangular),
    r: &Buffer,
    z: &Buffer,
) -> Result<ApplyStep> {
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

/// One of M's two applies alone on a device, of a factorisation computed once on the host:
/// M⁻¹ (L then U) or M⁻ᵀ (Uᵀ then Lᵀ; IC(0): M⁻¹ again, M being symmetric). BiCG on two
/// devices (paper 004 §3.1, `solvers::dist`) keeps M⁻¹ beside A on one device and M⁻ᵀ
/// beside Aᵀ on the other, so neither device holds the other's pair; the same factors, the
/// same strategy and the same operations per row as [`Ilu`]'s `bind_apply` and
/// `bind_apply_transposed`.
pub struct IluSide {
    first: GpuTriangular,
    second: GpuTriangular,
    how: Trisolve,
}

impl IluSide {
    /// Uploads M⁻¹'s pair (`transposed` false) or M⁻ᵀ's (true) of `host` to `engine`.
    pub fn upload<T: Scalar>(engine: &Engine, host: &HostIlu<T>, transposed: bool) -> Result<Self> {
        let ic0 = crate::cpu::precond::CpuPreconditioner::info(host)
            .is_some_and(|i| i.kind == Precond::Ic0);
        let (first, second) = match transposed && !ic0 {
            true => {
                let (ut, lt) = host.triangular_transposed();
                (ut, lt)
            }
            false => host.triangular(),
        };
        Ok(IluSide {
            first: GpuTriangular::upload(engine, first)?,
            second: GpuTriangular::upload(engine, second)?,
            how: host.trisolve(),
        })
    }

    /// Launches of one apply.
    pub fn dispatches(&self) -> usize {
        self.first.dispatches(self.how) + self.second.dispatches(self.how)
    }

    /// z = M⁻¹r (or M⁻ᵀr) as a recorded step.
    pub fn bind<T: Scalar>(&self, at: &ApplySite<'_>, r: &Buffer, z: &Buffer) -> Result<ApplyStep> {
        bind_pair::<T>(at, self.how, (&self.first, &self.second), r, z)
    }
}

/// ILU(0)/IC(0) for BiCG's concurrent variant: M⁻¹ and M⁻ᵀ applied together to a stacked
/// vector [r; r̃] of 2n entries, [z; z̃] = [M⁻¹r; M⁻ᵀr̃], by one solve with diag(L, Uᵀ) then
/// one with diag(U, Lᵀ) (IC(0): diag(L, L), diag(U, U)) — both triangular solves of both
/// applies in the same dispatches, so the pair costs [`Self::dispatches`] launches (those of
/// one apply: `2K` with `sweeps:K`; with levels the stacks' merged stages, at most the two
/// applies' together) instead of the two applies' sum. Same factors, same strategy, same
/// operations per row as [`Ilu`]'s `bind_apply` and `bind_apply_transposed`: the CPU twin is
/// [`crate::cpu::precond::Ilu`]'s `apply` and `apply_transposed`.
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::random_nonsymmetric;
/// use krylov_wgpu::precond::ilu::StackedIlu;
/// use krylov_wgpu::solvers::{Precond, Trisolve};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = random_nonsymmetric::<f32>(100, 5, 1);
/// let m = StackedIlu::new(&engine, &a, Precond::Ilu0, Trisolve::Sweeps(3))?;
/// assert_eq!((m.n(), m.dispatches()), (200, 6));
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub struct StackedIlu<T> {
    host: HostIlu<T>,
    /// diag(L, Uᵀ) (IC(0): diag(L, L)).
    first: GpuTriangular,
    /// diag(U, Lᵀ) (IC(0): diag(U, U)).
    second: GpuTriangular,
    /// Launches of the M⁻¹ and the M⁻ᵀ apply on their own.
    separate: [usize; 2],
    info: PrecondInfo,
}

impl<T: Scalar> StackedIlu<T> {
    /// Factors A on the host (`kind`: ILU(0) or IC(0)), resolves `how` as [`Ilu::new`] does
    /// (from L's and U's schedules, so both run the same preconditioner), stacks the factors
    /// and uploads the two stacks (L and U are not uploaded on their own).
    pub fn new(engine: &Engine, a: &Csr<T>, kind: Precond, how: Trisolve) -> Result<Self> {
        let start = std::time::Instant::now();
        let host = HostIlu::new(a, kind, how)?;
        let (l, u) = host.triangular();
        let (t1, t2) = match kind {
            Precond::Ic0 => (l, u),
            _ => {
                let (ut, lt) = host.triangular_transposed();
                (ut, lt)
            }
        };
        let launches = |f: &TriFactor<T>, g: &TriFactor<T>| match host.trisolve() {
            Trisolve::Sweeps(k) => 2 * k as usize,
            _ => f.stages(&f.levels()).len() + g.stages(&g.levels()).len(),
        };
        let separate = [launches(l, u), launches(t1, t2)];
        let (first, second) = (TriFactor::stack(l, t1), TriFactor::stack(u, t2));
        let (first, second) = (
            GpuTriangular::upload(engine, &first)?,
            GpuTriangular::upload(engine, &second)?,
        );
        let mut info =
            crate::cpu::precond::CpuPreconditioner::info(&host).expect("ILU reports its set-up");
        info.setup_seconds = start.elapsed().as_secs_f64();
        Ok(StackedIlu {
            host,
            first,
            second,
            separate,
            info,
        })
    }

    /// The resolved triangular-solve strategy.
    pub fn trisolve(&self) -> Trisolve {
        self.host.trisolve()
    }

    /// Order of the stacked system: 2n.
    pub fn n(&self) -> usize {
        self.first.n()
    }

    /// Launches of one stacked apply (both triangular solves of both applies).
    pub fn dispatches(&self) -> usize {
        let how = self.trisolve();
        self.first.dispatches(how) + self.second.dispatches(how)
    }

    /// Launches of the M⁻¹ apply and of the M⁻ᵀ apply made one after the other, as
    /// [`Ilu`]'s `bind_apply` and `bind_apply_transposed` record them (the classical
    /// variant); [`Self::dispatches`] is at most their sum.
    pub fn separate_dispatches(&self) -> [usize; 2] {
        self.separate
    }

    /// What M is and costs (the report's `preconditioner`: the same M as [`Ilu`]'s, its
    /// `dispatches_per_apply` that of one M⁻¹ apply on its own).
    pub fn info(&self) -> PrecondInfo {
        self.info.clone()
    }

    /// The host factors and their CPU twin.
    pub fn host(&self) -> &HostIlu<T> {
        &self.host
    }

    /// [z; z̃] = [M⁻¹r; M⁻ᵀr̃] for the stacked buffers `rr` = [r; r̃] and `zz` (2n entries
    /// each) as a recorded step. `at.params` must hold `n` = 2n (the sweeps cover every row
    /// of the stack).
    pub fn bind_apply(&self, at: &ApplySite<'_>, rr: &Buffer, zz: &Buffer) -> Result<ApplyStep> {
        bind_pair::<T>(at, self.trisolve(), (&self.first, &self.second), rr, zz)
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
