//! Test-problem generators: the matrices of the papers' benchmarks and random families.
//!
//! Every generator is deterministic (the random ones through a seeded
//! [`ChaCha8Rng`], identical on every platform), generic over the [`Scalar`] type,
//! and returns a [`Csr`] with sorted, unique column indices. The stencil generators write the
//! CSR arrays directly, so ~10⁷ unknowns take a fraction of a second in a release build.
//!
//! | generator | problem | n | nnz | symmetric |
//! | --- | --- | --- | --- | --- |
//! | [`poisson_2d_fd`] | 5-point −Δ on a k×k grid | k² | 5k² − 4k | yes (SPD) |
//! | [`poisson_2d_fem`] | P1 FEM −Δ on the unit square, k×k interior nodes | k² | 7k² − 8k + 2 | yes (SPD) |
//! | [`laplace_3d`] | 7-point −Δ on a k×k×k grid | k³ | 7k³ − 6k² | yes (SPD) |
//! | [`convection_diffusion_3d`] | −εΔu + b·∇u, upwind | k³ | 7k³ − 6k² | no |
//! | [`convection_diffusion_2d`] | −Δu + Pe·w·∇u, recirculating w, upwind | k² | 5k² − 4k | no |
//! | [`cavity_2d`] | driven-cavity Oseen saddle point [A Bᵀ; B 0], MAC grid; k² − 1 zero diagonal entries | 2k(k−1) + k² | ≤ 18k² | no |
//! | [`reservoir_3d`] | two-phase black-oil Jacobian, layered heterogeneous permeability, (p, S) per cell | 2·nx·ny·nz | ≤ 28·cells | no |
//! | [`waveguide_2d`] | full-vector dielectric waveguide mode operator, graded mesh (indefinite) | 2k² | ≤ 18k² | no |
//! | [`random_spd`] | random symmetric pattern, diagonally dominant | n | ≈ n·nnz_per_row | yes (SPD) |
//! | [`random_nonsymmetric`] | random pattern, diagonally dominant | n | n·min(nnz_per_row, n) | no |
//! | [`banded`] | given diagonals only, diagonally dominant | n | Σ over diagonals | no |
//!
//! [`from_spec`] builds any of them from a short string (`poisson2d:256`,
//! `convdiff3d:32:circular`, …); [`SPEC_HELP`] documents the grammar.
//!
//! A size of zero (`k = 0` or `n = 0`) gives the empty 0×0 matrix; [`from_spec`] rejects it.
//! Generators panic only when the requested matrix cannot be indexed with `u32` (more than
//! `u32::MAX` stored entries); [`from_spec`] checks that up front and returns an error instead.
//!
//! ```
//! use krylov_wgpu::matrix::generators::{self, ConvectionField};
//! let a = generators::poisson_2d_fd::<f64>(4);
//! assert_eq!((a.nrows(), a.nnz()), (16, 5 * 16 - 4 * 4));
//! let c = generators::convection_diffusion_3d::<f32>(8, 1.0, ConvectionField::Circular);
//! assert!(!c.is_symmetric(0.0));
//! let r = generators::from_spec::<f64>("random-spd:1000:7:42")?;
//! assert!(r.is_symmetric(0.0));
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```
//!
//! The code, by family: `stencil.rs` (finite-difference stencils: [`poisson_2d_fd`],
//! [`laplace_3d`]), `fem.rs` ([`poisson_2d_fem`]), `convection.rs`
//! ([`convection_diffusion_3d`]), `random.rs` (the random families and [`banded`]),
//! `flow.rs` ([`convection_diffusion_2d`], [`cavity_2d`]: the 2D flow problems of issue
//! #14), `reservoir.rs` ([`reservoir_3d`]), `waveguide.rs` ([`waveguide_2d`]) and `spec.rs` ([`from_spec`]).
//!
//! [`ChaCha8Rng`]: rand_chacha::ChaCha8Rng

mod convection;
mod fem;
mod flow;
mod random;
mod reservoir;
mod spec;
mod stencil;
mod waveguide;

pub use convection::{ConvectionField, convection_diffusion_3d};
pub use fem::{FEM_2D_PAPER_K, fem_2d_sizes, poisson_2d_fem};
pub use flow::{cavity_2d, cavity_2d_interleaved, cavity_wind, convection_diffusion_2d};
pub use random::{banded, random_nonsymmetric, random_spd};
pub use reservoir::reservoir_3d;
pub use spec::{MAX_SPEC_UNKNOWNS, SPEC_HELP, from_spec};
pub use stencil::{laplace_3d, poisson_2d_fd};
pub use waveguide::waveguide_2d;

use super::Csr;
use crate::base::scalar::Scalar;

// Shared by every family.

/// The empty 0×0 matrix.
fn empty<T: Scalar>() -> Csr<T> {
    Csr::from_parts_unchecked(0, 0, vec![0], Vec::new(), Vec::new())
}

/// Wraps arrays a generator built; they are valid by construction (checked anyway: O(nnz)).
fn finish<T: Scalar>(n: usize, row_ptr: Vec<u32>, col_idx: Vec<u32>, values: Vec<T>) -> Csr<T> {
    Csr::new(n, n, row_ptr, col_idx, values).expect("generator built an invalid CSR matrix")
}

/// Panics with a clear message when `nnz` does not fit the `u32` indexing of [`Csr`].
fn check_nnz(what: &str, nnz: Option<usize>) -> usize {
    match nnz {
        Some(v) if v <= u32::MAX as usize => v,
        _ => panic!("{what}: the matrix has more than u32::MAX stored entries"),
    }
}
