//! CPU twins of the preconditioners in [`crate::precond`]: their set-up and z = M⁻¹ r behind
//! one interface, [`CpuPreconditioner`], the oracle the GPU versions are tested against and
//! the only way the CPU reference solvers apply M.
//!
//! One implementation per preconditioner: [`Identity`] (M = I), [`Jacobi`] (M = D) and
//! [`Ilu`] (M = LU, ILU(0) or IC(0), applied by the triangular solves of
//! [`crate::cpu::trisolve`]); [`build`] picks one from [`Precond`]. Adding one (ILU(0), say) means an implementation
//! here and an arm in [`build`]; no solver changes, because the solvers only call
//! [`CpuPreconditioner::apply`] / [`CpuPreconditioner::apply_transposed`], ask
//! [`CpuPreconditioner::is_identity`] to skip work for M = I, and ask
//! [`CpuPreconditioner::inverse_diagonal`] where they fuse a diagonal M⁻¹ into their vector
//! updates (pipelined CG, as the GPU kernels do), falling back to `apply` when it is `None`.
//!
//! ```
//! use krylov_wgpu::cpu::precond::{self, CpuPreconditioner};
//! use krylov_wgpu::matrix::generators::poisson_2d_fd;
//! use krylov_wgpu::solvers::Precond;
//! let a = poisson_2d_fd::<f64>(4);
//! let m = precond::build(&a, Precond::Jacobi, Default::default())?;
//! assert_eq!(m.kind(), Precond::Jacobi);
//! let mut z = vec![0.0; 16];
//! m.apply(&[1.0; 16], &mut z);
//! assert_eq!(z, vec![0.25; 16]);
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use super::ilu::Ilu0;
use super::trisolve::{self, TriFactor};
use crate::base::error::Result;
use crate::base::options::{Precond, Trisolve};
use crate::base::report::PrecondInfo;
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// A preconditioner M ≈ A on the host, as the CPU reference solvers use it.
pub trait CpuPreconditioner<T> {
    /// Which preconditioner this is (the report's and the CLI's name).
    fn kind(&self) -> Precond;
    /// z = M⁻¹ r.
    fn apply(&self, r: &[T], z: &mut [T]);
    /// z = M⁻ᵀ r (BiCG's shadow system). Defaults to [`apply`](Self::apply), right for a
    /// symmetric M.
    fn apply_transposed(&self, r: &[T], z: &mut [T]) {
        self.apply(r, z);
    }
    /// D⁻¹ when M is diagonal, for solvers that fuse z = D⁻¹ r into their own vector updates.
    /// `None` for M = I and for preconditioners without a diagonal form (the solver then
    /// calls [`apply`](Self::apply)).
    fn inverse_diagonal(&self) -> Option<&[T]> {
        None
    }
    /// Whether M = I: a solver may then use r itself as z and skip the inner products that
    /// equal ⟨r, r⟩ (`apply` still copies).
    fn is_identity(&self) -> bool {
        false
    }
    /// What M is and costs, for the report (`None` for M = I).
    fn info(&self) -> Option<PrecondInfo> {
        None
    }
}

/// M = I: z = r (a copy, no multiplication by 1).
#[derive(Debug, Clone, Copy, Default)]
pub struct Identity;

impl<T: Scalar> CpuPreconditioner<T> for Identity {
    fn kind(&self) -> Precond {
        Precond::None
    }
    fn apply(&self, r: &[T], z: &mut [T]) {
        z.copy_from_slice(r);
    }
    fn is_identity(&self) -> bool {
        true
    }
}

/// M = D, the main diagonal of A: z = D⁻¹ r (the CPU twin of [`crate::precond::Jacobi`]).
#[derive(Debug, Clone)]
pub struct Jacobi<T> {
    /// D⁻¹ ([`inverse_diagonal`] of A).
    pub dinv: Vec<T>,
}

impl<T: Scalar> Jacobi<T> {
    /// Jacobi's set-up for A: D⁻¹.
    pub fn new(a: &Csr<T>) -> Self {
        Jacobi {
            dinv: inverse_diagonal(a),
        }
    }
}

impl<T: Scalar> CpuPreconditioner<T> for Jacobi<T> {
    fn kind(&self) -> Precond {
        Precond::Jacobi
    }
    fn apply(&self, r: &[T], z: &mut [T]) {
        apply_diagonal(&self.dinv, r, z);
    }
    fn inverse_diagonal(&self) -> Option<&[T]> {
        Some(&self.dinv)
    }
    fn info(&self) -> Option<PrecondInfo> {
        Some(diagonal_info())
    }
}

/// The report entry of Jacobi: one `diag_scale` per apply (none when fused).
pub fn diagonal_info() -> PrecondInfo {
    PrecondInfo {
        kind: Precond::Jacobi,
        shift: 0.0,
        factor_attempts: 0,
        shift_notice: None,
        factor_nnz: 0,
        trisolve: None,
        levels: None,
        dispatches_per_apply: 1,
        setup_seconds: 0.0,
    }
}

/// M = LU from ILU(0), or M = L·D·Lᵀ from IC(0): z = U⁻¹L⁻¹r by two triangular solves with
/// the strategy of [`Trisolve`] (the CPU twin of [`crate::precond::Ilu`]).
pub struct Ilu<T> {
    factors: Ilu0,
    l: TriFactor<T>,
    u: TriFactor<T>,
    /// Uᵀ and Lᵀ, formed on the first transposed apply (BiCG).
    transposed: std::sync::OnceLock<(TriFactor<T>, TriFactor<T>)>,
    how: Trisolve,
    info: PrecondInfo,
}

impl<T: Scalar> Ilu<T> {
    /// Factors A (ILU(0), or IC(0) when `kind` is [`Precond::Ic0`]) and resolves `how`.
    pub fn new(a: &Csr<T>, kind: Precond, how: Trisolve) -> Result<Self> {
        let start = std::time::Instant::now();
        let factors = match kind {
            Precond::Ic0 => Ilu0::factor_ic0(a)?,
            Precond::Ilut => crate::cpu::ilut::factor_ilut(a)?,
            _ => Ilu0::factor(a)?,
        };
        let (l, u) = (factors.lower::<T>(), factors.upper::<T>());
        let (ll, lu) = (l.levels(), u.levels());
        let how = trisolve::resolve(how, &[&ll, &lu]);
        let dispatches_per_apply = match how {
            Trisolve::Sweeps(k) => 2 * k as usize,
            _ => ll.stages().len() + lu.stages().len(),
        };
        let info = PrecondInfo {
            kind,
            shift: factors.shift,
            factor_attempts: factors.attempts,
            shift_notice: shift_notice(&factors),
            factor_nnz: factors.nnz(),
            trisolve: Some(how),
            levels: Some([ll.count(), lu.count()]),
            dispatches_per_apply,
            setup_seconds: start.elapsed().as_secs_f64(),
        };
        Ok(Ilu {
            factors,
            l,
            u,
            transposed: std::sync::OnceLock::new(),
            how,
            info,
        })
    }

    /// The host factors (f64).
    pub fn factors(&self) -> &Ilu0 {
        &self.factors
    }

    /// The resolved triangular-solve strategy.
    pub fn trisolve(&self) -> Trisolve {
        self.how
    }

    /// L and U as the solves use them.
    pub fn triangular(&self) -> (&TriFactor<T>, &TriFactor<T>) {
        (&self.l, &self.u)
    }

    /// Uᵀ and Lᵀ (formed once).
    pub fn triangular_transposed(&self) -> &(TriFactor<T>, TriFactor<T>) {
        self.transposed.get_or_init(|| self.factors.transposed())
    }
}

/// The notice of a shifted factorisation (`None` when A itself factored).
pub fn shift_notice(f: &Ilu0) -> Option<String> {
    if f.growth > crate::cpu::ilu::MAX_GROWTH {
        return Some(format!(
            "{}: every shift up to {:.0e}·diag(row maxima) leaves unstable factors; using the \
             least unstable (shift {:.0e}, max |M^-1 A e| = {:.1e}): expect slow convergence",
            f.label,
            crate::cpu::ilu::SHIFTS[crate::cpu::ilu::SHIFTS.len() - 1],
            f.shift,
            f.growth
        ));
    }
    if f.rounding > crate::cpu::ilu::MAX_ROUNDING {
        return Some(format!(
            "{}: at every shift up to {:.0e}·diag(row maxima) its f32 triangular solves lose \
             accuracy; using the least inaccurate (shift {:.0e}, relative error {:.1e} on \
             M^-1 A e): expect slow convergence; mixed precision or f64 avoids it",
            f.label,
            crate::cpu::ilu::SHIFTS[crate::cpu::ilu::SHIFTS.len() - 1],
            f.shift,
            f.rounding
        ));
    }
    if let (true, Some(err)) = (f.shift > 0.0, f.rejected_rounding) {
        return Some(format!(
            "{}: the factors of a smaller shift cancel in f32 (their triangular solves err by \
             {:.1e} relative on M^-1 A e, over {:.0e}); factored A + {:.0e}·diag(row maxima) \
             instead (attempt {}, error {:.1e})",
            f.label,
            err,
            crate::cpu::ilu::MAX_ROUNDING,
            f.shift,
            f.attempts,
            f.rounding
        ));
    }
    (f.shift > 0.0).then(|| {
        format!(
            "{}: pivot {} broke down (zero, tiny{}); factored A + {:.0e}·diag(row maxima) \
             instead (attempt {})",
            f.label,
            f.broke_at.unwrap_or(0),
            if f.symmetric { " or negative" } else { "" },
            f.shift,
            f.attempts
        )
    })
}

impl<T: Scalar> CpuPreconditioner<T> for Ilu<T> {
    fn kind(&self) -> Precond {
        self.info.kind
    }
    fn apply(&self, r: &[T], z: &mut [T]) {
        let mut y = vec![T::zero(); r.len()];
        self.l.apply(self.how, r, &mut y);
        self.u.apply(self.how, &y, z);
    }
    fn apply_transposed(&self, r: &[T], z: &mut [T]) {
        let (ut, lt) = self.triangular_transposed();
        let mut y = vec![T::zero(); r.len()];
        ut.apply(self.how, r, &mut y);
        lt.apply(self.how, &y, z);
    }
    fn info(&self) -> Option<PrecondInfo> {
        Some(self.info.clone())
    }
}

/// Sets up preconditioner `kind` for A (`how`: the triangular solves of ILU(0)/IC(0)).
/// Errors: a factorisation that fails even shifted, IC(0) of a non-symmetric matrix.
pub fn build<T: Scalar>(
    a: &Csr<T>,
    kind: Precond,
    how: Trisolve,
) -> Result<Box<dyn CpuPreconditioner<T>>> {
    Ok(match kind {
        Precond::None => Box::new(Identity),
        Precond::Jacobi => Box::new(Jacobi::new(a)),
        Precond::Ilu0 | Precond::Ic0 | Precond::Ilut => Box::new(Ilu::new(a, kind, how)?),
    })
}

/// Jacobi's set-up: D⁻¹, the inverse of A's main diagonal, in `T` (a zero diagonal entry
/// gives ±inf; `validate_system` refuses such a matrix first with `ZeroDiagonal`).
pub fn inverse_diagonal<T: Scalar>(a: &Csr<T>) -> Vec<T> {
    a.diagonal().iter().map(|&d| T::one() / d).collect()
}

/// Jacobi's apply, z = D⁻¹ r (the CPU twin of the `diag_scale` kernel).
pub fn apply_diagonal<T: Scalar>(dinv: &[T], r: &[T], z: &mut [T]) {
    for ((z, &d), &r) in z.iter_mut().zip(dinv).zip(r) {
        *z = d * r;
    }
}
