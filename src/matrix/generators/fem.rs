//! The P1 finite-element Poisson problem on the unit square (Rupp et al. 2016, §4.1).

use super::{check_nnz, empty, finish};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// Grid parameters `k` of the 2D finite-element benchmark of Rupp et al. (2016), §4.1: uniformly
/// refined triangulations of the unit square with `k = 2^l − 1` interior nodes per direction.
pub const FEM_2D_PAPER_K: [usize; 6] = [15, 31, 63, 127, 255, 511];

/// Numbers of unknowns of the 2D finite-element benchmark (225, 961, 3969, 16129, 65025,
/// 261121): `k²` for each `k` in [`FEM_2D_PAPER_K`], i.e. the sizes [`poisson_2d_fem`] produces.
pub fn fem_2d_sizes() -> [usize; 6] {
    FEM_2D_PAPER_K.map(|k| k * k)
}

/// n and nnz of the P1 mesh graph on k×k interior nodes.
pub(super) fn fem2_size(k: usize) -> Option<(usize, usize)> {
    let n = k.checked_mul(k)?;
    if k == 0 {
        return Some((0, 0));
    }
    Some((n, n.checked_mul(7)?.checked_add(2)? - 8 * k))
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
/// — the values of [`poisson_2d_fd`](super::poisson_2d_fd), but **the structural zeros on the diagonal edges are
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
