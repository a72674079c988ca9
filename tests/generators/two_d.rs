//! The 2D Poisson matrices: five-point finite differences and linear finite elements on the
//! SW–NE triangulation.

use krylov_wgpu::matrix::generators::*;
use krylov_wgpu::matrix::{Coo, Csr};

use super::check_structure;

#[test]
fn poisson_2d_fd_sizes() {
    for k in [1usize, 2, 3, 5, 16, 64] {
        let a = poisson_2d_fd::<f64>(k);
        assert_eq!(a.nrows(), k * k);
        assert_eq!(a.nnz(), 5 * k * k - 4 * k, "k = {k}");
        check_structure(&a);
        assert!(a.is_symmetric(0.0));
        assert!(a.is_diagonally_dominant(false));
    }
    let e = poisson_2d_fd::<f64>(0);
    assert_eq!((e.nrows(), e.ncols(), e.nnz()), (0, 0, 0));
}

#[test]
fn poisson_2d_fd_interior_row() {
    let k = 7;
    let a = poisson_2d_fd::<f64>(k);
    let (i, j) = (3, 4);
    let p = i + k * j;
    let (cols, vals) = a.row(p);
    assert_eq!(
        cols,
        &[
            (p - k) as u32,
            (p - 1) as u32,
            p as u32,
            (p + 1) as u32,
            (p + k) as u32
        ]
    );
    assert_eq!(vals, &[-1.0, -1.0, 4.0, -1.0, -1.0]);
    assert_eq!(vals.iter().sum::<f64>(), 0.0);
    // Corner row: 3 entries, row sum 2.
    let (cols, vals) = a.row(0);
    assert_eq!(cols, &[0, 1, k as u32]);
    assert_eq!(vals.iter().sum::<f64>(), 2.0);
    // Row-major ordering: no coupling across a grid line's end.
    assert_eq!(a.get(k - 1, k), 0.0);
    assert_eq!(a.get(k, k - 1), 0.0);
}

#[test]
fn poisson_2d_fd_f32_matches_f64() {
    let a = poisson_2d_fd::<f64>(9);
    let b = poisson_2d_fd::<f32>(9);
    assert_eq!(a.cast::<f32>().unwrap(), b);
}

// ---------------------------------------------------------------------------------------------
// 2D finite elements
// ---------------------------------------------------------------------------------------------

#[test]
fn poisson_2d_fem_sizes() {
    for k in [1usize, 2, 3, 4, 15, 31] {
        let a = poisson_2d_fem::<f64>(k);
        assert_eq!(a.nrows(), k * k);
        assert_eq!(a.nnz(), 7 * k * k + 2 - 8 * k, "k = {k}");
        check_structure(&a);
        assert!(a.is_symmetric(0.0));
        assert!(a.is_diagonally_dominant(false));
    }
    assert_eq!(poisson_2d_fem::<f64>(0).nrows(), 0);
    assert_eq!(fem_2d_sizes(), [225, 961, 3969, 16129, 65025, 261121]);
    for (k, n) in FEM_2D_PAPER_K.iter().zip(fem_2d_sizes()) {
        assert_eq!(k * k, n);
        assert!((k + 1).is_power_of_two());
    }
    // About 7 entries per row at the paper's sizes.
    let (_, mean, max) = poisson_2d_fem::<f32>(63).row_length_stats();
    assert_eq!(max, 7);
    assert!(mean > 6.8 && mean < 7.0, "{mean}");
}

#[test]
fn poisson_2d_fem_interior_row() {
    // The stiffness matrix of the SW–NE mesh: 4 on the diagonal, −1 for W/E/S/N and stored
    // zeros for the SW and NE neighbours (hypotenuse edges).
    let k = 6;
    let a = poisson_2d_fem::<f64>(k);
    let p = 2 + k * 3;
    let (cols, vals) = a.row(p);
    let expect_cols = [p - k - 1, p - k, p - 1, p, p + 1, p + k, p + k + 1].map(|c| c as u32);
    assert_eq!(cols, &expect_cols);
    assert_eq!(vals, &[0.0, -1.0, -1.0, 4.0, -1.0, -1.0, 0.0]);
    // No NW/SE couplings.
    assert!(cols.binary_search(&((p - k + 1) as u32)).is_err());
    assert!(cols.binary_search(&((p + k - 1) as u32)).is_err());
    // Single interior node: surrounded by 6 triangles, diagonal 4.
    let one = poisson_2d_fem::<f64>(1);
    assert_eq!(one.values(), &[4.0]);
}

#[test]
fn poisson_2d_fem_values_equal_fd_values() {
    for k in [1, 2, 5, 10] {
        let fem = poisson_2d_fem::<f64>(k);
        let fd = poisson_2d_fd::<f64>(k);
        for i in 0..k * k {
            for j in 0..k * k {
                assert_eq!(fem.get(i, j), fd.get(i, j), "k = {k}, ({i}, {j})");
            }
        }
        // Every FD entry is in the FEM pattern; the extra ones are zeros.
        assert_eq!(fem.nnz() - fd.nnz(), 2 * (k - 1) * (k - 1));
        assert_eq!(
            fem.values().iter().filter(|&&v| v == 0.0).count(),
            2 * (k - 1) * (k - 1)
        );
    }
}

/// An independent assembly with real coordinates (h = 1/(k+1)) through COO.
fn fem_reference(k: usize) -> Csr<f64> {
    let h = 1.0 / (k as f64 + 1.0);
    let id = |x: usize, y: usize| -> Option<usize> {
        ((1..=k).contains(&x) && (1..=k).contains(&y)).then(|| (x - 1) + k * (y - 1))
    };
    let mut coo = Coo::<f64>::new(k * k, k * k);
    // The mesh graph is pushed as explicit zeros so the pattern matches.
    for cy in 0..=k {
        for cx in 0..=k {
            for tri in [
                [(cx, cy), (cx + 1, cy), (cx + 1, cy + 1)],
                [(cx, cy), (cx + 1, cy + 1), (cx, cy + 1)],
            ] {
                let p = tri.map(|(x, y)| (x as f64 * h, y as f64 * h));
                // Gradients of the barycentric functions.
                let det =
                    (p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (p[1].1 - p[0].1);
                let area = det.abs() / 2.0;
                let grad = |a: usize| {
                    let (b, c) = (p[(a + 1) % 3], p[(a + 2) % 3]);
                    ((b.1 - c.1) / det, (c.0 - b.0) / det)
                };
                for a in 0..3 {
                    for b in 0..3 {
                        if let (Some(r), Some(c)) = (id(tri[a].0, tri[a].1), id(tri[b].0, tri[b].1))
                        {
                            let (ga, gb) = (grad(a), grad(b));
                            coo.push(r, c, area * (ga.0 * gb.0 + ga.1 * gb.1)).unwrap();
                        }
                    }
                }
            }
        }
    }
    coo.to_csr().unwrap()
}

#[test]
fn poisson_2d_fem_matches_reference_assembly() {
    for k in [1, 3, 8] {
        let a = poisson_2d_fem::<f64>(k);
        let r = fem_reference(k);
        assert_eq!(a.row_ptr(), r.row_ptr());
        assert_eq!(a.col_idx(), r.col_idx());
        for (x, y) in a.values().iter().zip(r.values()) {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
    }
}
