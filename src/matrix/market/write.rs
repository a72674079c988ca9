//! The public writers: `coordinate real general` matrices and `array real general` vectors,
//! values that read back bit for bit.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

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
