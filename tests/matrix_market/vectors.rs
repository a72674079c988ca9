//! Vectors: shapes accepted as vectors, wrong shapes, errors with line numbers.

use krylov_wgpu::MarketErrorKind as K;
use krylov_wgpu::matrix::read_vector_from;

use super::market_err;

fn vec_of(text: &str) -> krylov_wgpu::Result<Vec<f64>> {
    read_vector_from(text.as_bytes(), "test.mtx")
}

#[test]
fn vector_shapes() {
    let col = "%%MatrixMarket matrix array real general\n3 1\n1\n0\n-2.5\n";
    assert_eq!(vec_of(col).unwrap(), vec![1.0, 0.0, -2.5]);
    let row = "%%MatrixMarket matrix array real general\n1 3\n1\n0\n-2.5\n";
    assert_eq!(vec_of(row).unwrap(), vec![1.0, 0.0, -2.5]);
    let sparse = "%%MatrixMarket matrix coordinate real general\n5 1 3\n2 1 1\n5 1 2\n2 1 0.5\n";
    assert_eq!(vec_of(sparse).unwrap(), vec![0.0, 1.5, 0.0, 0.0, 2.0]);
    let sparse_row = "%%MatrixMarket matrix coordinate integer general\n1 3 1\n1 3 7\n";
    assert_eq!(vec_of(sparse_row).unwrap(), vec![0.0, 0.0, 7.0]);
    let empty = "%%MatrixMarket matrix coordinate real general\n0 1 0\n";
    assert!(vec_of(empty).unwrap().is_empty());
    let one = "%%MatrixMarket matrix array real symmetric\n1 1\n4\n";
    assert_eq!(vec_of(one).unwrap(), vec![4.0]);
}

#[test]
fn vector_wrong_shape() {
    let k = market_err(
        vec_of("%%MatrixMarket matrix array real general\n% c\n2 2\n1\n2\n3\n4\n"),
        3,
    );
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("2 x 2")),
        "{k:?}"
    );
    let k = market_err(
        vec_of("%%MatrixMarket matrix coordinate real general\n3 2 1\n1 1 1\n"),
        2,
    );
    assert!(matches!(k, K::Invalid(_)), "{k:?}");
}

#[test]
fn vector_errors_have_lines() {
    assert_eq!(
        market_err(
            vec_of("%%MatrixMarket matrix array real general\n3 1\n1\n2\n"),
            4
        ),
        K::Truncated {
            expected: 3,
            found: 2
        }
    );
    assert_eq!(
        market_err(
            vec_of("%%MatrixMarket matrix coordinate real general\n3 1 1\n4 1 1\n"),
            3
        ),
        K::IndexOutOfRange {
            what: "row",
            index: 4,
            max: 3
        }
    );
    assert_eq!(
        market_err(
            vec_of("%%MatrixMarket matrix array real general\n2 1\n1\ninf\n"),
            4
        ),
        K::NonFinite("inf".into())
    );
    assert_eq!(market_err(vec_of(""), 1), K::BadBanner);
    assert_eq!(
        market_err(
            vec_of("%%MatrixMarket matrix array complex general\n2 1\n1 0\n1 0\n"),
            1
        ),
        K::Complex
    );
}
