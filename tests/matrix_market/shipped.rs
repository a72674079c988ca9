//! The shipped matrices and vectors: sizes, symmetry, values, and every data file covered.

use krylov_wgpu::matrix::{read_matrix_market, read_vector};
use krylov_wgpu::{KrylovError, MarketErrorKind as K};

use super::common::data;

/// (file, rows, cols, nnz after expansion, symmetric storage, numerically symmetric)
pub const MATRICES: &[(&str, usize, usize, usize, bool, bool)] = &[
    ("494_bus.mtx", 494, 494, 1666, true, true),
    ("add32.mtx", 4960, 4960, 23884, false, false),
    ("ani4.mtx", 3081, 3081, 20971, false, true),
    ("bcsstk01.mtx", 48, 48, 400, true, true),
    ("bcsstk21.mtx", 3600, 3600, 26600, true, true),
    ("jpwh_991.mtx", 991, 991, 6027, false, false),
    ("mesh1e1.mtx", 48, 48, 306, false, true),
    ("nos6.mtx", 675, 675, 3255, true, true),
    ("pde2961.mtx", 2961, 2961, 14585, false, false),
    ("pores_1.mtx", 30, 30, 180, false, false),
    ("sherman4.mtx", 1104, 1104, 3786, false, false),
    ("Trefethen_2000.mtx", 2000, 2000, 41906, true, true),
    ("west0479.mtx", 479, 479, 1910, false, false),
];

const VECTORS: &[(&str, usize)] = &[("mesh1e1_rhs.mtx", 48), ("sherman4_rhs.mtx", 1104)];

#[test]
fn every_data_file_is_covered() {
    let mut files: Vec<String> = std::fs::read_dir(data(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mtx"))
        .collect();
    files.sort();
    let mut known: Vec<String> = MATRICES
        .iter()
        .map(|m| m.0.to_string())
        .chain(VECTORS.iter().map(|v| v.0.to_string()))
        .collect();
    known.sort();
    assert_eq!(files, known);
}

#[test]
fn shipped_matrices_f64() {
    for &(file, rows, cols, nnz, sym_storage, num_sym) in MATRICES {
        let a = read_matrix_market::<f64>(data(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((a.nrows(), a.ncols(), a.nnz()), (rows, cols, nnz), "{file}");
        if sym_storage {
            assert!(a.is_symmetric(0.0), "{file} not exactly symmetric");
        }
        if num_sym {
            assert!(a.is_symmetric(1e-12), "{file} not numerically symmetric");
        } else {
            assert!(!a.is_symmetric(1e-12), "{file} unexpectedly symmetric");
        }
    }
}

#[test]
fn shipped_matrices_f32() {
    for &(file, rows, cols, nnz, sym_storage, _) in MATRICES {
        let a = read_matrix_market::<f32>(data(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((a.nrows(), a.ncols(), a.nnz()), (rows, cols, nnz), "{file}");
        if sym_storage {
            assert!(a.is_symmetric(0.0), "{file}");
        }
        let b = read_matrix_market::<f64>(data(file)).unwrap();
        assert_eq!(a.row_ptr(), b.row_ptr());
        assert_eq!(a.col_idx(), b.col_idx());
        for (&x, &y) in a.values().iter().zip(b.values()) {
            assert!((x as f64 - y).abs() <= 6e-8 * y.abs(), "{file}: {x} vs {y}");
        }
    }
}

#[test]
fn shipped_matrix_values() {
    // Spot checks against the files' text.
    let a = read_matrix_market::<f64>(data("bcsstk01.mtx")).unwrap();
    assert_eq!(a.get(0, 0), 2.8322685185200e+06);
    let t = read_matrix_market::<f64>(data("Trefethen_2000.mtx")).unwrap();
    assert_eq!(t.get(0, 0), 2.0);
    assert_eq!(t.get(1, 0), 1.0);
    assert_eq!(t.get(0, 1), 1.0);
    assert!(t.values().iter().all(|v| v.fract() == 0.0));
    let w = read_matrix_market::<f64>(data("west0479.mtx")).unwrap();
    let zero_diag = w.diagonal().iter().filter(|&&d| d == 0.0).count();
    assert_eq!(zero_diag, 471);
}

#[test]
fn shipped_vectors() {
    for &(file, n) in VECTORS {
        let x = read_vector::<f64>(data(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(x.len(), n, "{file}");
        assert!(x.iter().all(|v| v.is_finite()));
        let y = read_vector::<f32>(data(file)).unwrap();
        assert_eq!(y.len(), n);
    }
    assert!(
        read_vector::<f64>(data("mesh1e1_rhs.mtx"))
            .unwrap()
            .iter()
            .all(|&v| v == 1.0)
    );
    // A matrix file is not a vector.
    let e = read_vector::<f64>(data("bcsstk01.mtx")).unwrap_err();
    assert!(
        matches!(e, KrylovError::MatrixMarket { line, kind: K::Invalid(ref m), .. }
            if line > 1 && m.contains("vector")),
        "{e}"
    );
}

#[test]
fn missing_file_is_io_error() {
    let e = read_matrix_market::<f64>(data("no-such-file.mtx")).unwrap_err();
    assert!(matches!(e, KrylovError::Io { .. }), "{e:?}");
    let e = read_vector::<f64>(data("no-such-file.mtx")).unwrap_err();
    assert!(matches!(e, KrylovError::Io { .. }), "{e:?}");
}
