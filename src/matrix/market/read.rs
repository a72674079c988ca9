//! The public readers: matrices into CSR form, vectors into `Vec`, from paths (plain or
//! gzip-compressed) or any buffered reader.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use super::body::read_body;
use super::header::{Format, Symmetry, read_header};
use super::lines::Lines;
use super::{invalid, market_err};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::{Coo, Csr};

/// Most entries reserved before they are read (the size line may lie).
const MAX_RESERVE: usize = 1 << 20;

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
/// documentation](super) for the exact rules. Errors name the offending line.
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

/// Reads a block of right-hand sides — an `n x k` Matrix Market matrix, array (all values,
/// column by column) or coordinate format (missing entries zero, duplicates summed) — as its
/// `k` columns. An `n x 1` file gives one column.
///
/// ```
/// use krylov_wgpu::matrix::market::read_columns_from;
/// let text = "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n";
/// let b = read_columns_from::<f64, _>(text.as_bytes(), "B")?;
/// assert_eq!(b, vec![vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]]);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn read_columns<T: Scalar>(path: impl AsRef<Path>) -> Result<Vec<Vec<T>>> {
    let path = path.as_ref();
    read_columns_from(open(path)?, &path.display().to_string())
}

/// Reads a block of right-hand sides from any buffered reader; see [`read_columns`].
pub fn read_columns_from<T: Scalar, R: BufRead>(reader: R, name: &str) -> Result<Vec<Vec<T>>> {
    let mut lines = Lines::new(reader);
    let h = read_header(&mut lines, name)?;
    let total = h
        .nrows
        .checked_mul(h.ncols)
        .filter(|t| *t <= isize::MAX as usize / 16);
    let Some(total) = total else {
        return Err(market_err(
            name,
            h.size_line,
            invalid(format!(
                "{} x {} right-hand sides do not fit in memory",
                h.nrows, h.ncols
            )),
        ));
    };
    let mut flat: Vec<T> = Vec::new();
    flat.try_reserve_exact(total).map_err(|_| {
        market_err(
            name,
            h.size_line,
            invalid(format!(
                "{} x {} right-hand sides do not fit in memory",
                h.nrows, h.ncols
            )),
        )
    })?;
    flat.resize(total, T::zero());
    let n = h.nrows;
    read_body(&mut lines, name, &h, |i, j, v: T| {
        flat[j * n + i] += v;
        Ok(())
    })?;
    Ok(flat.chunks(n.max(1)).map(|c| c.to_vec()).collect())
}
