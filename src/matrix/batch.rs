//! A batch of independent systems A_i X_i = B_i (the input of batched solves): each system
//! one matrix and one or more right-hand sides, matrices of any size and sparsity pattern.

use super::Csr;
use super::system::validate_system;
use crate::base::error::{KrylovError, Result};
use crate::base::options::{Method, Precond, SolveOptions};
use crate::base::scalar::Scalar;

/// One system of a batch: a matrix and its right-hand sides (several share one copy of A).
///
/// ```
/// use krylov_wgpu::matrix::{batch::BatchSystem, generators::poisson_2d_fd};
/// let a = poisson_2d_fd::<f64>(8);
/// let b1 = vec![1.0; 64];
/// let b2 = a.mul_vec(&vec![1.0; 64])?;
/// let system = BatchSystem::new(&a, vec![&b1[..], &b2[..]]);
/// assert_eq!(system.rhs.len(), 2);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone)]
pub struct BatchSystem<'a, T> {
    pub a: &'a Csr<T>,
    pub rhs: Vec<&'a [T]>,
}

impl<'a, T> BatchSystem<'a, T> {
    pub fn new(a: &'a Csr<T>, rhs: Vec<&'a [T]>) -> Self {
        BatchSystem { a, rhs }
    }

    /// A system with one right-hand side.
    pub fn single(a: &'a Csr<T>, b: &'a [T]) -> Self {
        BatchSystem { a, rhs: vec![b] }
    }
}

/// Checks a batch before any work: the options suit a batched solve (CG, with Jacobi or no
/// preconditioner), the batch is not empty, and every system passes [`validate_system`] for
/// each of its right-hand sides (square, lengths, finite, a non-zero diagonal for Jacobi).
/// An error names the system (and right-hand side) at fault.
pub fn validate_batch<T: Scalar>(
    systems: &[BatchSystem<'_, T>],
    opts: &SolveOptions,
) -> Result<()> {
    opts.validate()?;
    if opts.method != Method::Cg {
        return Err(KrylovError::Unsupported(format!(
            "batched solves run CG (symmetric positive definite systems); {} is not batched yet \
             — solve those systems one by one with `krylov solve`",
            opts.method
        )));
    }
    if !matches!(opts.precond, Precond::None | Precond::Jacobi) {
        return Err(KrylovError::InvalidOption(format!(
            "batched CG takes --precond jacobi or none, not {}",
            opts.precond
        )));
    }
    if systems.is_empty() {
        return Err(KrylovError::InvalidOption(
            "the batch holds no system".into(),
        ));
    }
    for (i, s) in systems.iter().enumerate() {
        if s.rhs.is_empty() {
            return Err(KrylovError::InvalidOption(format!(
                "system {i} of the batch has no right-hand side"
            )));
        }
        if s.a.nrows() == 0 {
            return Err(KrylovError::InvalidOption(format!(
                "system {i} of the batch has an empty matrix"
            )));
        }
        for (j, b) in s.rhs.iter().enumerate() {
            validate_system(s.a, b, opts).map_err(|e| {
                KrylovError::InvalidOption(format!(
                    "system {i} (right-hand side {j}) of the batch: {e}"
                ))
            })?;
        }
    }
    Ok(())
}

/// A batch that owns its matrices and right-hand sides in `T`, converted from f64 (what the
/// CLI and the Python package read): [`OwnedBatch::systems`] lends it as [`BatchSystem`]s.
#[derive(Debug, Clone)]
pub struct OwnedBatch<T> {
    pub matrices: Vec<Csr<T>>,
    pub rhs: Vec<Vec<Vec<T>>>,
}

impl<T: Scalar> OwnedBatch<T> {
    /// Rounds every matrix and right-hand side to `T` (an error if a matrix's values do not
    /// fit `T`).
    pub fn from_f64(matrices: &[&Csr<f64>], rhs: &[Vec<Vec<f64>>]) -> Result<Self> {
        Ok(OwnedBatch {
            matrices: matrices
                .iter()
                .map(|a| a.cast::<T>())
                .collect::<Result<_>>()?,
            rhs: rhs
                .iter()
                .map(|bs| {
                    bs.iter()
                        .map(|b| b.iter().map(|v| T::from_f64(*v)).collect())
                        .collect()
                })
                .collect(),
        })
    }

    /// The systems: matrix i with its right-hand sides.
    pub fn systems(&self) -> Vec<BatchSystem<'_, T>> {
        self.matrices
            .iter()
            .zip(&self.rhs)
            .map(|(a, bs)| BatchSystem::new(a, bs.iter().map(|b| &b[..]).collect()))
            .collect()
    }
}
