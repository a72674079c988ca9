//! CSR and COO: construction checks, conversions, transpose, diagonal, symmetry.

use krylov_wgpu::KrylovError;
use krylov_wgpu::matrix::generators::{poisson_2d_fd, random_nonsymmetric};
use krylov_wgpu::matrix::{Coo, Csr};

#[test]
fn new_rejects_inconsistent_arrays() {
    let bad = |r: Result<Csr<f64>, KrylovError>| matches!(r, Err(KrylovError::InvalidMatrix(_)));
    assert!(
        bad(Csr::new(2, 2, vec![0, 1], vec![0], vec![1.0])),
        "row_ptr too short"
    );
    assert!(
        bad(Csr::new(2, 2, vec![0, 1, 2], vec![0], vec![1.0, 2.0])),
        "lengths differ"
    );
    assert!(
        bad(Csr::new(2, 2, vec![1, 1, 2], vec![0, 1], vec![1.0, 2.0])),
        "row_ptr[0] != 0"
    );
    assert!(
        bad(Csr::new(2, 2, vec![0, 2, 1], vec![0, 1], vec![1.0, 2.0])),
        "decreasing row_ptr"
    );
    assert!(
        bad(Csr::new(2, 2, vec![0, 1, 2], vec![0, 2], vec![1.0, 2.0])),
        "column out of range"
    );
    assert!(
        bad(Csr::new(1, 3, vec![0, 2], vec![1, 1], vec![1.0, 2.0])),
        "duplicate column"
    );
    assert!(
        bad(Csr::new(1, 3, vec![0, 2], vec![2, 1], vec![1.0, 2.0])),
        "unsorted columns"
    );
    assert!(matches!(
        Csr::new(1, 1, vec![0, 1], vec![0], vec![f64::NAN]),
        Err(KrylovError::NonFinite { index: 0, .. })
    ));
    assert!(matches!(
        Csr::new(1, 1, vec![0, 1], vec![0], vec![f64::INFINITY]),
        Err(KrylovError::NonFinite { .. })
    ));
    assert!(
        Csr::<f64>::new(0, 0, vec![0], vec![], vec![]).is_ok(),
        "empty matrix"
    );
}

#[test]
fn coo_sums_duplicates_sorts_rows_and_checks_bounds() {
    let mut c = Coo::<f64>::new(3, 3);
    c.push(2, 2, 1.0).unwrap();
    c.push(0, 2, 5.0).unwrap();
    c.push(0, 0, 1.0).unwrap();
    c.push(0, 2, -2.0).unwrap();
    c.push(1, 1, 0.0).unwrap(); // explicit zeros stay in the pattern
    let a = c.to_csr().unwrap();
    assert_eq!(a.row_ptr(), &[0, 2, 3, 4]);
    assert_eq!(a.col_idx(), &[0, 2, 1, 2]);
    assert_eq!(a.values(), &[1.0, 3.0, 0.0, 1.0]);
    assert!(matches!(
        c.push(3, 0, 1.0),
        Err(KrylovError::InvalidMatrix(_))
    ));
    assert!(matches!(
        c.push(0, 3, 1.0),
        Err(KrylovError::InvalidMatrix(_))
    ));
}

#[test]
fn transpose_is_an_involution_and_matches_entries() {
    let a = random_nonsymmetric::<f64>(97, 6, 11);
    let t = a.transpose();
    assert_eq!(
        (t.nrows(), t.ncols(), t.nnz()),
        (a.ncols(), a.nrows(), a.nnz())
    );
    for i in 0..a.nrows() {
        let (cols, vals) = a.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            assert_eq!(t.get(j as usize, i), v);
        }
    }
    assert_eq!(t.transpose(), a);
    // Rectangular too.
    let r = Csr::<f64>::new(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]).unwrap();
    let rt = r.transpose();
    assert_eq!((rt.nrows(), rt.ncols()), (3, 2));
    assert_eq!(rt.get(2, 0), 2.0);
    assert_eq!(rt.get(1, 1), 3.0);
}

#[test]
fn diagonal_symmetry_and_dominance() {
    let p = poisson_2d_fd::<f64>(7);
    assert!(p.diagonal().iter().all(|&d| d == 4.0));
    assert!(p.is_symmetric(0.0));
    assert!(p.is_diagonally_dominant(false));
    assert!(!p.is_diagonally_dominant(true));
    let a = random_nonsymmetric::<f64>(50, 5, 3);
    assert!(!a.is_symmetric(1e-12));
    assert!(a.is_diagonally_dominant(true));
    // A missing diagonal entry reads as zero.
    let z = Csr::<f64>::new(2, 2, vec![0, 1, 2], vec![1, 0], vec![1.0, 1.0]).unwrap();
    assert_eq!(z.diagonal(), vec![0.0, 0.0]);
    assert!(z.is_symmetric(0.0));
    // Relative tolerance: 1 vs 1 + 1e-13 is symmetric at 1e-12, not at 0.
    let nearly = Csr::<f64>::new(
        2,
        2,
        vec![0, 2, 4],
        vec![0, 1, 0, 1],
        vec![2.0, 1.0, 1.0 + 1e-13, 2.0],
    )
    .unwrap();
    assert!(nearly.is_symmetric(1e-12));
    assert!(!nearly.is_symmetric(0.0));
    // An entry mirrored by a missing one is not symmetric.
    let lower = Csr::<f64>::new(2, 2, vec![0, 1, 3], vec![0, 0, 1], vec![1.0, 1.0, 1.0]).unwrap();
    assert!(!lower.is_symmetric(1e-12));
    assert!(
        !Csr::<f64>::new(1, 2, vec![0, 0], vec![], vec![])
            .unwrap()
            .is_symmetric(0.0)
    );
}

#[test]
fn sprs_round_trip_in_both_storages() {
    let a = random_nonsymmetric::<f64>(64, 7, 5);
    let s = a.to_sprs();
    assert!(s.is_csr());
    assert_eq!(s.nnz(), a.nnz());
    assert_eq!(Csr::from_sprs(&s).unwrap(), a);
    let csc = s.to_csc();
    assert_eq!(Csr::from_sprs(&csc).unwrap(), a);
    // sprs's product agrees with ours.
    let x: Vec<f64> = (0..64).map(|i| i as f64 * 0.25 - 3.0).collect();
    let ours = a.mul_vec(&x).unwrap();
    let theirs = &s * &sprs::CsVec::new(64, (0..64).collect(), x.clone());
    for (i, o) in ours.iter().enumerate() {
        assert!((o - theirs.get(i).copied().unwrap_or(0.0)).abs() <= 1e-12 * (1.0 + o.abs()));
    }
}

#[test]
fn casting_checks_overflow_and_keeps_structure() {
    let a = poisson_2d_fd::<f64>(5);
    let f = a.cast::<f32>().unwrap();
    assert_eq!(f.row_ptr(), a.row_ptr());
    assert_eq!(f.cast::<f64>().unwrap(), a);
    let big = Csr::<f64>::new(1, 1, vec![0, 1], vec![0], vec![1e300]).unwrap();
    assert!(matches!(
        big.cast::<f32>(),
        Err(KrylovError::NonFinite { .. })
    ));
}

#[test]
fn products_and_shapes() {
    let a = Csr::<f64>::new(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]).unwrap();
    assert_eq!(a.mul_vec(&[1.0, 1.0, 1.0]).unwrap(), vec![3.0, 3.0]);
    assert!(matches!(
        a.mul_vec(&[1.0, 1.0]),
        Err(KrylovError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        a.require_square(),
        Err(KrylovError::NotSquare { rows: 2, cols: 3 })
    ));
    assert_eq!(a.row_length_stats(), (1, 1.5, 2));
    assert_eq!(
        Csr::<f32>::identity(4)
            .mul_vec(&[1.0, 2.0, 3.0, 4.0])
            .unwrap(),
        vec![1.0, 2.0, 3.0, 4.0]
    );
    assert_eq!(a.storage_bytes(), 4 * (3 + 3) + 8 * 3);
}

#[test]
fn ell_matches_csr_and_refuses_excess_padding() {
    use krylov_wgpu::matrix::Ell;
    let a = random_nonsymmetric::<f64>(77, 5, 9);
    let e = Ell::from_csr(&a, 3.0).unwrap();
    assert_eq!(e.width(), a.row_length_stats().2);
    assert_eq!(e.col_idx().len(), e.width() * a.nrows());
    let x: Vec<f64> = (0..77).map(|i| (i as f64 * 0.37).sin()).collect();
    let (ye, yc) = (e.mul_vec(&x), a.mul_vec(&x).unwrap());
    for (p, q) in ye.iter().zip(&yc) {
        assert!((p - q).abs() <= 1e-13 * (1.0 + q.abs()));
    }
    // One long row: ELL would pad every row to it.
    let mut coo = Coo::<f64>::new(100, 100);
    for i in 0..100 {
        coo.push(i, i, 2.0).unwrap();
        coo.push(0, i, 1.0).unwrap();
    }
    let long = coo.to_csr().unwrap();
    assert!(matches!(
        Ell::from_csr(&long, 3.0),
        Err(KrylovError::InvalidOption(_))
    ));
    // Empty rows are padding only.
    let empty = Csr::<f64>::new(3, 3, vec![0, 1, 1, 2], vec![0, 2], vec![1.0, 5.0]).unwrap();
    let e = Ell::from_csr(&empty, 10.0).unwrap();
    assert_eq!(e.mul_vec(&[1.0, 1.0, 1.0]), vec![1.0, 0.0, 5.0]);
}
