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
//!
//! The code: `header.rs` reads the banner and the size line, `parse.rs` the tokens of a line,
//! `lines.rs` the lines themselves (comments, length limit, read failures), `body.rs` the
//! entry lines; `read.rs` (with gzip detection) and `write.rs` hold the public readers and
//! writers.
//!
//! [`Csr`]: super::Csr
//! [`Coo`]: super::Coo

mod body;
mod header;
mod lines;
mod parse;
mod read;
mod write;

pub use read::{
    read_columns, read_columns_from, read_matrix_market, read_matrix_market_from, read_vector,
    read_vector_from,
};
pub use write::{write_matrix_market, write_matrix_market_to, write_vector, write_vector_to};

use crate::base::error::{KrylovError, MarketErrorKind};

type Kind = MarketErrorKind;

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
