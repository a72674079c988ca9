//! CPU twins of the preconditioners in [`crate::precond`]: their set-up and z = M⁻¹ r, the
//! oracle the GPU versions are tested against and what the CPU reference solvers apply.

use crate::base::scalar::Scalar;
use crate::matrix::Csr;

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
