//! The 3D matrices: the 7-point Laplacian and upwind convection–diffusion with the paper's
//! three fields.

use krylov_wgpu::matrix::generators::*;

use super::{check_structure, exactly_nonsymmetric};

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
