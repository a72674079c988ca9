//! f64 reference implementations (generic over [`Scalar`](crate::Scalar), so also usable in f32):
//! the oracle for every GPU test and the fallback when no GPU exists.

mod blas;
mod spmv;

pub mod bicg;
pub mod bicgstab;
pub mod cg;
pub mod dense;
pub mod gmres;
pub mod jacobi;

pub use blas::{axpy, dot, norm2, norm2_f64, scal, xpay};
pub use spmv::{spmv, spmv_f64, true_relative_residual};
