//! Accepted variants: fields, symmetries, layouts, comments, line endings and number forms.

use krylov_wgpu::MarketErrorKind as K;
use krylov_wgpu::matrix::{Csr, read_matrix_market_from};

use super::{GENERAL, SYMMETRIC, dense, err, market_err, parse, parse_bytes};

#[test]
fn pattern_field() {
    let a =
        parse("%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 1\n3 1\n2 3\n").unwrap();
    assert_eq!(
        dense(&a),
        vec![
            vec![1.0, 0.0, 0.0],
            vec![0.0, 0.0, 1.0],
            vec![1.0, 0.0, 0.0]
        ]
    );
    let s = parse("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n").unwrap();
    assert_eq!(dense(&s), vec![vec![1.0, 1.0], vec![1.0, 0.0]]);
}

#[test]
fn integer_field() {
    let a =
        parse("%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 7\n2 1 -3\n2 2 +4\n")
            .unwrap();
    assert_eq!(dense(&a), vec![vec![7.0, 0.0], vec![-3.0, 4.0]]);
    // Integers beyond i64 are still integers.
    let a = parse(
        "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 100000000000000000000\n",
    )
    .unwrap();
    assert_eq!(a.get(0, 0), 1e20);
    // A fractional value in an integer file is not an integer.
    let k = err(
        "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n",
        3,
    );
    assert_eq!(k, K::NotANumber("1.5".into()));
}

#[test]
fn skew_symmetric_coordinate() {
    let a = parse("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -2\n")
        .unwrap();
    assert_eq!(
        dense(&a),
        vec![
            vec![0.0, -1.5, 0.0],
            vec![1.5, 0.0, 2.0],
            vec![0.0, -2.0, 0.0]
        ]
    );
    let t = a.transpose();
    for (x, y) in dense(&a).iter().flatten().zip(dense(&t).iter().flatten()) {
        assert_eq!(*x, -*y);
    }
}

#[test]
fn skew_symmetric_array() {
    // Strictly lower triangle, column-major: (2,1) (3,1) (3,2).
    let a = parse("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n").unwrap();
    assert_eq!(
        dense(&a),
        vec![
            vec![0.0, -1.0, -2.0],
            vec![1.0, 0.0, -3.0],
            vec![2.0, 3.0, 0.0]
        ]
    );
}

#[test]
fn array_general_column_major_drops_zeros() {
    let a = parse("%%MatrixMarket matrix array real general\n% 2 x 3\n2 3\n1\n4\n0\n5\n3\n0.0\n")
        .unwrap();
    assert_eq!(dense(&a), vec![vec![1.0, 0.0, 3.0], vec![4.0, 5.0, 0.0]]);
    assert_eq!(a.nnz(), 4);
}

#[test]
fn array_symmetric_lower_triangle() {
    // Lower triangle column-major: (1,1) (2,1) (3,1) (2,2) (3,2) (3,3).
    let a = parse("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n").unwrap();
    assert_eq!(
        dense(&a),
        vec![
            vec![1.0, 2.0, 3.0],
            vec![2.0, 4.0, 5.0],
            vec![3.0, 5.0, 6.0]
        ]
    );
    // Integer arrays too.
    let b = parse("%%MatrixMarket matrix array integer symmetric\n2 2\n1\n0\n3\n").unwrap();
    assert_eq!(dense(&b), vec![vec![1.0, 0.0], vec![0.0, 3.0]]);
    assert_eq!(b.nnz(), 2);
}

#[test]
fn hermitian_real_is_symmetric() {
    let h =
        parse("%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n1 1 2\n2 1 -1\n").unwrap();
    let s =
        parse("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 2\n2 1 -1\n").unwrap();
    assert_eq!(h, s);
    assert_eq!(dense(&h), vec![vec![2.0, -1.0], vec![-1.0, 0.0]]);
}

#[test]
fn uppercase_and_mixed_case_banner() {
    let a = parse("%%MATRIXMARKET MATRIX COORDINATE REAL GENERAL\n1 1 1\n1 1 2\n").unwrap();
    assert_eq!(a.get(0, 0), 2.0);
    let b = parse("%%matrixmarket Matrix Coordinate Real Symmetric\n2 2 1\n2 1 2\n").unwrap();
    assert_eq!(b.nnz(), 2);
    let c = parse("%%MatrixMarket matrix Array Real Skew-Symmetric\n2 2\n5\n").unwrap();
    assert_eq!(dense(&c), vec![vec![0.0, -5.0], vec![5.0, 0.0]]);
}

#[test]
fn comments_and_blank_lines_anywhere() {
    let text = "%%MatrixMarket matrix coordinate real general\n\
                % header comment\n\
                \n\
                   % indented comment\n\
                3 3 3\n\
                % between entries\n\
                1 1 1.0\n\
                \n\
                \t \n\
                3 3 3.0\n\
                %% another\n\
                2 1 2.0\n\
                % trailing comment\n\
                \n";
    let a = parse(text).unwrap();
    assert_eq!(a.nnz(), 3);
    assert_eq!(a.get(2, 2), 3.0);
    assert_eq!(a.get(1, 0), 2.0);
}

#[test]
fn empty_rows_and_rectangular() {
    let a = parse(&format!("{GENERAL}5 2 2\n1 2 1\n5 1 2\n")).unwrap();
    assert_eq!((a.nrows(), a.ncols(), a.nnz()), (5, 2, 2));
    assert_eq!(a.row_ptr(), &[0, 1, 1, 1, 1, 2]);
    let e = parse(&format!("{GENERAL}0 0 0\n")).unwrap();
    assert_eq!((e.nrows(), e.ncols(), e.nnz()), (0, 0, 0));
    let z = parse(&format!("{GENERAL}4 4 0\n")).unwrap();
    assert_eq!(z.row_ptr(), &[0; 5]);
}

#[test]
fn duplicates_summed_and_explicit_zeros_kept() {
    let a = parse(&format!(
        "{GENERAL}2 2 4\n1 1 1\n1 1 2.5\n2 2 0\n1 1 -0.5\n"
    ))
    .unwrap();
    assert_eq!(a.get(0, 0), 3.0);
    assert_eq!(a.nnz(), 2); // (1,1) summed; the explicit zero at (2,2) stays
    assert_eq!(a.col_idx(), &[0, 1]);
}

#[test]
fn symmetric_upper_triangle_accepted() {
    let lower = parse(&format!("{SYMMETRIC}3 3 3\n1 1 4\n2 1 -1\n3 2 -2\n")).unwrap();
    let upper = parse(&format!("{SYMMETRIC}3 3 3\n1 1 4\n1 2 -1\n2 3 -2\n")).unwrap();
    assert_eq!(lower, upper);
    assert_eq!(lower.nnz(), 5);
    assert!(lower.is_symmetric(0.0));
}

#[test]
fn line_endings_bom_and_number_forms() {
    let a = parse(
        "\u{feff}%%MatrixMarket matrix coordinate real general\r\n% c\r\n2 2 4\r\n1 1 1.5D+01\r\n\
         1 2 -2.5d-1\r\n2 1 .5\r\n2 2 3.\r\n",
    )
    .unwrap();
    assert_eq!(dense(&a), vec![vec![15.0, -0.25], vec![0.5, 3.0]]);
    // No newline at the very end.
    let b = parse(&format!("{GENERAL}1 1 1\n1 1 7")).unwrap();
    assert_eq!(b.get(0, 0), 7.0);
    // `double` as a field alias for `real`.
    assert!(parse("%%MatrixMarket matrix coordinate double general\n1 1 1\n1 1 1\n").is_ok());
}

#[test]
fn non_utf8_comment_is_skipped() {
    let mut bytes = b"%%MatrixMarket matrix coordinate real general\n% M\xfcller\n1 1 1\n".to_vec();
    bytes.extend(b"1 1 2\n");
    assert_eq!(parse_bytes(&bytes).unwrap().get(0, 0), 2.0);
}

#[test]
fn f32_reading() {
    let a: Csr<f32> = read_matrix_market_from(
        format!("{GENERAL}1 2 2\n1 1 0.1\n1 2 3.4028234e38\n").as_bytes(),
        "test.mtx",
    )
    .unwrap();
    assert_eq!(a.values(), &[0.1f32, f32::MAX]);
    // Finite as f64 but out of f32 range.
    let r = read_matrix_market_from::<f32, _>(
        format!("{GENERAL}1 1 1\n1 1 1e39\n").as_bytes(),
        "test.mtx",
    );
    assert!(matches!(market_err(r, 3), K::NonFinite(m) if m.contains("f32")));
}
