//! The tokens of a line: counts, 1-based indices and values in the target precision.

use super::Kind;
use super::header::Field;
use crate::base::scalar::{Precision, Scalar};

/// Optional sign followed by at least one ASCII digit and nothing else.
fn is_integer_syntax(tok: &str) -> bool {
    let digits = tok
        .strip_prefix('-')
        .or_else(|| tok.strip_prefix('+'))
        .unwrap_or(tok);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A non-negative count or dimension from the size line.
pub(super) fn parse_count(tok: &str, what: &str) -> std::result::Result<u64, Kind> {
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
pub(super) fn parse_index(
    tok: &str,
    what: &'static str,
    max: usize,
) -> std::result::Result<usize, Kind> {
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

pub(super) fn parse_value<T: Scalar>(tok: &str, field: Field) -> std::result::Result<T, Kind> {
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
pub(super) fn tokens<const N: usize>(s: &str) -> std::result::Result<[&str; N], Kind> {
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
