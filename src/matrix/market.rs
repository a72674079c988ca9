//! Matrix Market (`.mtx`, `.mtx.gz`) reading and writing.
//!
//! Follows the NIST specification (<https://math.nist.gov/MatrixMarket/formats.html>):
//!
//! * **Banner**: the first line must be `%%MatrixMarket matrix <format> <field> <symmetry>`;
//!   all five words are matched case-insensitively (a UTF-8 byte-order mark before it is ignored).
//!   Formats `coordinate` and `array`; fields `real` (alias `double`), `integer` and `pattern`
//!   (every stored entry gets the value 1); symmetries `general`, `symmetric`,
//!   `skew-symmetric` and `hermitian` (with a real field a Hermitian matrix *is* symmetric and
//!   is read as such). The `complex` field is rejected with [`MarketErrorKind::Complex`];
//!   `array pattern` and `pattern skew-symmetric` are not defined by the specification and
//!   are rejected as unsupported.
//! * **Comments and blank lines**: after the banner, lines whose first non-blank character is
//!   `%` and blank lines are skipped anywhere, even between entries. Comment lines are not
//!   required to be UTF-8 (old files carry Latin-1 names); every other line must be.
//! * **Size line**: `rows cols entries` (coordinate) or `rows cols` (array): non-negative
//!   integers, exactly that many. Dimensions must fit the `u32` indices of [`Csr`].
//!   Non-square matrices are fine with `general` storage.
//! * **Coordinate entries**: `i j value` (`i j` for pattern), 1-based indices. Duplicates are
//!   summed (see [`Coo`]) and explicit zeros are kept as stored entries. Real values are parsed
//!   with `str::parse` in the target precision (correctly rounded); a Fortran exponent
//!   (`1.5D+03`) is accepted too. `integer` values must be integers (beyond `i64` they are
//!   rounded like reals).
//! * **Array entries**: one value per line, column-major. Every entry of the dense array that
//!   is not an exact zero becomes a CSR entry; **exact zeros are dropped**. With `symmetric`
//!   (or `hermitian`) storage the file holds the lower triangle including the diagonal, column
//!   by column; with `skew-symmetric` the strictly lower triangle.
//! * **Symmetric storage is expanded on read**: each off-diagonal entry `a_ij` also gives
//!   `a_ji = a_ij` (`-a_ij` for skew-symmetric, where a diagonal entry is an error). SuiteSparse
//!   files store the lower triangle; a coordinate file storing only the *upper* triangle is
//!   accepted as well, but a file with entries on *both* sides of the diagonal is rejected
//!   (mirroring both would count every pair twice).
//! * **Compression**: the path readers detect gzip by its magic bytes `1f 8b` (not by the
//!   extension) and decompress with a multi-member decoder.
//!
//! Every malformed input gives [`KrylovError::MatrixMarket`] with the 1-based number of the
//! offending line; for a truncated file (fewer entries than announced) it is the last line
//! read. Nothing panics on any input. Memory reserved up front is capped, so a size line
//! announcing 10^12 entries costs nothing until entries actually arrive; the output arrays
//! are allocated once all entries have been read. Lines longer than 1 MiB are rejected.
//! Failures to open or read a file give [`KrylovError::Io`], except corrupt or truncated
//! compressed data, which is reported as a [`KrylovError::MatrixMarket`] error on the line
//! being read.
//!
//! The writers emit `coordinate real general` (matrices) and `array real general` `n x 1`
//! (vectors) with values printed by `{:e}`, the shortest form that reads back to the same
//! number: `f64` and `f32` values round-trip bit for bit. A NaN or infinity (which no reader
//! accepts) makes the writers fail with [`KrylovError::NonFinite`] before anything is written.
//!
//! ```
//! use std::io::Cursor;
//! use krylov_wgpu::matrix::{read_matrix_market_from, write_matrix_market_to};
//! let text = "%%MatrixMarket matrix coordinate real symmetric\n\
//!             % the lower triangle of [[4, -1], [-1, 4]]\n\
//!             2 2 3\n\
//!             1 1 4.0\n\
//!             2 1 -1.0\n\
//!             2 2 4.0\n";
//! let a = read_matrix_market_from::<f64, _>(Cursor::new(text), "inline")?;
//! assert_eq!((a.nrows(), a.ncols(), a.nnz()), (2, 2, 4));
//! assert_eq!(a.get(0, 1), -1.0);
//! assert!(a.is_symmetric(0.0));
//!
//! let mut out = Vec::new();
//! write_matrix_market_to(&mut out, &a)?;
//! let b = read_matrix_market_from::<f64, _>(out.as_slice(), "written")?;
//! assert_eq!(a, b);
//!
//! // Errors name the offending line.
//! let bad = "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n";
//! let err = read_matrix_market_from::<f64, _>(bad.as_bytes(), "bad").unwrap_err();
//! assert_eq!(err.to_string(), "bad:3: row index 3 out of range 1..=2");
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use super::{Coo, Csr};
use crate::base::error::{KrylovError, MarketErrorKind, Result};
use crate::base::scalar::{Precision, Scalar};

/// Longest accepted line, newline included.
const MAX_LINE_BYTES: usize = 1 << 20;
/// Most entries reserved before they are read (the size line may lie).
const MAX_RESERVE: usize = 1 << 20;
/// Largest dimension a [`Csr`] can index.
const MAX_DIM: u64 = u32::MAX as u64;

type Kind = MarketErrorKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Coordinate,
    Array,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Real,
    Integer,
    Pattern,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Symmetry {
    General,
    Symmetric,
    SkewSymmetric,
}

#[derive(Debug)]
struct Header {
    format: Format,
    field: Field,
    symmetry: Symmetry,
    nrows: usize,
    ncols: usize,
    /// Number of entry lines announced (coordinate) or implied (array).
    entries: usize,
    /// Line number of the size line.
    size_line: usize,
}

fn market_err(name: &str, line: usize, kind: Kind) -> KrylovError {
    KrylovError::MatrixMarket {
        path: name.to_string(),
        line,
        kind,
    }
}

fn invalid(msg: impl Into<String>) -> Kind {
    Kind::Invalid(msg.into())
}

/// A line reader with a reusable buffer and a 1-based line counter.
struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    /// Number of lines read so far (= the number of the line in `buf`).
    line: usize,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R) -> Self {
        Lines {
            reader,
            buf: Vec::with_capacity(256),
            line: 0,
        }
    }

    /// Reads the next physical line into `buf`, newline stripped; `false` at end of input.
    fn read_raw(&mut self, name: &str) -> Result<bool> {
        self.buf.clear();
        let n = (&mut self.reader)
            .take(MAX_LINE_BYTES as u64)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| read_error(name, self.line + 1, e))?;
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if n >= MAX_LINE_BYTES {
            return Err(market_err(
                name,
                self.line,
                invalid(format!("line longer than {MAX_LINE_BYTES} bytes")),
            ));
        }
        Ok(true)
    }

    /// The next line that is neither blank nor a comment, with its number; `None` at the end.
    fn next_data(&mut self, name: &str) -> Result<Option<(usize, &str)>> {
        loop {
            if !self.read_raw(name)? {
                return Ok(None);
            }
            match self.buf.iter().find(|b| !b.is_ascii_whitespace()) {
                None | Some(b'%') => continue,
                Some(_) => break,
            }
        }
        let line = self.line;
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((line, s))),
            Err(e) => {
                let at = e.valid_up_to();
                Err(market_err(
                    name,
                    line,
                    invalid(format!(
                        "line is not valid UTF-8 (byte 0x{:02x} at column {})",
                        self.buf[at],
                        at + 1
                    )),
                ))
            }
        }
    }
}

/// Corrupt or truncated compressed data is a problem of the input, reported on its line;
/// anything else is an I/O failure.
fn read_error(name: &str, line: usize, e: io::Error) -> KrylovError {
    match e.kind() {
        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::UnexpectedEof => {
            market_err(
                name,
                line,
                invalid(format!(
                    "cannot read the input (corrupt or truncated compressed data?): {e}"
                )),
            )
        }
        _ => KrylovError::io(name, e),
    }
}

/// Optional sign followed by at least one ASCII digit and nothing else.
fn is_integer_syntax(tok: &str) -> bool {
    let digits = tok
        .strip_prefix('-')
        .or_else(|| tok.strip_prefix('+'))
        .unwrap_or(tok);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A non-negative count or dimension from the size line.
fn parse_count(tok: &str, what: &str) -> std::result::Result<u64, Kind> {
    tok.parse::<u64>().map_err(|_| {
        Kind::BadSizeLine(if is_integer_syntax(tok) && tok.starts_with('-') {
            format!("negative {what} `{tok}`")
        } else if is_integer_syntax(tok) {
            format!("{what} `{tok}` is too large")
        } else {
            format!("{what} `{tok}` is not a non-negative integer")
        })
    })
}

/// A 1-based index in `1..=max`, returned 0-based. Integers beyond `i64` are reported as
/// out of range with the index saturated to `i64::MIN`/`i64::MAX`.
fn parse_index(tok: &str, what: &'static str, max: usize) -> std::result::Result<usize, Kind> {
    let index = match tok.parse::<i64>() {
        Ok(v) => v,
        Err(_) if is_integer_syntax(tok) => {
            if tok.starts_with('-') {
                i64::MIN
            } else {
                i64::MAX
            }
        }
        Err(_) => return Err(Kind::NotANumber(tok.to_string())),
    };
    if index < 1 || index as u64 > max as u64 {
        return Err(Kind::IndexOutOfRange { what, index, max });
    }
    Ok(index as usize - 1)
}

/// Parses a real in the precision of `T` (correctly rounded, no double rounding).
fn parse_float<T: Scalar>(tok: &str) -> Option<T> {
    match T::PRECISION {
        Precision::F32 => tok.parse::<f32>().ok().map(|v| T::from_f64(v as f64)),
        Precision::F64 => tok.parse::<f64>().ok().map(T::from_f64),
    }
}

fn parse_real<T: Scalar>(tok: &str) -> std::result::Result<T, Kind> {
    let v = match parse_float::<T>(tok) {
        Some(v) => v,
        // Fortran double-precision exponent, e.g. `1.5D+03`.
        None if tok.bytes().any(|b| b == b'D' || b == b'd') => {
            parse_float::<T>(&tok.replace(['D', 'd'], "e"))
                .ok_or_else(|| Kind::NotANumber(tok.to_string()))?
        }
        None => return Err(Kind::NotANumber(tok.to_string())),
    };
    finite(v, tok)
}

fn finite<T: Scalar>(v: T, tok: &str) -> std::result::Result<T, Kind> {
    if v.is_finite() {
        Ok(v)
    } else if tok.parse::<f64>().is_ok_and(f64::is_finite) {
        Err(Kind::NonFinite(format!(
            "{tok} (out of {} range)",
            T::PRECISION
        )))
    } else {
        Err(Kind::NonFinite(tok.to_string()))
    }
}

fn parse_value<T: Scalar>(tok: &str, field: Field) -> std::result::Result<T, Kind> {
    match field {
        Field::Pattern => Ok(T::one()),
        Field::Real => parse_real(tok),
        Field::Integer => match tok.parse::<i64>() {
            Ok(i) => Ok(match T::PRECISION {
                Precision::F32 => T::from_f64(i as f32 as f64),
                Precision::F64 => T::from_f64(i as f64),
            }),
            Err(_) if is_integer_syntax(tok) => parse_real(tok),
            Err(_) => Err(Kind::NotANumber(tok.to_string())),
        },
    }
}

/// Splits `s` into exactly `N` tokens, or reports how many there are.
fn tokens<const N: usize>(s: &str) -> std::result::Result<[&str; N], Kind> {
    let mut out = [""; N];
    let mut it = s.split_ascii_whitespace();
    let mut n = 0;
    for tok in it.by_ref() {
        if n == N {
            return Err(Kind::WrongTokenCount {
                expected: N,
                found: N + 1 + it.count(),
            });
        }
        out[n] = tok;
        n += 1;
    }
    if n != N {
        return Err(Kind::WrongTokenCount {
            expected: N,
            found: n,
        });
    }
    Ok(out)
}

fn read_header<R: BufRead>(lines: &mut Lines<R>, name: &str) -> Result<Header> {
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

/// Reads the entry lines, calling `sink(i, j, v)` (0-based) once per stored entry, in file
/// order, without symmetric expansion. Then checks that no entry line follows.
fn read_body<T: Scalar, R: BufRead>(
    lines: &mut Lines<R>,
    name: &str,
    h: &Header,
    mut sink: impl FnMut(usize, usize, T) -> std::result::Result<(), Kind>,
) -> Result<()> {
    let truncated = |lines: &Lines<R>, found: usize| {
        market_err(
            name,
            lines.line,
            Kind::Truncated {
                expected: h.entries,
                found,
            },
        )
    };
    match h.format {
        Format::Coordinate => {
            // Which side of the diagonal off-diagonal entries of symmetric storage are on.
            let mut lower_side: Option<bool> = None;
            for k in 0..h.entries {
                let Some((line, s)) = lines.next_data(name)? else {
                    return Err(truncated(lines, k));
                };
                let entry = || -> std::result::Result<(usize, usize, T), Kind> {
                    let (ti, tj, tv) = if h.field == Field::Pattern {
                        let [ti, tj] = tokens::<2>(s)?;
                        (ti, tj, "")
                    } else {
                        let [ti, tj, tv] = tokens::<3>(s)?;
                        (ti, tj, tv)
                    };
                    let i = parse_index(ti, "row", h.nrows)?;
                    let j = parse_index(tj, "column", h.ncols)?;
                    let v = parse_value::<T>(tv, h.field)?;
                    Ok((i, j, v))
                };
                let (i, j, v) = entry().map_err(|kind| market_err(name, line, kind))?;
                if h.symmetry != Symmetry::General {
                    if i == j && h.symmetry == Symmetry::SkewSymmetric {
                        return Err(market_err(
                            name,
                            line,
                            invalid(format!(
                                "diagonal entry ({}, {}) in skew-symmetric storage",
                                i + 1,
                                j + 1
                            )),
                        ));
                    }
                    if i != j {
                        let lower = i > j;
                        match lower_side {
                            None => lower_side = Some(lower),
                            Some(side) if side != lower => {
                                return Err(market_err(
                                    name,
                                    line,
                                    invalid(format!(
                                        "entry ({}, {}) is {} the diagonal but earlier entries are {} it: \
                                         symmetric storage must hold one triangle only",
                                        i + 1,
                                        j + 1,
                                        if lower { "below" } else { "above" },
                                        if lower { "above" } else { "below" },
                                    )),
                                ));
                            }
                            Some(_) => {}
                        }
                    }
                }
                sink(i, j, v).map_err(|kind| market_err(name, line, kind))?;
            }
        }
        Format::Array => {
            let mut k = 0;
            // `entries == 0` also covers 0 x n arrays, whose column loop would be empty work.
            if h.entries > 0 {
                for j in 0..h.ncols {
                    let start = match h.symmetry {
                        Symmetry::General => 0,
                        Symmetry::Symmetric => j,
                        Symmetry::SkewSymmetric => j + 1,
                    };
                    for i in start..h.nrows {
                        let Some((line, s)) = lines.next_data(name)? else {
                            return Err(truncated(lines, k));
                        };
                        tokens::<1>(s)
                            .and_then(|[tv]| parse_value::<T>(tv, h.field))
                            .and_then(|v| sink(i, j, v))
                            .map_err(|kind| market_err(name, line, kind))?;
                        k += 1;
                    }
                }
            }
        }
    }
    if let Some((line, _)) = lines.next_data(name)? {
        return Err(market_err(
            name,
            line,
            Kind::TooManyEntries {
                expected: h.entries,
            },
        ));
    }
    Ok(())
}

fn open(path: &Path) -> Result<Box<dyn BufRead>> {
    let file = File::open(path).map_err(|e| KrylovError::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let magic = reader.fill_buf().map_err(|e| KrylovError::io(path, e))?;
    if magic.starts_with(&[0x1f, 0x8b]) {
        Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            MultiGzDecoder::new(reader),
        )))
    } else {
        Ok(Box::new(reader))
    }
}

/// Reads a Matrix Market matrix file (plain or gzip-compressed) into CSR form.
///
/// Symmetric and skew-symmetric storage is expanded, duplicates are summed, pattern entries
/// get the value 1 and array files keep their non-zero entries; see the [module
/// documentation](self) for the exact rules. Errors name the offending line.
pub fn read_matrix_market<T: Scalar>(path: impl AsRef<Path>) -> Result<Csr<T>> {
    let path = path.as_ref();
    read_matrix_market_from(open(path)?, &path.display().to_string())
}

/// Reads a Matrix Market matrix from any buffered reader (uncompressed text); `name` stands
/// for the source in error messages.
///
/// ```
/// use krylov_wgpu::matrix::read_matrix_market_from;
/// let text = "%%MatrixMarket matrix array real general\n2 2\n1.0\n0.0\n0.0\n2.0\n";
/// let a = read_matrix_market_from::<f32, _>(text.as_bytes(), "diag")?;
/// assert_eq!(a.nnz(), 2); // exact zeros of array files are dropped
/// assert_eq!(a.diagonal(), vec![1.0, 2.0]);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn read_matrix_market_from<T: Scalar, R: BufRead>(reader: R, name: &str) -> Result<Csr<T>> {
    let mut lines = Lines::new(reader);
    let h = read_header(&mut lines, name)?;
    let factor = if h.symmetry == Symmetry::General {
        1
    } else {
        2
    };
    let reserve = h.entries.saturating_mul(factor).min(MAX_RESERVE);
    let mut coo = Coo::<T>::with_capacity(h.nrows, h.ncols, reserve);
    let skip_zeros = h.format == Format::Array;
    let symmetry = h.symmetry;
    read_body(&mut lines, name, &h, |i, j, v: T| {
        if skip_zeros && v == T::zero() {
            return Ok(());
        }
        if coo.len() + 2 > u32::MAX as usize {
            return Err(invalid("more than 2^32 - 1 entries after expansion"));
        }
        let mut push = |i, j, v| coo.push(i, j, v).map_err(|e| invalid(e.to_string()));
        push(i, j, v)?;
        if i != j {
            match symmetry {
                Symmetry::General => {}
                Symmetry::Symmetric => push(j, i, v)?,
                Symmetry::SkewSymmetric => push(j, i, -v)?,
            }
        }
        Ok(())
    })?;
    coo.to_csr().map_err(|e| {
        let msg = match e {
            KrylovError::NonFinite { .. } => {
                format!("summing duplicate entries overflows {}", T::PRECISION)
            }
            other => other.to_string(),
        };
        market_err(name, lines.line.max(1), invalid(msg))
    })
}

/// Reads a vector (a right-hand side or a solution) from a Matrix Market file, plain or
/// gzip-compressed.
///
/// Accepted shapes are `n x 1` and `1 x n`, in array format (all `n` values, zeros included)
/// or coordinate format (missing entries are zero, duplicates are summed). Any other shape
/// is an error naming the size line.
pub fn read_vector<T: Scalar>(path: impl AsRef<Path>) -> Result<Vec<T>> {
    let path = path.as_ref();
    read_vector_from(open(path)?, &path.display().to_string())
}

/// Reads a Matrix Market vector from any buffered reader; see [`read_vector`].
///
/// ```
/// use krylov_wgpu::matrix::read_vector_from;
/// let text = "%%MatrixMarket matrix coordinate real general\n4 1 2\n1 1 1.5\n4 1 -2\n";
/// let x = read_vector_from::<f64, _>(text.as_bytes(), "x")?;
/// assert_eq!(x, vec![1.5, 0.0, 0.0, -2.0]);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn read_vector_from<T: Scalar, R: BufRead>(reader: R, name: &str) -> Result<Vec<T>> {
    let mut lines = Lines::new(reader);
    let h = read_header(&mut lines, name)?;
    if h.ncols != 1 && h.nrows != 1 {
        return Err(market_err(
            name,
            h.size_line,
            invalid(format!(
                "expected a vector (an n x 1 or 1 x n matrix), found {} x {}",
                h.nrows, h.ncols
            )),
        ));
    }
    let (n, by_row) = if h.ncols == 1 {
        (h.nrows, true)
    } else {
        (h.ncols, false)
    };
    let reserve = h.entries.min(MAX_RESERVE);
    // Array values arrive in index order; coordinate entries are scattered at the end, once
    // the file has proved to hold them.
    let mut dense: Vec<T> = Vec::new();
    let mut sparse: Vec<(usize, T)> = Vec::new();
    let array = h.format == Format::Array;
    if array {
        dense.reserve(reserve);
    } else {
        sparse.reserve(reserve);
    }
    read_body(&mut lines, name, &h, |i, j, v: T| {
        if array {
            dense.push(v);
        } else {
            sparse.push((if by_row { i } else { j }, v));
        }
        Ok(())
    })?;
    if array {
        return Ok(dense);
    }
    let last = lines.line.max(1);
    dense.try_reserve_exact(n).map_err(|_| {
        market_err(
            name,
            h.size_line,
            invalid(format!("cannot allocate a vector of length {n}")),
        )
    })?;
    dense.resize(n, T::zero());
    for (k, v) in sparse {
        dense[k] += v;
        if !dense[k].is_finite() {
            return Err(market_err(
                name,
                last,
                invalid(format!(
                    "summing duplicate entries overflows {}",
                    T::PRECISION
                )),
            ));
        }
    }
    Ok(dense)
}

fn check_finite_vector<T: Scalar>(x: &[T]) -> Result<()> {
    match x.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(KrylovError::NonFinite {
            what: "vector",
            index,
        }),
        None => Ok(()),
    }
}

fn write_matrix_impl<T: Scalar, W: Write>(writer: W, a: &Csr<T>) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 16, writer);
    writeln!(w, "%%MatrixMarket matrix coordinate real general")?;
    writeln!(
        w,
        "% written by krylov-wgpu {} ({} values)",
        env!("CARGO_PKG_VERSION"),
        T::PRECISION
    )?;
    writeln!(w, "{} {} {}", a.nrows(), a.ncols(), a.nnz())?;
    for i in 0..a.nrows() {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            writeln!(w, "{} {} {:e}", i + 1, c as usize + 1, v)?;
        }
    }
    w.flush()
}

fn write_vector_impl<T: Scalar, W: Write>(writer: W, x: &[T]) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 16, writer);
    writeln!(w, "%%MatrixMarket matrix array real general")?;
    writeln!(
        w,
        "% written by krylov-wgpu {} ({} values)",
        env!("CARGO_PKG_VERSION"),
        T::PRECISION
    )?;
    writeln!(w, "{} 1", x.len())?;
    for v in x {
        writeln!(w, "{v:e}")?;
    }
    w.flush()
}

/// Writes `a` as a `coordinate real general` Matrix Market file (1-based indices, rows in
/// order, values in the shortest `{:e}` form that reads back bit for bit).
pub fn write_matrix_market<T: Scalar>(path: impl AsRef<Path>, a: &Csr<T>) -> Result<()> {
    let path = path.as_ref();
    a.check_finite()?;
    let file = File::create(path).map_err(|e| KrylovError::io(path, e))?;
    write_matrix_impl(file, a).map_err(|e| KrylovError::io(path, e))
}

/// Writes `a` like [`write_matrix_market`] to any writer (buffered internally); I/O errors
/// name the path `<writer>`.
pub fn write_matrix_market_to<T: Scalar, W: Write>(writer: W, a: &Csr<T>) -> Result<()> {
    a.check_finite()?;
    write_matrix_impl(writer, a).map_err(|e| KrylovError::io("<writer>", e))
}

/// Writes `x` as an `array real general` `n x 1` Matrix Market file, values in the shortest
/// `{:e}` form that reads back bit for bit.
pub fn write_vector<T: Scalar>(path: impl AsRef<Path>, x: &[T]) -> Result<()> {
    let path = path.as_ref();
    check_finite_vector(x)?;
    let file = File::create(path).map_err(|e| KrylovError::io(path, e))?;
    write_vector_impl(file, x).map_err(|e| KrylovError::io(path, e))
}

/// Writes `x` like [`write_vector`] to any writer (buffered internally); I/O errors name the
/// path `<writer>`.
pub fn write_vector_to<T: Scalar, W: Write>(writer: W, x: &[T]) -> Result<()> {
    check_finite_vector(x)?;
    write_vector_impl(writer, x).map_err(|e| KrylovError::io("<writer>", e))
}
