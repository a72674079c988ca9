//! Tests of the matrix generators: sizes, patterns, values, symmetry, definiteness, determinism
//! and the spec-string entry point.

use krylov_wgpu::KrylovError;
use krylov_wgpu::matrix::generators::*;
use krylov_wgpu::matrix::{Coo, Csr};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Dense copy (row-major) of a small matrix.
fn dense(a: &Csr<f64>) -> Vec<Vec<f64>> {
    let mut d = vec![vec![0.0; a.ncols()]; a.nrows()];
    for (i, row) in d.iter_mut().enumerate() {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            row[c as usize] = v;
        }
    }
    d
}

/// Dense Cholesky: true iff the symmetric matrix is positive definite.
fn cholesky_ok(a: &Csr<f64>) -> bool {
    let n = a.nrows();
    let mut l = dense(a);
    for j in 0..n {
        let d = l[j][j] - l[j][..j].iter().map(|x| x * x).sum::<f64>();
        if d <= 0.0 || !d.is_finite() {
            return false;
        }
        let d = d.sqrt();
        l[j][j] = d;
        for i in j + 1..n {
            let dot: f64 = l[i][..j].iter().zip(&l[j][..j]).map(|(a, b)| a * b).sum();
            l[i][j] = (l[i][j] - dot) / d;
        }
    }
    true
}

/// Checks the structural invariants every generator promises.
fn check_structure<T: krylov_wgpu::Scalar>(a: &Csr<T>) {
    assert!(a.is_square());
    let rp = a.row_ptr();
    assert_eq!(rp.len(), a.nrows() + 1);
    for i in 0..a.nrows() {
        let (cols, _) = a.row(i);
        assert!(cols.windows(2).all(|w| w[0] < w[1]), "row {i} not sorted");
        assert!(cols.iter().all(|&c| (c as usize) < a.ncols()));
    }
    // Round trip through the checking constructor.
    Csr::new(
        a.nrows(),
        a.ncols(),
        rp.to_vec(),
        a.col_idx().to_vec(),
        a.values().to_vec(),
    )
    .expect("valid CSR");
}

fn is_invalid_option<T>(r: krylov_wgpu::Result<T>) -> bool {
    matches!(r, Err(KrylovError::InvalidOption(_)))
}

/// Whether some entry differs from its transpose.
fn exactly_nonsymmetric(a: &Csr<f64>) -> bool {
    !a.is_symmetric(0.0) && !a.is_symmetric(1e-3)
}

// ---------------------------------------------------------------------------------------------
// 2D finite differences
// ---------------------------------------------------------------------------------------------

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
fn poisson_2d_fd_spd() {
    for k in [1, 2, 4, 6] {
        assert!(cholesky_ok(&poisson_2d_fd::<f64>(k)), "k = {k}");
    }
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

#[test]
fn poisson_2d_fem_spd() {
    for k in [1, 2, 3, 7] {
        assert!(cholesky_ok(&poisson_2d_fem::<f64>(k)), "k = {k}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3D Laplace
// ---------------------------------------------------------------------------------------------

#[test]
fn laplace_3d_sizes_and_rows() {
    for k in [1usize, 2, 3, 5, 10] {
        let a = laplace_3d::<f64>(k);
        assert_eq!(a.nrows(), k * k * k);
        assert_eq!(a.nnz(), 7 * k * k * k - 6 * k * k, "k = {k}");
        check_structure(&a);
        assert!(a.is_symmetric(0.0));
        assert!(a.is_diagonally_dominant(false));
    }
    assert_eq!(laplace_3d::<f64>(0).nnz(), 0);
    let k = 5;
    let a = laplace_3d::<f64>(k);
    let p = 2 + k + k * k * 3;
    let (cols, vals) = a.row(p);
    let expect = [p - k * k, p - k, p - 1, p, p + 1, p + k, p + k * k].map(|c| c as u32);
    assert_eq!(cols, &expect);
    assert_eq!(vals, &[-1.0, -1.0, -1.0, 6.0, -1.0, -1.0, -1.0]);
    assert_eq!(vals.iter().sum::<f64>(), 0.0);
    // Paper sizes (Aliaga et al., Table 1): N = 200 gives 8,000,000 unknowns and a full matrix
    // of 55,760,000 entries (the table's 31,880,000 counts one triangle plus the diagonal).
    let n = 200usize;
    assert_eq!(7 * n * n * n - 6 * n * n, 55_760_000);
    assert_eq!(
        (7 * n * n * n - 6 * n * n - n * n * n) / 2 + n * n * n,
        31_880_000
    );
}

#[test]
fn laplace_3d_spd() {
    for k in [1, 2, 3, 4] {
        assert!(cholesky_ok(&laplace_3d::<f64>(k)), "k = {k}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3D convection–diffusion
// ---------------------------------------------------------------------------------------------

#[test]
fn convection_fields_match_the_paper() {
    assert_eq!(ConvectionField::X.velocity(0.3, 0.6, 0.9), [1.0, 0.0, 0.0]);
    let d = ConvectionField::Diagonal.velocity(0.1, 0.2, 0.3);
    assert!(d.iter().all(|&c| (c - 1.0 / 3f64.sqrt()).abs() < 1e-15));
    assert!((d.iter().map(|c| c * c).sum::<f64>() - 1.0).abs() < 1e-14);
    assert_eq!(
        ConvectionField::Circular.velocity(0.25, 0.75, 1.0),
        [-0.5, -0.25, -0.25]
    );
    for f in ConvectionField::ALL {
        assert_eq!(f.name().parse::<ConvectionField>().unwrap(), f);
        assert_eq!(f.to_string(), f.name());
    }
    assert_eq!(
        "Unit".parse::<ConvectionField>().unwrap(),
        ConvectionField::X
    );
    assert!("spiral".parse::<ConvectionField>().is_err());
}

#[test]
fn convection_diffusion_structure() {
    for field in ConvectionField::ALL {
        for k in [1usize, 2, 4, 7] {
            let a = convection_diffusion_3d::<f64>(k, 1.0, field);
            assert_eq!(a.nrows(), k * k * k);
            assert_eq!(a.nnz(), 7 * k * k * k - 6 * k * k, "{field} k = {k}");
            check_structure(&a);
            // M-matrix sign pattern and diagonal dominance.
            assert!(a.is_diagonally_dominant(false), "{field} k = {k}");
            for i in 0..a.nrows() {
                let (cols, vals) = a.row(i);
                for (&c, &v) in cols.iter().zip(vals) {
                    if c as usize == i {
                        assert!(v > 0.0);
                    } else {
                        assert!(v <= 0.0);
                    }
                }
            }
            if k >= 2 {
                assert!(
                    exactly_nonsymmetric(&a),
                    "{field} k = {k} should be nonsymmetric"
                );
            }
        }
    }
}

#[test]
fn convection_diffusion_x_upwind_entries() {
    // b = (1, 0, 0): backward difference in x, h = 1/(k+1), equations scaled by h².
    let (k, eps) = (4usize, 0.5);
    let h = 1.0 / (k as f64 + 1.0);
    let a = convection_diffusion_3d::<f64>(k, eps, ConvectionField::X);
    let p = 1 + k * 2 + k * k;
    assert!((a.get(p, p) - (6.0 * eps + h)).abs() < 1e-15);
    assert_eq!(a.get(p, p - 1), -eps - h); // upwind neighbour (x − h)
    assert_eq!(a.get(p, p + 1), -eps);
    for q in [p - k, p + k, p - k * k, p + k * k] {
        assert_eq!(a.get(p, q), -eps);
    }
    let (cols, vals) = a.row(p);
    assert!(
        vals.iter().sum::<f64>().abs() < 1e-15,
        "interior row sum is zero"
    );
    // The diagonal is exactly the sum of the off-diagonal magnitudes (in column order).
    let off: f64 = cols
        .iter()
        .zip(vals)
        .filter(|(c, _)| **c as usize != p)
        .map(|(_, v)| v.abs())
        .fold(0.0, |a, b| a + b);
    assert_eq!(a.get(p, p), off);
    // With ε = 1 the diffusion part is the 3D Laplacian: A − laplace_3d is h times the upwind
    // operator, +h on the diagonal and −h at the x− neighbour (absent on the x = h face).
    let a1 = convection_diffusion_3d::<f64>(k, 1.0, ConvectionField::X);
    let lap = laplace_3d::<f64>(k);
    assert_eq!(a1.row_ptr(), lap.row_ptr());
    assert_eq!(a1.col_idx(), lap.col_idx());
    for r in 0..a1.nrows() {
        let (cols, va) = a1.row(r);
        let (_, vl) = lap.row(r);
        for ((&c, x), y) in cols.iter().zip(va).zip(vl) {
            let expect = if c as usize == r {
                h
            } else if c as usize + 1 == r {
                -h
            } else {
                0.0
            };
            assert!((x - y - expect).abs() < 1e-14, "row {r} col {c}");
        }
    }
}

#[test]
fn convection_diffusion_circular_upwind_direction() {
    let (k, eps) = (5usize, 1.0);
    let h = 1.0 / (k as f64 + 1.0);
    let a = convection_diffusion_3d::<f64>(k, eps, ConvectionField::Circular);
    // Node (i, j, l) = (0, 3, 4): x = h, y = 4h, z = 5h; b = (½ − z, x − ½, ½ − y).
    let (i, j, l) = (0usize, 3usize, 4usize);
    let (x, y, z) = (h, 4.0 * h, 5.0 * h);
    let b = [0.5 - z, x - 0.5, 0.5 - y];
    assert!(
        b.iter().all(|&c| c < 0.0),
        "all components negative here: forward differences"
    );
    let p = i + k * j + k * k * l;
    let diag = 6.0 * eps + h * b.iter().map(|c| c.abs()).sum::<f64>();
    assert!((a.get(p, p) - diag).abs() < 1e-14);
    assert!((a.get(p, p + 1) - (-eps + h * b[0])).abs() < 1e-14);
    assert!((a.get(p, p + k) - (-eps + h * b[1])).abs() < 1e-14);
    assert_eq!(a.get(p, p - k), -eps);
    assert_eq!(a.get(p, p - k * k), -eps);
    // The x− and z+ neighbours are boundary nodes: not stored.
    assert_eq!(a.row(p).0.len(), 5);
    // The diagonal field touches all three directions equally.
    let d = convection_diffusion_3d::<f64>(3, 1.0, ConvectionField::Diagonal);
    let c = 1.0 / 3f64.sqrt();
    let q = 1 + 3 + 9;
    for off in [1, 3, 9] {
        assert!((d.get(q, q - off) - (-1.0 - h_of(3) * c)).abs() < 1e-14);
        assert_eq!(d.get(q, q + off), -1.0);
    }
}

fn h_of(k: usize) -> f64 {
    1.0 / (k as f64 + 1.0)
}

#[test]
fn convection_diffusion_small_eps_still_dominant() {
    for field in ConvectionField::ALL {
        let a = convection_diffusion_3d::<f64>(6, 1e-4, field);
        assert!(a.is_diagonally_dominant(false));
        assert!(exactly_nonsymmetric(&a));
    }
}

#[test]
#[should_panic(expected = "eps")]
fn convection_diffusion_rejects_bad_eps() {
    let _ = convection_diffusion_3d::<f64>(3, 0.0, ConvectionField::X);
}

// ---------------------------------------------------------------------------------------------
// Random families
// ---------------------------------------------------------------------------------------------

#[test]
fn random_spd_properties() {
    for (n, per_row, seed) in [
        (50usize, 7usize, 1u64),
        (40, 4, 2),
        (30, 1, 3),
        (10, 30, 4),
        (1, 5, 5),
    ] {
        let a = random_spd::<f64>(n, per_row, seed);
        assert_eq!(a.nrows(), n);
        check_structure(&a);
        assert!(a.is_symmetric(0.0), "n = {n}");
        assert!(a.is_diagonally_dominant(true));
        assert!(a.diagonal().iter().all(|&d| d >= 1.0));
        assert!(cholesky_ok(&a), "n = {n}, nnz/row = {per_row}");
    }
    assert_eq!(random_spd::<f64>(20, 1, 9), Csr::identity(20));
    assert_eq!(random_spd::<f64>(0, 5, 9).nrows(), 0);
}

#[test]
fn random_spd_nnz_per_row_approximately_honoured() {
    for per_row in [4usize, 7, 28] {
        let n = 20_000;
        let a = random_spd::<f32>(n, per_row, 11);
        let mean = a.nnz() as f64 / n as f64;
        assert!(
            mean <= per_row as f64 && mean > per_row as f64 * 0.97,
            "asked {per_row}, got {mean}"
        );
        assert!(a.is_symmetric(0.0));
    }
}

#[test]
fn random_nonsymmetric_properties() {
    for (n, per_row) in [(100usize, 4usize), (1000, 28), (50, 7), (5, 10), (2, 2)] {
        let a = random_nonsymmetric::<f64>(n, per_row, 7);
        assert_eq!(a.nrows(), n);
        check_structure(&a);
        let expect = per_row.min(n);
        for i in 0..n {
            assert_eq!(a.row(i).0.len(), expect, "row {i} of n = {n}");
            assert!(a.get(i, i) >= 1.0);
        }
        assert_eq!(a.nnz(), n * expect);
        assert!(a.is_diagonally_dominant(true));
        assert!(exactly_nonsymmetric(&a), "n = {n}");
    }
    assert_eq!(random_nonsymmetric::<f64>(7, 0, 1), Csr::identity(7));
}

#[test]
fn random_columns_spread_uniformly() {
    // Off-diagonal columns are uniform over all columns: both halves get about half.
    let n = 10_000;
    let a = random_nonsymmetric::<f64>(n, 5, 3);
    let left = a
        .col_idx()
        .iter()
        .filter(|&&c| (c as usize) < n / 2)
        .count();
    let frac = left as f64 / a.nnz() as f64;
    assert!((frac - 0.5).abs() < 0.02, "{frac}");
}

#[test]
fn random_determinism() {
    let a = random_spd::<f64>(500, 7, 42);
    assert_eq!(a, random_spd::<f64>(500, 7, 42));
    assert_ne!(a, random_spd::<f64>(500, 7, 43));
    let b = random_nonsymmetric::<f64>(500, 7, 42);
    assert_eq!(b, random_nonsymmetric::<f64>(500, 7, 42));
    assert_ne!(b, random_nonsymmetric::<f64>(500, 7, 43));
    let c = banded::<f64>(500, &[-3, 0, 2], 42);
    assert_eq!(c, banded::<f64>(500, &[-3, 0, 2], 42));
    assert_ne!(c, banded::<f64>(500, &[-3, 0, 2], 43));
    // f32 gets the same pattern and the rounded values (diagonals recomputed from them).
    let a32 = random_spd::<f32>(500, 7, 42);
    assert_eq!(a32.col_idx(), a.col_idx());
    for (x, y) in a32.values().iter().zip(a.values()) {
        assert!((*x as f64 - y).abs() <= 1e-5 * y.abs().max(1.0));
    }
}

#[test]
fn random_is_platform_stable() {
    // Pins the ChaCha8 stream mapping: a change here changes every benchmark matrix.
    let a = random_nonsymmetric::<f64>(6, 3, 0);
    let b = random_nonsymmetric::<f64>(6, 3, 0);
    assert_eq!(a, b);
    let s: f64 = a.values().iter().map(|v| v.abs()).sum();
    assert!(s.is_finite() && s > 6.0);
}

// ---------------------------------------------------------------------------------------------
// Banded
// ---------------------------------------------------------------------------------------------

#[test]
fn banded_only_requested_diagonals() {
    let n = 40;
    let offsets = [-2isize, -1, 0, 1, 2];
    let a = banded::<f64>(n, &offsets, 5);
    check_structure(&a);
    let expect: usize = offsets.iter().map(|d| n - d.unsigned_abs()).sum();
    assert_eq!(a.nnz(), expect);
    for i in 0..n {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            let d = c as isize - i as isize;
            assert!(offsets.contains(&d), "entry on diagonal {d}");
            assert!(v != 0.0);
        }
    }
    assert!(a.is_diagonally_dominant(true));
    assert!(!a.is_symmetric(0.0));

    // Unsorted, duplicated and out-of-range offsets; 0 missing.
    let b = banded::<f64>(
        10,
        &[3, -7, 3, 100, -100, isize::MIN, isize::MAX, 10, -10],
        1,
    );
    check_structure(&b);
    assert_eq!(b.nnz(), 10 + 7 + 3);
    for i in 0..10 {
        for &c in b.row(i).0 {
            let d = c as isize - i as isize;
            assert!([0, 3, -7].contains(&d));
        }
    }
    assert!(b.is_diagonally_dominant(true));
    // Only the main diagonal, n = 1, n = 0.
    assert_eq!(banded::<f64>(4, &[], 0), Csr::identity(4));
    assert_eq!(banded::<f64>(1, &[-1, 0, 1], 0).nnz(), 1);
    assert_eq!(banded::<f64>(0, &[0], 0).nrows(), 0);
}

// ---------------------------------------------------------------------------------------------
// Spec strings
// ---------------------------------------------------------------------------------------------

#[test]
fn from_spec_round_trips() {
    assert_eq!(from_spec::<f64>("poisson2d:12").unwrap(), poisson_2d_fd(12));
    assert_eq!(from_spec::<f64>("fem2d:15").unwrap(), poisson_2d_fem(15));
    assert_eq!(from_spec::<f64>("laplace3d:6").unwrap(), laplace_3d(6));
    assert_eq!(
        from_spec::<f64>("convdiff3d:5:x").unwrap(),
        convection_diffusion_3d(5, 1.0, ConvectionField::X)
    );
    assert_eq!(
        from_spec::<f64>("convdiff3d:5:diagonal:0.01").unwrap(),
        convection_diffusion_3d(5, 0.01, ConvectionField::Diagonal)
    );
    assert_eq!(
        from_spec::<f32>(" ConvDiff3D:4:Circular:2e-1 ").unwrap(),
        convection_diffusion_3d(4, 0.2, ConvectionField::Circular)
    );
    assert_eq!(
        from_spec::<f64>("random-spd:300:7").unwrap(),
        random_spd(300, 7, 0)
    );
    assert_eq!(
        from_spec::<f64>("random-spd:300:7:9").unwrap(),
        random_spd(300, 7, 9)
    );
    assert_eq!(
        from_spec::<f64>("random:300:4").unwrap(),
        random_nonsymmetric(300, 4, 0)
    );
    assert_eq!(
        from_spec::<f64>("random:300:4:5").unwrap(),
        random_nonsymmetric(300, 4, 5)
    );
    assert_eq!(
        from_spec::<f64>("banded:100:-2,-1,0,1,2").unwrap(),
        banded(100, &[-2, -1, 0, 1, 2], 0)
    );
    assert_eq!(
        from_spec::<f64>("banded:100:-1, 0, 3:8").unwrap(),
        banded(100, &[-1, 0, 3], 8)
    );
    assert_eq!(from_spec::<f64>("banded:10:50").unwrap(), Csr::identity(10));
}

#[test]
fn from_spec_errors() {
    for bad in [
        "",
        "poisson2d",
        "poisson2d:",
        "poisson2d:0",
        "poisson2d:-3",
        "poisson2d:abc",
        "poisson2d:4:5",
        "fem2d:0",
        "laplace3d:0",
        "laplace3d:1.5",
        "convdiff3d:8",
        "convdiff3d:8:spiral",
        "convdiff3d:8:x:0",
        "convdiff3d:8:x:-1",
        "convdiff3d:8:x:nan",
        "convdiff3d:8:x:inf",
        "convdiff3d:8:x:1:2",
        "convdiff3d:0:x",
        "random-spd:0:7",
        "random-spd:100:0",
        "random-spd:100",
        "random:100:7:-1",
        "random:100:7:1:2",
        "banded:10",
        "banded:10:",
        "banded:10:1,,2",
        "banded:10:a",
        "banded:0:0",
        "hilbert:10",
        // Absurd sizes: errors, not allocations.
        "poisson2d:100000",
        "laplace3d:2000",
        "laplace3d:1000",
        "fem2d:99999999999",
        "convdiff3d:5000:x",
        "random:3000000000:2",
        "random:1000000000:50",
        "random-spd:99999999999999999999:3",
        "banded:1000000000:-3,-2,-1,0,1,2,3",
    ] {
        assert!(
            is_invalid_option(from_spec::<f64>(bad)),
            "`{bad}` should be rejected"
        );
    }
    // The message names the spec and lists the grammar on one line.
    let msg = from_spec::<f64>("hilbert:10").unwrap_err().to_string();
    assert!(msg.contains("hilbert:10"), "{msg}");
    for word in [
        "poisson2d",
        "fem2d",
        "laplace3d",
        "convdiff3d",
        "random-spd",
        "banded",
    ] {
        assert!(msg.contains(word), "{msg}");
    }
    assert!(!msg.contains('\n'));
}

#[test]
fn spec_help_mentions_every_generator() {
    for word in [
        "poisson2d:K",
        "fem2d:K",
        "laplace3d:K",
        "convdiff3d:K:FIELD",
        "circular",
        "random-spd:N:NNZ",
        "random:N:NNZ",
        "banded:N:OFFSETS",
    ] {
        assert!(SPEC_HELP.contains(word), "{word}");
    }
}

#[test]
fn medium_sizes_generate() {
    // Big enough to catch quadratic behaviour, small enough for a debug test run.
    let a = laplace_3d::<f32>(64);
    assert_eq!(a.nrows(), 64 * 64 * 64);
    let c = convection_diffusion_3d::<f32>(48, 1.0, ConvectionField::Circular);
    assert_eq!(c.nnz(), 7 * 48 * 48 * 48 - 6 * 48 * 48);
    let f = poisson_2d_fem::<f32>(255);
    assert_eq!(f.nrows(), 65025);
    let r = random_spd::<f32>(200_000, 7, 1);
    assert!(r.is_symmetric(0.0));
    let b = banded::<f32>(1_000_000, &[-1000, -1, 0, 1, 1000], 1);
    assert_eq!(b.nnz(), 5_000_000 - 2 - 2000);
}

#[test]
fn cholesky_helper_rejects_indefinite() {
    let a = Csr::<f64>::new(
        2,
        2,
        vec![0, 2, 4],
        vec![0, 1, 0, 1],
        vec![1.0, 2.0, 2.0, 1.0],
    )
    .unwrap();
    assert!(!cholesky_ok(&a));
    assert!(cholesky_ok(&Csr::<f64>::identity(3)));
}

#[test]
fn convection_diffusion_f32_dominance_survives_rounding() {
    for field in ConvectionField::ALL {
        for eps in [1.0, 0.1, 1e-3] {
            let a = convection_diffusion_3d::<f32>(9, eps, field);
            assert!(a.is_diagonally_dominant(false), "{field} eps = {eps}");
            let b = convection_diffusion_3d::<f64>(9, eps, field);
            assert_eq!(a.col_idx(), b.col_idx());
            for (x, y) in a.values().iter().zip(b.values()) {
                assert!((*x as f64 - y).abs() <= 1e-6 * y.abs().max(eps));
            }
        }
    }
}
