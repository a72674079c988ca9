//! The banner (`%%MatrixMarket matrix <format> <field> <symmetry>`) and the size line.

use std::io::BufRead;

use super::lines::Lines;
use super::parse::{parse_count, tokens};
use super::{Kind, invalid, market_err};
use crate::base::error::Result;

/// Largest dimension a [`Csr`](crate::matrix::Csr) can index.
const MAX_DIM: u64 = u32::MAX as u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    Coordinate,
    Array,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    Real,
    Integer,
    Pattern,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Symmetry {
    General,
    Symmetric,
    SkewSymmetric,
}

#[derive(Debug)]
pub(super) struct Header {
    pub(super) format: Format,
    pub(super) field: Field,
    pub(super) symmetry: Symmetry,
    pub(super) nrows: usize,
    pub(super) ncols: usize,
    /// Number of entry lines announced (coordinate) or implied (array).
    pub(super) entries: usize,
    /// Line number of the size line.
    pub(super) size_line: usize,
}

pub(super) fn read_header<R: BufRead>(lines: &mut Lines<R>, name: &str) -> Result<Header> {
    let err = |line, kind| market_err(name, line, kind);
    if !lines.read_raw(name)? {
        return Err(err(1, Kind::BadBanner));
    }
    let raw = lines
        .buf
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(&lines.buf);
    let text = std::str::from_utf8(raw).map_err(|_| err(1, Kind::BadBanner))?;
    let mut words = [""; 5];
    let mut n = 0;
    for w in text.split_ascii_whitespace() {
        if n == 5 {
            return Err(err(1, Kind::BadBanner));
        }
        words[n] = w;
        n += 1;
    }
    if n < 5 || !words[0].eq_ignore_ascii_case("%%MatrixMarket") {
        return Err(err(1, Kind::BadBanner));
    }
    let unsupported = |what, value: &str| {
        err(
            1,
            Kind::Unsupported {
                what,
                value: value.to_string(),
            },
        )
    };
    let is = |w: &str, s: &str| w.eq_ignore_ascii_case(s);
    if !is(words[1], "matrix") {
        return Err(unsupported("object", words[1]));
    }
    let format = if is(words[2], "coordinate") {
        Format::Coordinate
    } else if is(words[2], "array") {
        Format::Array
    } else {
        return Err(unsupported("format", words[2]));
    };
    let field = if is(words[3], "real") || is(words[3], "double") {
        Field::Real
    } else if is(words[3], "integer") {
        Field::Integer
    } else if is(words[3], "pattern") {
        Field::Pattern
    } else if is(words[3], "complex") {
        return Err(err(1, Kind::Complex));
    } else {
        return Err(unsupported("field", words[3]));
    };
    let symmetry = if is(words[4], "general") {
        Symmetry::General
    } else if is(words[4], "symmetric") || is(words[4], "hermitian") {
        Symmetry::Symmetric
    } else if is(words[4], "skew-symmetric") {
        Symmetry::SkewSymmetric
    } else {
        return Err(unsupported("symmetry", words[4]));
    };
    if format == Format::Array && field == Field::Pattern {
        return Err(unsupported("field for the array format", words[3]));
    }
    if field == Field::Pattern && symmetry == Symmetry::SkewSymmetric {
        return Err(unsupported("symmetry for the pattern field", words[4]));
    }

    let Some((size_line, s)) = lines.next_data(name)? else {
        return Err(err(
            lines.line.max(1),
            Kind::BadSizeLine("missing: the file ends after the header (truncated)".into()),
        ));
    };
    let (nrows, ncols, announced) = match format {
        Format::Coordinate => {
            let [r, c, e] = tokens::<3>(s).map_err(|_| {
                err(
                    size_line,
                    Kind::BadSizeLine(format!(
                        "expected `rows cols entries`, found `{}`",
                        s.trim()
                    )),
                )
            })?;
            let e = parse_count(e, "entry count").map_err(|k| err(size_line, k))?;
            (r, c, Some(e))
        }
        Format::Array => {
            let [r, c] = tokens::<2>(s).map_err(|_| {
                err(
                    size_line,
                    Kind::BadSizeLine(format!("expected `rows cols`, found `{}`", s.trim())),
                )
            })?;
            (r, c, None)
        }
    };
    let dim = |tok: &str, what: &'static str| -> Result<usize> {
        let v = parse_count(tok, what).map_err(|k| err(size_line, k))?;
        if v > MAX_DIM {
            return Err(err(
                size_line,
                Kind::Unsupported {
                    what: "dimension (over the u32 index limit 4294967295)",
                    value: tok.to_string(),
                },
            ));
        }
        Ok(v as usize)
    };
    let nrows = dim(nrows, "row count")?;
    let ncols = dim(ncols, "column count")?;
    if symmetry != Symmetry::General && nrows != ncols {
        return Err(err(
            size_line,
            invalid(format!(
                "symmetric or skew-symmetric storage needs a square matrix, found {nrows} x {ncols}"
            )),
        ));
    }
    let entries = match announced {
        Some(e) => usize::try_from(e).map_err(|_| {
            err(
                size_line,
                Kind::BadSizeLine(format!("entry count `{e}` is too large")),
            )
        })?,
        // Dimensions are below 2^32, so these products fit in 64 bits.
        None => {
            let (m, n) = (nrows as u64, ncols as u64);
            let count = match symmetry {
                Symmetry::General => m * n,
                Symmetry::Symmetric => n * (n + 1) / 2,
                Symmetry::SkewSymmetric => n * n.saturating_sub(1) / 2,
            };
            usize::try_from(count).map_err(|_| {
                err(
                    size_line,
                    Kind::BadSizeLine(format!("{nrows} x {ncols} array is too large")),
                )
            })?
        }
    };
    Ok(Header {
        format,
        field,
        symmetry,
        nrows,
        ncols,
        entries,
        size_line,
    })
}
