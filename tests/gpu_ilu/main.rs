//! ILU(0)/IC(0) on the GPU (issue 14): the triangular-solve kernels (`trisolve_levels`,
//! `trisolve_sweep`) against the host solves of the same factors, the whole apply
//! z = M⁻¹r and M⁻ᵀr against the CPU twin, and ILU-preconditioned solvers against the CPU
//! reference on the shipped nonsymmetric matrices.
//!
//! Grouped by concern: the apply (`apply`), the solvers (`solvers`), breakdown restarts and
//! shifts (`recovery`).

#[path = "../common/mod.rs"]
mod common;

mod apply;
mod concurrent;
mod hard_kinds;
mod left;
mod recovery;
mod solvers;
