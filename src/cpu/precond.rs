//! CPU twins of the preconditioners in [`crate::precond`]: their set-up and z = M⁻¹ r behind
//! one interface, [`CpuPreconditioner`], the oracle the GPU versions are tested against and
//! the only way the CPU reference solvers apply M.
//!
//! One implementation per preconditioner: [`Identity`] (M = I) and [`Jacobi`] (M = D);
//! [`build`] picks one from [`Precond`]. Adding one (ILU(0), say) means an implementation
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
//! let m = precond::build(&a, Precond::Jacobi);
//! assert_eq!(m.kind(), Precond::Jacobi);
//! let mut z = vec![0.0; 16];
//! m.apply(&[1.0; 16], &mut z);
//! assert_eq!(z, vec![0.25; 16]);
//! ```

use crate::base::options::Precond;
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
}

/// Sets up preconditioner `kind` for A.
pub fn build<T: Scalar>(a: &Csr<T>, kind: Precond) -> Box<dyn CpuPreconditioner<T>> {
    match kind {
        Precond::None => Box::new(Identity),
        Precond::Jacobi => Box::new(Jacobi::new(a)),
    }
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
