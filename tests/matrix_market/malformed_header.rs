//! Malformed banners and size lines: the variant and the line number.

use krylov_wgpu::MarketErrorKind as K;

use super::{GENERAL, SYMMETRIC, assert_errors, err, market_err, parse_bytes};

#[test]
fn empty_file() {
    assert_eq!(err("", 1), K::BadBanner);
}

#[test]
fn missing_banner() {
    assert_errors([
        ("3 3 1\n1 1 1\n".into(), 1, K::BadBanner),
        ("% just a comment\n3 3 1\n1 1 1\n".into(), 1, K::BadBanner),
        (
            "\n%%MatrixMarket matrix coordinate real general\n".into(),
            1,
            K::BadBanner,
        ),
    ]);
}

#[test]
fn malformed_banner() {
    for text in [
        "%%MatrixMarket matrix coordinate real\n1 1 0\n",
        "%%MatrixMarket\n",
        "%%MatrixMarket matrix coordinate real general extra\n1 1 0\n",
        "%MatrixMarket matrix coordinate real general\n1 1 0\n",
        "%%MatrixMarketmatrix coordinate real general x\n1 1 0\n",
    ] {
        assert_eq!(err(text, 1), K::BadBanner, "{text:?}");
    }
    // A non-UTF-8 banner.
    assert_eq!(
        market_err(
            parse_bytes(b"%%MatrixMarket matrix coordinate r\xffal general\n"),
            1
        ),
        K::BadBanner
    );
}

#[test]
fn unsupported_object_format_field_symmetry() {
    let unsupported = |text: &str, what_has: &str, value: &str| match err(text, 1) {
        K::Unsupported { what, value: v } => {
            assert!(what.contains(what_has), "{what}");
            assert_eq!(v, value);
        }
        other => panic!("{other:?}"),
    };
    unsupported(
        "%%MatrixMarket vector coordinate real general\n",
        "object",
        "vector",
    );
    unsupported(
        "%%MatrixMarket matrix sparse real general\n",
        "format",
        "sparse",
    );
    unsupported(
        "%%MatrixMarket matrix coordinate quaternion general\n",
        "field",
        "quaternion",
    );
    unsupported(
        "%%MatrixMarket matrix coordinate real diagonal\n",
        "symmetry",
        "diagonal",
    );
    unsupported(
        "%%MatrixMarket matrix array pattern general\n2 2\n",
        "field",
        "pattern",
    );
    unsupported(
        "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n",
        "symmetry",
        "skew-symmetric",
    );
}

#[test]
fn complex_field() {
    assert_eq!(
        err(
            "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
            1
        ),
        K::Complex
    );
    assert_eq!(
        err(
            "%%MatrixMarket matrix array COMPLEX hermitian\n1 1\n1 0\n",
            1
        ),
        K::Complex
    );
}

#[track_caller]
fn bad_size(text: &str, line: usize, needle: &str) {
    match err(text, line) {
        K::BadSizeLine(m) => assert!(m.contains(needle), "`{m}` lacks `{needle}`"),
        other => panic!("expected BadSizeLine, got {other:?}"),
    }
}

#[test]
fn size_line_negative() {
    bad_size(&format!("{GENERAL}% c\n-3 3 1\n"), 3, "negative");
    bad_size(&format!("{GENERAL}3 3 -1\n"), 2, "negative");
    bad_size(
        "%%MatrixMarket matrix array real general\n3 -3\n",
        2,
        "negative",
    );
}

#[test]
fn size_line_not_integer() {
    bad_size(
        &format!("{GENERAL}3.5 3 1\n"),
        2,
        "not a non-negative integer",
    );
    bad_size(
        &format!("{GENERAL}3 three 1\n"),
        2,
        "not a non-negative integer",
    );
    bad_size(
        &format!("{GENERAL}3 3 1e3\n"),
        2,
        "not a non-negative integer",
    );
    bad_size(
        &format!("{GENERAL}99999999999999999999999 3 1\n"),
        2,
        "too large",
    );
}

#[test]
fn size_line_wrong_count() {
    bad_size(&format!("{GENERAL}3 3\n1 1 1\n"), 2, "rows cols entries");
    bad_size(&format!("{GENERAL}\n% c\n3\n"), 4, "rows cols entries");
    bad_size(&format!("{GENERAL}3 3 1 1\n"), 2, "rows cols entries");
    bad_size(
        "%%MatrixMarket matrix array real general\n3 3 9\n",
        2,
        "rows cols",
    );
    bad_size(
        "%%MatrixMarket matrix array real general\n3\n",
        2,
        "rows cols",
    );
}

#[test]
fn size_line_missing() {
    bad_size(GENERAL, 1, "truncated");
    bad_size(&format!("{GENERAL}% only comments\n\n"), 3, "truncated");
}

#[test]
fn size_line_dimension_over_u32() {
    match err(&format!("{GENERAL}5000000000 1 0\n"), 2) {
        K::Unsupported { what, value } => {
            assert!(what.contains("u32"));
            assert_eq!(value, "5000000000");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn symmetric_storage_needs_square() {
    assert!(matches!(
        err(&format!("{SYMMETRIC}% c\n3 2 1\n1 1 1\n"), 3),
        K::Invalid(m) if m.contains("square")
    ));
    assert!(matches!(
        err("%%MatrixMarket matrix array real skew-symmetric\n2 3\n", 2),
        K::Invalid(m) if m.contains("square")
    ));
}
