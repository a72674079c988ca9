//! The entry lines after the size line, coordinate or array, with the checks of symmetric
//! storage; the readers decide what to do with each entry.

use std::io::BufRead;

use super::header::{Field, Format, Header, Symmetry};
use super::lines::Lines;
use super::parse::{parse_index, parse_value, tokens};
use super::{Kind, invalid, market_err};
use crate::base::error::Result;
use crate::base::scalar::Scalar;

/// Reads the entry lines, calling `sink(i, j, v)` (0-based) once per stored entry, in file
/// order, without symmetric expansion. Then checks that no entry line follows.
pub(super) fn read_body<T: Scalar, R: BufRead>(
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
