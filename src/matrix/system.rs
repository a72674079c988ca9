//! Checks that a linear system A x = b is a well-posed input for a solve.

use crate::base::error::{KrylovError, Result};
use crate::base::options::{Method, Precond, SolveOptions};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// Checks that `A x = b` is a well-posed input: A square, finite, sizes matching, b finite,
/// and a non-zero diagonal when Jacobi is used (as preconditioner or as the method).
pub fn validate_system<T: Scalar>(a: &Csr<T>, b: &[T], opts: &SolveOptions) -> Result<()> {
    opts.validate()?;
    a.require_square()?;
    if b.len() != a.nrows() {
        return Err(KrylovError::DimensionMismatch {
            what: "right-hand side length vs matrix rows",
            expected: a.nrows(),
            found: b.len(),
        });
    }
    a.check_finite()?;
    if let Some(index) = b.iter().position(|v| !v.is_finite()) {
        return Err(KrylovError::NonFinite {
            what: "right-hand side",
            index,
        });
    }
    if (opts.precond == Precond::Jacobi || opts.method == Method::Jacobi)
        && let Some(row) = a.diagonal().iter().position(|d| *d == T::zero())
    {
        return Err(KrylovError::ZeroDiagonal { row });
    }
    Ok(())
}
