//! Malformed entries: token counts, numbers, ranges, counts, symmetry and encoding, with the
//! variant and the line number.

use krylov_wgpu::MarketErrorKind as K;
use krylov_wgpu::matrix::{read_matrix_market_from, read_vector_from};

use super::{GENERAL, SYMMETRIC, assert_errors, err, market_err, parse, parse_bytes};

#[test]
fn wrong_token_count() {
    let tokens = |expected, found| K::WrongTokenCount { expected, found };
    assert_errors([
        (format!("{GENERAL}3 3 2\n1 1 1\n1 2\n"), 4, tokens(3, 2)),
        (format!("{GENERAL}3 3 2\n1 1 1 0\n"), 3, tokens(3, 4)),
        (format!("{GENERAL}3 3 2\n1 1 1 2 3 4 5\n"), 3, tokens(3, 7)),
        (
            "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n".into(),
            3,
            tokens(2, 3),
        ),
        (
            "%%MatrixMarket matrix array real general\n2 1\n1\n2 3\n".into(),
            4,
            tokens(1, 2),
        ),
    ]);
}

#[test]
fn non_numeric_tokens() {
    for (entry, token) in [
        ("1 1 abc", "abc"),
        ("x 1 1.0", "x"),
        ("1 1.0 1.0", "1.0"),
        ("1 1 1.0.0", "1.0.0"),
        ("1 1 1,5", "1,5"),
    ] {
        let text = format!("{GENERAL}2 2 1\n{entry}\n");
        assert_eq!(err(&text, 3), K::NotANumber(token.into()), "{text:?}");
    }
    assert_eq!(
        err("%%MatrixMarket matrix array real general\n1 1\n--1\n", 3),
        K::NotANumber("--1".into())
    );
}

#[test]
fn non_finite_values() {
    for tok in ["nan", "NaN", "inf", "-Infinity", "+inf", "1e999", "-1e400"] {
        assert_eq!(
            err(&format!("{GENERAL}2 2 2\n1 1 1\n% c\n2 2 {tok}\n"), 5),
            K::NonFinite(tok.into()),
            "{tok}"
        );
    }
    assert_eq!(
        err("%%MatrixMarket matrix array real general\n1 2\n1\nNaN\n", 4),
        K::NonFinite("NaN".into())
    );
    assert_eq!(
        err(
            &format!(
                "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 {}\n",
                "9".repeat(400)
            ),
            3
        ),
        K::NonFinite("9".repeat(400))
    );
}

#[test]
fn index_out_of_range() {
    let oor = |what: &'static str, index: i64, max: usize| K::IndexOutOfRange { what, index, max };
    let huge = "99999999999999999999999";
    assert_errors([
        (format!("{GENERAL}3 4 1\n0 1 1\n"), 3, oor("row", 0, 3)),
        (format!("{GENERAL}3 4 1\n1 0 1\n"), 3, oor("column", 0, 4)),
        (format!("{GENERAL}3 4 1\n4 1 1\n"), 3, oor("row", 4, 3)),
        (
            format!("{GENERAL}3 4 2\n1 1 1\n1 5 1\n"),
            4,
            oor("column", 5, 4),
        ),
        (format!("{GENERAL}3 4 1\n-1 1 1\n"), 3, oor("row", -1, 3)),
        (
            format!("{GENERAL}3 4 1\n1 {huge} 1\n"),
            3,
            oor("column", i64::MAX, 4),
        ),
        (
            format!("{GENERAL}3 4 1\n-{huge} 1 1\n"),
            3,
            oor("row", i64::MIN, 3),
        ),
        (format!("{GENERAL}0 0 1\n1 1 1\n"), 3, oor("row", 1, 0)),
    ]);
}

#[test]
fn truncated_file() {
    let truncated = |expected, found| K::Truncated { expected, found };
    assert_errors([
        (
            format!("{GENERAL}3 3 4\n1 1 1\n2 2 1\n% comment\n"),
            5,
            truncated(4, 2),
        ),
        (format!("{GENERAL}3 3 1\n"), 2, truncated(1, 0)),
        (
            "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n".into(),
            7,
            truncated(6, 5),
        ),
    ]);
    // The message says so.
    let e = parse(&format!("{GENERAL}3 3 4\n1 1 1\n")).unwrap_err();
    assert!(e.to_string().contains("truncated"), "{e}");
}

#[test]
fn too_many_entries() {
    let too_many = |expected| K::TooManyEntries { expected };
    assert_errors([
        (
            format!("{GENERAL}3 3 1\n1 1 1\n% c\n2 2 1\n"),
            5,
            too_many(1),
        ),
        (
            "%%MatrixMarket matrix array real general\n1 1\n1\n2\n".into(),
            4,
            too_many(1),
        ),
        // Even a junk line after the last entry counts.
        (format!("{GENERAL}1 1 0\n\nfoo\n"), 4, too_many(0)),
    ]);
}

#[test]
fn symmetric_both_triangles_rejected() {
    // Storing both triangles would double-count every mirrored pair.
    let k = err(&format!("{SYMMETRIC}3 3 3\n1 1 4\n2 1 -1\n1 2 -1\n"), 5);
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("one triangle")),
        "{k:?}"
    );
    let k = err(&format!("{SYMMETRIC}3 3 3\n1 2 4\n2 2 -1\n3 1 -1\n"), 5);
    assert!(matches!(k, K::Invalid(_)), "{k:?}");
}

#[test]
fn skew_symmetric_diagonal_rejected() {
    let k = err(
        "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 0\n",
        4,
    );
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("skew")),
        "{k:?}"
    );
}

#[test]
fn non_utf8_byte() {
    let k = market_err(
        parse_bytes(b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\xff\n"),
        4,
    );
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("UTF-8")),
        "{k:?}"
    );
    let k = market_err(
        parse_bytes(b"%%MatrixMarket matrix coordinate real general\n2 \xc3\x28 2\n"),
        2,
    );
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("UTF-8")),
        "{k:?}"
    );
}

#[test]
fn huge_announcements_do_not_allocate() {
    // 10^12 announced entries, one present: fails fast as truncated.
    assert_eq!(
        err(
            &format!("{GENERAL}1000000 1000000 1000000000000\n1 1 1\n"),
            3
        ),
        K::Truncated {
            expected: 1_000_000_000_000,
            found: 1
        }
    );
    // A 4294967295^2 dense array (1.8e19 entries), two present.
    let k = err(
        "%%MatrixMarket matrix array real general\n4294967295 4294967295\n1\n2\n",
        4,
    );
    assert!(matches!(k, K::Truncated { found: 2, .. }), "{k:?}");
    // A vector of length 4294967295 announced with one entry.
    let r = read_vector_from::<f64, _>(
        "%%MatrixMarket matrix array real general\n4294967295 1\n1\n".as_bytes(),
        "test.mtx",
    );
    assert!(matches!(market_err(r, 3), K::Truncated { found: 1, .. }));
    // A 0 x huge array holds no entries and needs no work.
    let a = parse("%%MatrixMarket matrix array real general\n0 4294967295\n").unwrap();
    assert_eq!((a.nrows(), a.nnz()), (0, 0));
    // (Work proportional to the announced sizes would never finish, and reserving for them
    // would abort: getting here is the check. No wall-clock assertion: machines are noisy.)
}

#[test]
fn overlong_line() {
    let long = "1".repeat(2 << 20);
    let k = err(&format!("{GENERAL}1 1 1\n1 1 {long}\n"), 3);
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("longer")),
        "{k:?}"
    );
}

#[test]
fn duplicate_sum_overflow_f32() {
    let r = read_matrix_market_from::<f32, _>(
        format!("{GENERAL}1 1 2\n1 1 3e38\n1 1 3e38\n").as_bytes(),
        "test.mtx",
    );
    assert!(matches!(market_err(r, 4), K::Invalid(m) if m.contains("overflow")));
}
