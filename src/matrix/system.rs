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

/// Checks the initial guess of a solve on a matrix with `ncols` columns: its length must be
/// `ncols` (else `DimensionMismatch`) and its entries finite (else `NonFinite`, naming the
/// first bad index). `None` (start from x = 0) always passes.
pub fn check_initial_guess<T: Scalar>(x0: Option<&[T]>, ncols: usize) -> Result<()> {
    let Some(x0) = x0 else {
        return Ok(());
    };
    if x0.len() != ncols {
        return Err(KrylovError::DimensionMismatch {
            what: "initial guess length vs matrix columns",
            expected: ncols,
            found: x0.len(),
        });
    }
    if let Some(index) = x0.iter().position(|v| !v.is_finite()) {
        return Err(KrylovError::NonFinite {
            what: "initial guess",
            index,
        });
    }
    Ok(())
}
