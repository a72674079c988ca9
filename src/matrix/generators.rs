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

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Csr;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;

/// Largest number of unknowns [`from_spec`] accepts (2³¹).
pub const MAX_SPEC_UNKNOWNS: usize = 1 << 31;

/// Grid parameters `k` of the 2D finite-element benchmark of Rupp et al. (2016), §4.1: uniformly
/// refined triangulations of the unit square with `k = 2^l − 1` interior nodes per direction.
pub const FEM_2D_PAPER_K: [usize; 6] = [15, 31, 63, 127, 255, 511];

/// Numbers of unknowns of the 2D finite-element benchmark (225, 961, 3969, 16129, 65025,
/// 261121): `k²` for each `k` in [`FEM_2D_PAPER_K`], i.e. the sizes [`poisson_2d_fem`] produces.
pub fn fem_2d_sizes() -> [usize; 6] {
    FEM_2D_PAPER_K.map(|k| k * k)
}

/// The grammar [`from_spec`] accepts, for `--help` texts.
pub const SPEC_HELP: &str = "\
Matrix specs (sizes are positive integers; n = number of unknowns <= 2^31):
  poisson2d:K                  5-point finite differences, K x K grid (n = K^2), Dirichlet
  fem2d:K                      P1 finite elements on the unit square, K x K interior nodes
                               (n = K^2; the paper's sizes are K = 15, 31, 63, 127, 255, 511)
  laplace3d:K                  7-point finite differences, K x K x K grid (n = K^3)
  convdiff3d:K:FIELD[:EPS]     -EPS*Laplace(u) + b.grad(u), upwind, K^3 unknowns;
                               FIELD = x | diagonal | circular, EPS > 0 (default 1)
  random-spd:N:NNZ[:SEED]      random symmetric positive definite, ~NNZ entries per row
  random:N:NNZ[:SEED]          random nonsymmetric, NNZ entries per row (diagonal included)
  banded:N:OFFSETS[:SEED]      entries on the diagonals OFFSETS only, e.g. -2,-1,0,1,2
SEED defaults to 0. All generated matrices are diagonally dominant.
Examples: poisson2d:256  fem2d:255  convdiff3d:64:circular:0.01  banded:10000:-1,0,1";

/// One-line version of the grammar, for error messages.
const SPEC_SUMMARY: &str = "expected poisson2d:K | fem2d:K | laplace3d:K | \
convdiff3d:K:x|diagonal|circular[:EPS] | random-spd:N:NNZ[:SEED] | random:N:NNZ[:SEED] | \
banded:N:OFFSETS[:SEED] (e.g. banded:1000:-1,0,1)";

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

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

/// n and nnz of the 5-point stencil on a k×k grid.
fn fd2_size(k: usize) -> Option<(usize, usize)> {
    let n = k.checked_mul(k)?;
    Some((n, n.checked_mul(5)? - 4 * k))
}

/// n and nnz of the P1 mesh graph on k×k interior nodes.
fn fem2_size(k: usize) -> Option<(usize, usize)> {
    let n = k.checked_mul(k)?;
    if k == 0 {
        return Some((0, 0));
    }
    Some((n, n.checked_mul(7)?.checked_add(2)? - 8 * k))
}

/// n and nnz of the 7-point stencil on a k×k×k grid.
fn fd3_size(k: usize) -> Option<(usize, usize)> {
    let k2 = k.checked_mul(k)?;
    let n = k2.checked_mul(k)?;
    Some((n, n.checked_mul(7)? - 6 * k2))
}

/// Magnitude in [0.1, 1) with a random sign: off-diagonal values of the random families.
fn random_offdiag(rng: &mut ChaCha8Rng) -> f64 {
    let m = 0.1 + 0.9 * rng.random::<f64>();
    if rng.random::<bool>() { m } else { -m }
}

/// Sets each row's diagonal entry (already stored) to `1 + Σ_{j≠i} |a_ij|`, making the matrix
/// strictly diagonally dominant with a positive diagonal.
fn set_dominant_diagonal<T: Scalar>(row_ptr: &[u32], col_idx: &[u32], values: &mut [T]) {
    for i in 0..row_ptr.len() - 1 {
        let (s, e) = (row_ptr[i] as usize, row_ptr[i + 1] as usize);
        let mut off = 0.0;
        let mut diag = None;
        for p in s..e {
            if col_idx[p] as usize == i {
                diag = Some(p);
            } else {
                off += values[p].as_f64().abs();
            }
        }
        let p = diag.expect("diagonal entry is always stored");
        values[p] = T::from_f64(1.0 + off);
    }
}

// ---------------------------------------------------------------------------------------------
// Stencils
// ---------------------------------------------------------------------------------------------

/// Builds the 5-point-pattern matrix on a k×k grid (row-major, x fastest) from per-node
/// coefficients `[south, west, centre, east, north]`; every in-grid neighbour is stored.
fn stencil_2d<T: Scalar>(k: usize, mut coef: impl FnMut(usize, usize) -> [f64; 5]) -> Csr<T> {
    if k == 0 {
        return empty();
    }
    let (n, nnz) = fd2_size(k).expect("overflow");
    check_nnz("2D stencil", Some(nnz));
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    row_ptr.push(0u32);
    for j in 0..k {
        for i in 0..k {
            let p = i + k * j;
            let c = coef(i, j);
            let mut put = |col: usize, v: f64| {
                col_idx.push(col as u32);
                values.push(T::from_f64(v));
            };
            if j > 0 {
                put(p - k, c[0]);
            }
            if i > 0 {
                put(p - 1, c[1]);
            }
            put(p, c[2]);
            if i + 1 < k {
                put(p + 1, c[3]);
            }
            if j + 1 < k {
                put(p + k, c[4]);
            }
            row_ptr.push(col_idx.len() as u32);
        }
    }
    debug_assert_eq!(col_idx.len(), nnz);
    finish(n, row_ptr, col_idx, values)
}

/// The diagonal `Σ |o|` over the neighbour coefficients `offs` as rounded to `T`, summed in f64
/// in the given order and rounded *up* to `T`: a row storing these off-diagonals (in this column
/// order, or a subset of them) is then weakly diagonally dominant exactly, also in f32.
fn dominant_diagonal<T: Scalar>(offs: &[T]) -> T {
    let s: f64 = offs
        .iter()
        .map(|o| o.as_f64().abs())
        .fold(0.0, |a, b| a + b);
    let t = T::from_f64(s);
    if t.as_f64() < s {
        t + t * T::epsilon()
    } else {
        t
    }
}

/// Builds the 7-point-pattern matrix on a k×k×k grid (x fastest, then y, then z) from per-node
/// neighbour coefficients `[z−, y−, x−, x+, y+, z+]` (all ≤ 0); the centre is
/// [`dominant_diagonal`] of all six. Every in-grid neighbour is stored, even when its
/// coefficient is zero; out-of-grid (Dirichlet) neighbours are dropped.
fn stencil_3d<T: Scalar>(
    k: usize,
    what: &str,
    mut coef: impl FnMut(usize, usize, usize) -> [f64; 6],
) -> Csr<T> {
    if k == 0 {
        return empty();
    }
    let size = fd3_size(k);
    let nnz = check_nnz(what, size.map(|s| s.1));
    let n = size.expect("checked").0;
    let kk = k * k;
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    row_ptr.push(0u32);
    for l in 0..k {
        for j in 0..k {
            for i in 0..k {
                let p = i + k * j + kk * l;
                let c = coef(i, j, l).map(T::from_f64);
                let diag = dominant_diagonal(&c);
                let mut put = |col: usize, v: T| {
                    col_idx.push(col as u32);
                    values.push(v);
                };
                if l > 0 {
                    put(p - kk, c[0]);
                }
                if j > 0 {
                    put(p - k, c[1]);
                }
                if i > 0 {
                    put(p - 1, c[2]);
                }
                put(p, diag);
                if i + 1 < k {
                    put(p + 1, c[3]);
                }
                if j + 1 < k {
                    put(p + k, c[4]);
                }
                if l + 1 < k {
                    put(p + kk, c[5]);
                }
                row_ptr.push(col_idx.len() as u32);
            }
        }
    }
    debug_assert_eq!(col_idx.len(), nnz);
    finish(n, row_ptr, col_idx, values)
}

/// 2D Poisson problem −Δu = f on a k×k interior grid with homogeneous Dirichlet boundary,
/// 5-point finite differences, **unscaled** (the factor 1/h² is left out):
///
/// ```text
///            −1
///        −1   4  −1        (a_ii = 4, a_ij = −1 for the west/east/south/north neighbours)
///            −1
/// ```
///
/// Unknown `(i, j)`, `0 ≤ i, j < k` (i along x), has index `i + k·j` (row-major, x fastest).
/// Neighbours outside the grid are boundary values and are eliminated, so boundary rows have
/// fewer entries. n = k², nnz = 5k² − 4k; symmetric positive definite, weakly diagonally
/// dominant (strictly in boundary rows). `k = 0` gives the empty matrix. This is the CLI's
/// default problem at k = 256.
///
/// # Panics
/// If nnz exceeds `u32::MAX` (k above ~29000).
pub fn poisson_2d_fd<T: Scalar>(k: usize) -> Csr<T> {
    stencil_2d(k, |_, _| [-1.0, -1.0, 4.0, -1.0, -1.0])
}

/// 2D Poisson problem −Δu = f on the unit square discretised with linear (P1) finite elements:
/// the benchmark of Rupp et al. (2016), §4.1.
///
/// **Mesh.** The square is cut into (k+1)×(k+1) equal cells of side h = 1/(k+1); every cell
/// `[x₀, x₀+h]×[y₀, y₀+h]` is split by its SW–NE diagonal into the triangles
/// `(x₀,y₀),(x₀+h,y₀),(x₀+h,y₀+h)` and `(x₀,y₀),(x₀+h,y₀+h),(x₀,y₀+h)` ("all diagonals in one
/// direction"). The homogeneous Dirichlet boundary nodes are eliminated, leaving the k×k
/// interior nodes as unknowns, numbered `i + k·j` for the node at `((i+1)h, (j+1)h)` (row-major,
/// x fastest). The paper's sizes are k = 2^l − 1 ([`FEM_2D_PAPER_K`], [`fem_2d_sizes`]).
///
/// **Assembly.** For each triangle the element stiffness matrix
/// `K_ab = ∫_T ∇φ_a·∇φ_b = (β_a β_b + γ_a γ_b) / (4|T|)` (β, γ the usual coordinate differences)
/// is computed and added into the rows and columns of its interior vertices. In 2D `K` is
/// invariant under scaling, so it is evaluated on integer lattice coordinates and the entries
/// come out exact: for each right-angled triangle, 1 at the right angle, ½ at the acute
/// vertices, −½ along the legs and 0 along the hypotenuse. Assembled, an interior row reads
///
/// ```text
///        −1   0              a_ii = 4, a_ij = −1 for the W/E/S/N neighbours,
///    −1   4  −1              a_ij = 0 for the NE and SW neighbours (the diagonal edges)
///     0  −1
/// ```
///
/// — the values of [`poisson_2d_fd`], but **the structural zeros on the diagonal edges are
/// kept**: the sparsity pattern is the mesh graph (node ↔ node sharing an edge), 7 entries in an
/// interior row as for an assembled FEM matrix, n = k², nnz = 7k² − 8k + 2. Symmetric positive
/// definite. The right-hand side for f would be `h²·f(node)` (mass lumping). The paper's meshes
/// are refined unstructured triangulations; this structured one has the same size sequence and
/// ≈ 7 entries per row. `k = 0` gives the empty matrix.
///
/// # Panics
/// If nnz exceeds `u32::MAX` (k above ~24000).
pub fn poisson_2d_fem<T: Scalar>(k: usize) -> Csr<T> {
    if k == 0 {
        return empty();
    }
    let size = fem2_size(k);
    let nnz = check_nnz("poisson_2d_fem", size.map(|s| s.1));
    let n = k * k;

    // Pattern: the mesh graph. Offsets (di, dj) of a node's neighbours, in increasing column
    // order (index = i + k·j): SW, S, W, self, E, N, NE.
    const NEIGHBOURS: [(isize, isize); 7] =
        [(-1, -1), (0, -1), (-1, 0), (0, 0), (1, 0), (0, 1), (1, 1)];
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(nnz);
    row_ptr.push(0u32);
    for j in 0..k as isize {
        for i in 0..k as isize {
            for (di, dj) in NEIGHBOURS {
                let (ni, nj) = (i + di, j + dj);
                if (0..k as isize).contains(&ni) && (0..k as isize).contains(&nj) {
                    col_idx.push((ni + k as isize * nj) as u32);
                }
            }
            row_ptr.push(col_idx.len() as u32);
        }
    }
    debug_assert_eq!(col_idx.len(), nnz);

    // Element stiffness matrix of a triangle given by lattice coordinates.
    fn element_stiffness(v: [(i64, i64); 3]) -> [[f64; 3]; 3] {
        let (mut beta, mut gamma) = ([0i64; 3], [0i64; 3]);
        for a in 0..3 {
            let (b, c) = (v[(a + 1) % 3], v[(a + 2) % 3]);
            beta[a] = b.1 - c.1; // y_b − y_c
            gamma[a] = c.0 - b.0; // x_c − x_b
        }
        // 2|T| = β₀γ₁ − β₁γ₀ (positive for counter-clockwise vertices).
        let two_area = (beta[0] * gamma[1] - beta[1] * gamma[0]) as f64;
        let mut k = [[0.0; 3]; 3];
        for a in 0..3 {
            for b in 0..3 {
                k[a][b] = (beta[a] * beta[b] + gamma[a] * gamma[b]) as f64 / (2.0 * two_area);
            }
        }
        k
    }
    // Lattice vertices (I, J), 0 ≤ I, J ≤ k + 1, of the two triangles of the cell at (ci, cj).
    let tri = |ci: i64, cj: i64| {
        [
            [(ci, cj), (ci + 1, cj), (ci + 1, cj + 1)],
            [(ci, cj), (ci + 1, cj + 1), (ci, cj + 1)],
        ]
    };

    // Element loop: scatter every element matrix into the rows of its interior vertices.
    let kk = k as i64;
    let interior = |(x, y): (i64, i64)| -> Option<usize> {
        let inside = (1..=kk).contains(&x) && (1..=kk).contains(&y);
        inside.then(|| (x - 1) as usize + k * (y - 1) as usize)
    };
    // The mesh is translation invariant: the two element matrices of one cell serve all cells.
    let ke = tri(0, 0).map(element_stiffness);
    let mut acc = vec![0.0f64; nnz];
    for cj in 0..=kk {
        for ci in 0..=kk {
            for (verts, ke) in tri(ci, cj).into_iter().zip(&ke) {
                let ids = verts.map(interior);
                for a in 0..3 {
                    let Some(r) = ids[a] else { continue };
                    let (s, e) = (row_ptr[r] as usize, row_ptr[r + 1] as usize);
                    for b in 0..3 {
                        let Some(c) = ids[b] else { continue };
                        let pos = col_idx[s..e]
                            .binary_search(&(c as u32))
                            .expect("element edge is in the mesh graph");
                        acc[s + pos] += ke[a][b];
                    }
                }
            }
        }
    }
    let values = acc.into_iter().map(T::from_f64).collect();
    finish(n, row_ptr, col_idx, values)
}

/// 3D Laplace problem −Δu = f on a k×k×k interior grid with homogeneous Dirichlet boundary,
/// 7-point finite differences, unscaled: `a_ii = 6`, `a_ij = −1` for the six axis neighbours.
///
/// Unknown `(i, j, l)` (along x, y, z) has index `i + k·j + k²·l` (lexicographic, x fastest).
/// n = k³, nnz = 7k³ − 6k² (full matrix; the paper's Table 1 counts only one triangle).
/// Symmetric positive definite. `k = 0` gives the empty matrix. The benchmark of Aliaga et al.
/// §4.2 uses k = 200 and 252 (n ≈ 8M and 16M).
///
/// # Panics
/// If nnz exceeds `u32::MAX` (k above ~850).
pub fn laplace_3d<T: Scalar>(k: usize) -> Csr<T> {
    stencil_3d(k, "laplace_3d", |_, _, _| [-1.0; 6])
}

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

    /// The name [`from_spec`] and `FromStr` use: `x`, `diagonal` or `circular`.
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
/// h², so for ε = 1 the diffusion part is exactly [`laplace_3d`]:
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

// ---------------------------------------------------------------------------------------------
// Random families
// ---------------------------------------------------------------------------------------------

/// Number of partners row `i` draws in [`random_spd`]: spreads `n·off/2` draws evenly.
fn spd_picks(i: usize, off: usize) -> usize {
    ((i as u128 + 1) * off as u128 / 2 - i as u128 * off as u128 / 2) as usize
}

/// Sorts each row of a CSR under construction by column, merges duplicates (summing) and
/// compacts the arrays in place; returns the new row pointers.
fn sort_and_merge_rows<T: Scalar>(
    row_ptr: &[u32],
    col_idx: &mut Vec<u32>,
    values: &mut Vec<T>,
) -> Vec<u32> {
    let n = row_ptr.len() - 1;
    let mut out_ptr = Vec::with_capacity(n + 1);
    out_ptr.push(0u32);
    let mut scratch: Vec<(u32, T)> = Vec::new();
    let mut w = 0usize;
    for i in 0..n {
        let (s, e) = (row_ptr[i] as usize, row_ptr[i + 1] as usize);
        scratch.clear();
        scratch.extend((s..e).map(|p| (col_idx[p], values[p])));
        scratch.sort_unstable_by_key(|&(c, _)| c);
        let row_start = w;
        for &(c, v) in &scratch {
            if w > row_start && col_idx[w - 1] == c {
                values[w - 1] += v;
            } else {
                col_idx[w] = c;
                values[w] = v;
                w += 1;
            }
        }
        out_ptr.push(w as u32);
    }
    col_idx.truncate(w);
    values.truncate(w);
    out_ptr
}

/// Random sparse symmetric positive definite matrix with about `nnz_per_row` stored entries per
/// row (the diagonal included).
///
/// Construction (all draws from `ChaCha8Rng::seed_from_u64(seed)`): row i, in order
/// i = 0, 1, …, draws `p_i = ⌊(i+1)·m/2⌋ − ⌊i·m/2⌋` partners (m = min(nnz_per_row − 1, n − 1),
/// so n·m/2 draws in all), each a column j ≠ i uniform over all other columns together with a
/// value v of magnitude in [0.1, 1) and random sign; v is placed at (i, j) and (j, i).
/// Coinciding entries are summed, so rows have ≈ nnz_per_row entries on average (fewer by the
/// rare collisions; row lengths vary around the mean). Finally
/// `a_ii = 1 + Σ_{j≠i} |a_ij|`: symmetric, strictly diagonally dominant with a positive diagonal,
/// hence SPD (all eigenvalues ≥ 1). `nnz_per_row ≤ 1` gives the identity; `n = 0` the empty
/// matrix. Same `(n, nnz_per_row, seed)`, same matrix on every platform.
///
/// # Panics
/// If `n · nnz_per_row` exceeds `u32::MAX`.
pub fn random_spd<T: Scalar>(n: usize, nnz_per_row: usize, seed: u64) -> Csr<T> {
    if n == 0 {
        return empty();
    }
    let m = nnz_per_row.saturating_sub(1).min(n - 1);
    let total = check_nnz(
        "random_spd",
        m.checked_mul(n).and_then(|v| v.checked_add(n)),
    );
    let draw = |rng: &mut ChaCha8Rng, i: usize| {
        let mut j = rng.random_range(0..(n - 1) as u32) as usize;
        if j >= i {
            j += 1;
        }
        (j, random_offdiag(rng))
    };
    // Pass 1: row lengths (diagonal + own draws + draws that land in the row).
    let mut counts = vec![0u32; n + 1];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in 0..n {
        let p = spd_picks(i, m);
        counts[i + 1] += 1 + p as u32;
        for _ in 0..p {
            let (j, _) = draw(&mut rng, i);
            counts[j + 1] += 1;
        }
    }
    for i in 0..n {
        counts[i + 1] += counts[i];
    }
    let row_ptr = counts;
    debug_assert_eq!(row_ptr[n] as usize, total);
    // Pass 2: replay the same stream and fill.
    let mut next = row_ptr.clone();
    let mut col_idx = vec![0u32; total];
    let mut values = vec![T::zero(); total];
    let mut put = |r: usize, c: usize, v: T, col_idx: &mut [u32], values: &mut [T]| {
        let d = next[r] as usize;
        col_idx[d] = c as u32;
        values[d] = v;
        next[r] += 1;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in 0..n {
        put(i, i, T::zero(), &mut col_idx, &mut values);
        for _ in 0..spd_picks(i, m) {
            let (j, v) = draw(&mut rng, i);
            let v = T::from_f64(v);
            put(i, j, v, &mut col_idx, &mut values);
            put(j, i, v, &mut col_idx, &mut values);
        }
    }
    let row_ptr = sort_and_merge_rows(&row_ptr, &mut col_idx, &mut values);
    set_dominant_diagonal(&row_ptr, &col_idx, &mut values);
    finish(n, row_ptr, col_idx, values)
}

/// Random sparse nonsymmetric matrix with exactly `min(nnz_per_row, n)` stored entries in every
/// row, the diagonal included: the "k randomly distributed nonzeros per row" family of Rupp et
/// al. (2016), Fig. 3, made strictly diagonally dominant.
///
/// Construction (draws from `ChaCha8Rng::seed_from_u64(seed)`, row by row): row i takes
/// m = min(nnz_per_row − 1, n − 1) distinct columns j ≠ i, uniform over all other columns
/// (Floyd's sampling without replacement), each with a value of magnitude in [0.1, 1) and
/// random sign; then `a_ii = 1 + Σ_{j≠i} |a_ij|`. Nonsymmetric (pattern and values) except in
/// degenerate cases (n ≤ 1, nnz_per_row ≤ 1, full rows). `nnz_per_row ≤ 1` gives the identity;
/// `n = 0` the empty matrix.
///
/// # Panics
/// If `n · min(nnz_per_row, n)` exceeds `u32::MAX`.
pub fn random_nonsymmetric<T: Scalar>(n: usize, nnz_per_row: usize, seed: u64) -> Csr<T> {
    if n == 0 {
        return empty();
    }
    let m = nnz_per_row.saturating_sub(1).min(n - 1);
    let total = check_nnz("random_nonsymmetric", (m + 1).checked_mul(n));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // stamp[c] == i + 1 marks candidate c as taken in row i (no clearing between rows).
    let mut stamp = vec![0u32; if m > 32 { n - 1 } else { 0 }];
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0u32);
    let mut col_idx = Vec::with_capacity(total);
    let mut values = Vec::with_capacity(total);
    let mut row: Vec<(u32, T)> = Vec::with_capacity(m + 1);
    let mut picked: Vec<usize> = Vec::with_capacity(m);
    for i in 0..n {
        // Floyd: a uniformly random m-subset of the n − 1 candidates.
        picked.clear();
        let mark = i as u32 + 1;
        let cand = n - 1;
        for t in cand - m..cand {
            let r = rng.random_range(0..=t as u32) as usize;
            // Short rows: scan the picks (cache-friendly); long rows: the stamp array.
            let taken = if m <= 32 {
                picked.contains(&r)
            } else {
                stamp[r] == mark
            };
            let c = if taken { t } else { r };
            if m > 32 {
                stamp[c] = mark;
            }
            picked.push(c);
        }
        row.clear();
        row.push((i as u32, T::zero()));
        for &c in &picked {
            let j = if c >= i { c + 1 } else { c };
            row.push((j as u32, T::from_f64(random_offdiag(&mut rng))));
        }
        row.sort_unstable_by_key(|&(c, _)| c);
        for &(c, v) in &row {
            col_idx.push(c);
            values.push(v);
        }
        row_ptr.push(col_idx.len() as u32);
    }
    set_dominant_diagonal(&row_ptr, &col_idx, &mut values);
    finish(n, row_ptr, col_idx, values)
}

/// n×n matrix whose entries lie only on the diagonals `offsets` (0 = main diagonal, +d the d-th
/// superdiagonal `a_{i,i+d}`, −d the d-th subdiagonal), for the DIA format.
///
/// The main diagonal is always present (added if `offsets` lacks 0). Duplicate offsets are
/// merged; entries that would fall outside the matrix are absent (no wrap-around), so an offset
/// with |d| ≥ n is an empty diagonal — no offset makes this panic. Off-diagonal values have
/// magnitude in [0.1, 1) and random sign, drawn from `ChaCha8Rng::seed_from_u64(seed)` row by
/// row, columns ascending; then `a_ii = 1 + Σ_{j≠i} |a_ij|` (strictly diagonally dominant,
/// positive diagonal; nonsymmetric in general even for symmetric offsets). Row i stores the
/// columns `i + d` that lie in `0..n`, in ascending order. `n = 0` gives the empty matrix.
///
/// # Panics
/// If the number of stored entries exceeds `u32::MAX`.
pub fn banded<T: Scalar>(n: usize, offsets: &[isize], seed: u64) -> Csr<T> {
    if n == 0 {
        return empty();
    }
    let mut offs: Vec<i128> = offsets
        .iter()
        .map(|&d| d as i128)
        .filter(|d| d.unsigned_abs() < n as u128)
        .chain(std::iter::once(0))
        .collect();
    offs.sort_unstable();
    offs.dedup();
    let total: usize = offs.iter().map(|d| n - d.unsigned_abs() as usize).sum();
    check_nnz("banded", Some(total));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0u32);
    let mut col_idx = Vec::with_capacity(total);
    let mut values = Vec::with_capacity(total);
    for i in 0..n {
        for &d in &offs {
            let j = i as i128 + d;
            if j < 0 || j >= n as i128 {
                continue;
            }
            col_idx.push(j as u32);
            values.push(if d == 0 {
                T::zero()
            } else {
                T::from_f64(random_offdiag(&mut rng))
            });
        }
        row_ptr.push(col_idx.len() as u32);
    }
    set_dominant_diagonal(&row_ptr, &col_idx, &mut values);
    finish(n, row_ptr, col_idx, values)
}

// ---------------------------------------------------------------------------------------------
// Spec strings
// ---------------------------------------------------------------------------------------------

/// Builds a matrix from a spec string such as `poisson2d:256` (grammar in [`SPEC_HELP`]):
///
/// | spec | matrix |
/// | --- | --- |
/// | `poisson2d:K` | [`poisson_2d_fd`]`(K)` |
/// | `fem2d:K` | [`poisson_2d_fem`]`(K)` |
/// | `laplace3d:K` | [`laplace_3d`]`(K)` |
/// | `convdiff3d:K:FIELD[:EPS]` | [`convection_diffusion_3d`]`(K, EPS, FIELD)`, FIELD = `x` \| `diagonal` \| `circular`, EPS default 1 |
/// | `random-spd:N:NNZ[:SEED]` | [`random_spd`]`(N, NNZ, SEED)` |
/// | `random:N:NNZ[:SEED]` | [`random_nonsymmetric`]`(N, NNZ, SEED)` |
/// | `banded:N:D1,D2,…[:SEED]` | [`banded`]`(N, &[D1, D2, …], SEED)` |
///
/// SEED defaults to 0; names are case-insensitive and surrounding whitespace is ignored.
///
/// # Errors
/// [`KrylovError::InvalidOption`] (with the grammar in the message) for an unknown name, a
/// wrong number of fields, a non-numeric or zero size, NNZ = 0, EPS not finite and positive, an
/// empty offset list, more than [`MAX_SPEC_UNKNOWNS`] unknowns or more than `u32::MAX` entries.
pub fn from_spec<T: Scalar>(spec: &str) -> Result<Csr<T>> {
    let bad = |why: String| {
        KrylovError::InvalidOption(format!("bad matrix spec `{spec}`: {why}; {SPEC_SUMMARY}"))
    };
    let lower = spec.trim().to_ascii_lowercase();
    let parts: Vec<&str> = lower.split(':').map(str::trim).collect();
    let name = parts[0];
    let args = &parts[1..];
    let arity = |lo: usize, hi: usize| {
        if args.len() < lo || args.len() > hi {
            Err(bad(format!(
                "`{name}` takes {} argument(s), got {}",
                if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo} to {hi}")
                },
                args.len()
            )))
        } else {
            Ok(())
        }
    };
    let positive = |what: &str, s: &str| -> Result<usize> {
        match s.parse::<usize>() {
            Ok(0) => Err(bad(format!("{what} must be positive"))),
            Ok(v) => Ok(v),
            Err(_) => Err(bad(format!("{what} `{s}` is not a positive integer"))),
        }
    };
    let seed = |i: usize| -> Result<u64> {
        match args.get(i) {
            None => Ok(0),
            Some(s) => s
                .parse::<u64>()
                .map_err(|_| bad(format!("seed `{s}` is not a non-negative integer"))),
        }
    };
    let limits = |size: Option<(usize, usize)>| -> Result<()> {
        match size {
            Some((n, _)) if n > MAX_SPEC_UNKNOWNS => {
                Err(bad(format!("{n} unknowns exceed the limit of 2^31")))
            }
            Some((_, nnz)) if nnz > u32::MAX as usize => {
                Err(bad(format!("{nnz} stored entries exceed u32 indexing")))
            }
            Some(_) => Ok(()),
            None => Err(bad("size overflows".into())),
        }
    };
    match name {
        "poisson2d" | "fem2d" | "laplace3d" => {
            arity(1, 1)?;
            let k = positive("grid size K", args[0])?;
            match name {
                "poisson2d" => {
                    limits(fd2_size(k))?;
                    Ok(poisson_2d_fd(k))
                }
                "fem2d" => {
                    limits(fem2_size(k))?;
                    Ok(poisson_2d_fem(k))
                }
                _ => {
                    limits(fd3_size(k))?;
                    Ok(laplace_3d(k))
                }
            }
        }
        "convdiff3d" => {
            arity(2, 3)?;
            let k = positive("grid size K", args[0])?;
            let field: ConvectionField = args[1].parse().map_err(|_| {
                bad(format!(
                    "unknown convection field `{}` (expected x, diagonal or circular)",
                    args[1]
                ))
            })?;
            let eps = match args.get(2) {
                None => 1.0,
                Some(s) => match s.parse::<f64>() {
                    Ok(e) if e.is_finite() && e > 0.0 => e,
                    _ => return Err(bad(format!("EPS `{s}` must be a finite positive number"))),
                },
            };
            limits(fd3_size(k))?;
            Ok(convection_diffusion_3d(k, eps, field))
        }
        "random-spd" | "random" => {
            arity(2, 3)?;
            let n = positive("N", args[0])?;
            let per_row = positive("NNZ", args[1])?;
            let seed = seed(2)?;
            limits(per_row.min(n).checked_mul(n).map(|nnz| (n, nnz)))?;
            Ok(if name == "random" {
                random_nonsymmetric(n, per_row, seed)
            } else {
                random_spd(n, per_row, seed)
            })
        }
        "banded" => {
            arity(2, 3)?;
            let n = positive("N", args[0])?;
            let mut offsets = Vec::new();
            for tok in args[1].split(',').map(str::trim) {
                let d = tok.parse::<isize>().map_err(|_| {
                    bad(format!(
                        "offset `{tok}` is not an integer (use e.g. -1,0,1)"
                    ))
                })?;
                offsets.push(d);
            }
            let seed = seed(2)?;
            let mut diags: Vec<isize> = offsets.clone();
            diags.push(0);
            diags.sort_unstable();
            diags.dedup();
            let nnz = diags
                .iter()
                .map(|d| n.saturating_sub(d.unsigned_abs()))
                .try_fold(0usize, |a, b| a.checked_add(b));
            limits(nnz.map(|nnz| (n, nnz)))?;
            Ok(banded(n, &offsets, seed))
        }
        "" => Err(bad("empty spec".into())),
        other => Err(bad(format!("unknown matrix `{other}`"))),
    }
}
