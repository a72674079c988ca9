//! The 3D convection–diffusion problem with upwind differences (Aliaga et al., §4.2) and its
//! convection fields.

use super::stencil::stencil_3d;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// The convection fields b(x, y, z) of the convection–diffusion benchmark (Aliaga et al., §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConvectionField {
    /// Convection in x-direction ("unit-vector" in the paper's table): b = (1, 0, 0).
    X,
    /// Diagonal convection: b = (1, 1, 1)/√3.
    Diagonal,
    /// Circular convection, exactly as printed in the paper: b = (½ − z, x − ½, ½ − y).
    Circular,
}

impl ConvectionField {
    /// All three fields.
    pub const ALL: [ConvectionField; 3] = [
        ConvectionField::X,
        ConvectionField::Diagonal,
        ConvectionField::Circular,
    ];

    /// The velocity b(x, y, z).
    pub fn velocity(self, x: f64, y: f64, z: f64) -> [f64; 3] {
        match self {
            ConvectionField::X => [1.0, 0.0, 0.0],
            ConvectionField::Diagonal => {
                let c = 1.0 / 3f64.sqrt();
                [c, c, c]
            }
            ConvectionField::Circular => [0.5 - z, x - 0.5, 0.5 - y],
        }
    }

    /// The name [`from_spec`](super::from_spec) and `FromStr` use: `x`, `diagonal` or `circular`.
    pub fn name(self) -> &'static str {
        match self {
            ConvectionField::X => "x",
            ConvectionField::Diagonal => "diagonal",
            ConvectionField::Circular => "circular",
        }
    }
}

impl std::fmt::Display for ConvectionField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ConvectionField {
    type Err = KrylovError;
    /// Accepts `x` (or `unit`), `diagonal` (or `diag`), `circular` (or `circ`), any case.
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "x" | "unit" | "unit-vector" => Ok(ConvectionField::X),
            "diagonal" | "diag" => Ok(ConvectionField::Diagonal),
            "circular" | "circ" => Ok(ConvectionField::Circular),
            _ => Err(KrylovError::InvalidOption(format!(
                "unknown convection field `{s}` (expected x, diagonal or circular)"
            ))),
        }
    }
}

/// 3D convection–diffusion problem `−ε Δu + b·∇u = f` on the unit cube with homogeneous
/// Dirichlet boundary (Aliaga et al., §4.2; the paper uses ε = 1 and k = 200), on the uniform
/// grid h = 1/(k+1) with k×k×k interior nodes `(x, y, z) = ((i+1)h, (j+1)h, (l+1)h)`, index
/// `i + k·j + k²·l` (x fastest). b is the [`ConvectionField`]:
///
/// * [`X`](ConvectionField::X): b = (1, 0, 0);
/// * [`Diagonal`](ConvectionField::Diagonal): b = (1, 1, 1)/√3;
/// * [`Circular`](ConvectionField::Circular): b = (½ − z, x − ½, ½ − y), evaluated at the node.
///
/// Diffusion uses the 7-point stencil; each convection term `b_d ∂u/∂x_d` uses first-order
/// upwind differences: the backward difference `b_d (u_P − u_{P−e_d})/h` when `b_d > 0`, the
/// forward difference `b_d (u_{P+e_d} − u_P)/h` when `b_d < 0`. The equations are multiplied by
/// h², so for ε = 1 the diffusion part is exactly [`laplace_3d`](super::laplace_3d):
///
/// ```text
/// a_PP        = 6ε + h (|b_x| + |b_y| + |b_z|)
/// a_P,P−e_d   = −ε − h·max(b_d, 0)      (upwind neighbour for b_d > 0)
/// a_P,P+e_d   = −ε − h·max(−b_d, 0)
/// ```
///
/// `a_PP` is computed as the sum of the six neighbour magnitudes (the formula above in exact
/// arithmetic; rounded up by at most one ulp in `T`), so interior rows sum to zero up to
/// rounding — constants
/// are in the kernel of the interior operator, as b·∇1 = 0 — and the dominance below holds
/// exactly after rounding. All off-diagonals are ≤ 0 and every row is weakly diagonally
/// dominant (strictly in rows touching the boundary), so the matrix is an irreducibly
/// diagonally dominant M-matrix for every field and every ε > 0; it is nonsymmetric whenever b ≠ 0. The full 7-point pattern is stored (n = k³,
/// nnz = 7k³ − 6k², as in the paper's Table 1). `k = 0` gives the empty matrix.
///
/// # Panics
/// If `eps` is not finite and positive, or nnz exceeds `u32::MAX`.
pub fn convection_diffusion_3d<T: Scalar>(k: usize, eps: f64, field: ConvectionField) -> Csr<T> {
    assert!(
        eps.is_finite() && eps > 0.0,
        "convection_diffusion_3d: eps must be finite and positive, got {eps}"
    );
    let h = 1.0 / (k as f64 + 1.0);
    stencil_3d(k, "convection_diffusion_3d", |i, j, l| {
        let (x, y, z) = ((i + 1) as f64 * h, (j + 1) as f64 * h, (l + 1) as f64 * h);
        let b = field.velocity(x, y, z);
        let lower = |bd: f64| -eps - h * bd.max(0.0);
        let upper = |bd: f64| -eps - h * (-bd).max(0.0);
        [
            lower(b[2]),
            lower(b[1]),
            lower(b[0]),
            upper(b[0]),
            upper(b[1]),
            upper(b[2]),
        ]
    })
}
