//! `--method auto`: which Krylov method a matrix calls for, from its structure alone.
//!
//! CG needs A symmetric positive definite; GMRES takes any nonsingular A. Positive
//! definiteness cannot be checked cheaply, but two of its necessary conditions can: symmetry
//! (to the tolerance the CLI's CG check uses) and a positive diagonal (each aᵢᵢ = eᵢᵀAeᵢ must
//! be positive). A matrix that passes both gets CG — the fastest method for the SPD systems
//! of FEM and diffusion problems — and one that CG then finds indefinite (⟨p, Ap⟩ ≤ 0,
//! [`crate::solvers::StopReason::NotSpd`]) is solved again with GMRES by the caller (the CLI
//! does, and says so). Everything else gets restarted GMRES, the method PETSc and Ginkgo
//! users reach for on a nonsymmetric system (CFD, circuits, reservoirs): monotone residuals
//! and no breakdown short of convergence, unlike BiCGStab.

use crate::base::options::Method;
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// The relative tolerance of the symmetry test ([`Csr::is_symmetric`]).
pub const SYMMETRY_TOL: f64 = 1e-10;

/// `auto`'s method and why.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodChoice {
    pub method: Method,
    pub reason: String,
}

/// The method `--method auto` runs on `a` (square).
///
/// ```
/// use krylov_wgpu::matrix::{Csr, generators};
/// use krylov_wgpu::solvers::{Method, choose_method_for};
/// let spd = generators::from_spec::<f64>("poisson2d:8").unwrap();
/// assert_eq!(choose_method_for(&spd).method, Method::Cg);
/// let nonsymmetric = generators::from_spec::<f64>("convdiff2d:8").unwrap();
/// assert_eq!(choose_method_for(&nonsymmetric).method, Method::Gmres);
/// // Symmetric with a negative diagonal entry: not positive definite.
/// let indefinite = Csr::<f64>::from_triplets(2, &[(0, 0, 1.0), (1, 1, -1.0)]).unwrap();
/// assert_eq!(choose_method_for(&indefinite).method, Method::Gmres);
/// ```
pub fn choose_method_for<T: Scalar>(a: &Csr<T>) -> MethodChoice {
    if !a.is_symmetric(SYMMETRY_TOL) {
        return MethodChoice {
            method: Method::Gmres,
            reason: "A is not symmetric: GMRES".into(),
        };
    }
    let diagonal = a.diagonal();
    if let Some(i) = diagonal
        .iter()
        .position(|d| d.as_f64().partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater))
    {
        return MethodChoice {
            method: Method::Gmres,
            reason: format!(
                "A is symmetric but a_{i}{i} = {:e} is not positive (A is not positive \
                 definite): GMRES",
                diagonal[i].as_f64()
            ),
        };
    }
    MethodChoice {
        method: Method::Cg,
        reason: "A is symmetric with a positive diagonal: CG (GMRES if CG finds A indefinite)"
            .into(),
    }
}
