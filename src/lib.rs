//! # krylov-wgpu
//!
//! Portable GPU Krylov solvers for sparse linear systems `A x = b`, written in Rust on
//! [`wgpu`]: WGSL compute shaders with fused kernels (SpMV + inner products, vector
//! update + reduction) run on Vulkan, Metal and DX12. The f64 CPU reference in [`cpu`] is the
//! oracle for every GPU result and the fallback when no GPU exists.
//!
//! ```
//! use krylov_wgpu::matrix::generators;
//! use krylov_wgpu::solvers::{Method, SolveOptions, Variant};
//! let a = generators::poisson_2d_fd::<f64>(16);
//! let b = vec![1.0; a.nrows()];
//! let opts = SolveOptions { method: Method::Cg, variant: Variant::Pipelined, rtol: 1e-10, ..Default::default() };
//! let sol = krylov_wgpu::cpu::solve(&a, &b, None, &opts)?;
//! assert!(sol.report.converged);
//! assert!(sol.report.relative_residual <= 1e-10);
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

pub mod base;
pub mod bench;
pub mod cpu;
pub mod gpu;
pub mod matrix;
pub mod model;
pub mod precond;
pub mod solvers;

/// Errors ([`base::error`]), at the crate root as before.
pub use base::error;
pub use base::error::{KrylovError, MarketErrorKind, Result};
/// Scalar types ([`base::scalar`]), at the crate root as before.
pub use base::scalar;
pub use base::scalar::{Precision, Scalar};
/// The wgpu this crate is built on (the app and users share this one).
pub use wgpu;

/// The README's examples run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
