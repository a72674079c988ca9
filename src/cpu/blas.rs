//! BLAS level-1 helpers for the reference solvers.

use crate::base::scalar::Scalar;

/// ⟨x, y⟩ in `T`.
pub fn dot<T: Scalar>(x: &[T], y: &[T]) -> T {
    debug_assert_eq!(x.len(), y.len());
    x.iter().zip(y).fold(T::zero(), |s, (&a, &b)| s + a * b)
}

/// ‖x‖₂ in `T`.
pub fn norm2<T: Scalar>(x: &[T]) -> T {
    dot(x, x).sqrt()
}

/// y ← y + α·x.
pub fn axpy<T: Scalar>(alpha: T, x: &[T], y: &mut [T]) {
    debug_assert_eq!(x.len(), y.len());
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// y ← x + β·y.
pub fn xpay<T: Scalar>(x: &[T], beta: T, y: &mut [T]) {
    debug_assert_eq!(x.len(), y.len());
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi = xi + beta * *yi;
    }
}

/// x ← α·x.
pub fn scal<T: Scalar>(alpha: T, x: &mut [T]) {
    for xi in x {
        *xi *= alpha;
    }
}

/// ‖x‖₂ accumulated in f64.
pub fn norm2_f64<T: Scalar>(x: &[T]) -> f64 {
    x.iter().map(|v| v.as_f64().powi(2)).sum::<f64>().sqrt()
}
