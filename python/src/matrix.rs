//! The matrix on the Rust side of `kw.Matrix`: CSR in f64 (and its f32 copy, made once),
//! built from NumPy arrays without a Python loop, plus what solves of it keep on a device.

use std::sync::{Mutex, OnceLock};

use krylov_wgpu::matrix::{Csr, market};
use krylov_wgpu::solvers::KeptUploads;
use krylov_wgpu::{KrylovError, Result};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::errors::IntoPy;

/// A square-or-not sparse matrix in CSR form (f64 values, u32 indices), immutable once made.
/// `kw.Matrix` wraps one; solves of it on a device keep A's upload and the preconditioner
/// there (`kept`) until the matrix is dropped, so repeated solves pay the set-up once.
#[pyclass(frozen, module = "krylov_wgpu._native")]
pub struct NativeMatrix {
    pub a64: Csr<f64>,
    a32: OnceLock<Csr<f32>>,
    symmetric: OnceLock<bool>,
    /// What solves left on each device session (by session id): A uploaded in its format, M.
    pub kept: Mutex<Vec<(usize, KeptUploads)>>,
}

impl NativeMatrix {
    pub fn new(a64: Csr<f64>) -> Self {
        NativeMatrix {
            a64,
            a32: OnceLock::new(),
            symmetric: OnceLock::new(),
            kept: Mutex::new(Vec::new()),
        }
    }

    /// Whether A is symmetric to CG's tolerance (1e-10 relative), checked once.
    pub fn symmetric(&self) -> bool {
        *self.symmetric.get_or_init(|| self.a64.is_symmetric(1e-10))
    }

    /// The f32 copy (made on first use, then the same one: uploads kept for it stay valid).
    pub fn a32(&self) -> Result<&Csr<f32>> {
        if let Some(a) = self.a32.get() {
            return Ok(a);
        }
        let a = self.a64.cast::<f32>()?;
        Ok(self.a32.get_or_init(|| a))
    }
}

/// An index array of either integer width as u32, refusing negative or too large entries.
fn indices(array: &Bound<'_, PyAny>, what: &'static str) -> Result<Vec<u32>> {
    let bad = |i: usize, v: i64| {
        KrylovError::InvalidMatrix(format!(
            "{what}[{i}] = {v} is not an index from 0 to {}",
            u32::MAX
        ))
    };
    let convert = |values: &[i64]| -> Result<Vec<u32>> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| u32::try_from(v).map_err(|_| bad(i, v)))
            .collect()
    };
    if let Ok(a) = array.extract::<PyReadonlyArray1<'_, i32>>() {
        let a = a.as_slice().map_err(|_| not_contiguous(what))?;
        return a
            .iter()
            .enumerate()
            .map(|(i, &v)| u32::try_from(v).map_err(|_| bad(i, v.into())))
            .collect();
    }
    if let Ok(a) = array.extract::<PyReadonlyArray1<'_, i64>>() {
        return convert(a.as_slice().map_err(|_| not_contiguous(what))?);
    }
    Err(KrylovError::InvalidMatrix(format!(
        "{what} must be a 1-D int32 or int64 NumPy array"
    )))
}

fn not_contiguous(what: &str) -> KrylovError {
    KrylovError::InvalidMatrix(format!("{what} must be a contiguous array"))
}

/// A value array (f64 or f32) as f64.
fn values(array: &Bound<'_, PyAny>, what: &'static str) -> Result<Vec<f64>> {
    if let Ok(a) = array.extract::<PyReadonlyArray1<'_, f64>>() {
        return Ok(a.as_slice().map_err(|_| not_contiguous(what))?.to_vec());
    }
    if let Ok(a) = array.extract::<PyReadonlyArray1<'_, f32>>() {
        let a = a.as_slice().map_err(|_| not_contiguous(what))?;
        return Ok(a.iter().map(|&v| f64::from(v)).collect());
    }
    Err(KrylovError::InvalidMatrix(format!(
        "{what} must be a 1-D float64 or float32 NumPy array"
    )))
}

/// A right-hand side or initial guess (f64 or f32, 1-D) as f64.
pub fn vector(array: &Bound<'_, PyAny>, what: &'static str) -> PyResult<Vec<f64>> {
    values(array, what).map_err(|_| {
        crate::errors::to_py(KrylovError::InvalidOption(format!(
            "{what} must be a 1-D float64 or float32 array"
        )))
    })
}

#[pymethods]
impl NativeMatrix {
    /// CSR arrays (indptr, indices: int32 or int64; data: float64 or float32) and the shape.
    /// Column indices must be sorted and unique within each row (SciPy's
    /// `sum_duplicates()` gives that); values must be finite.
    #[new]
    fn py_new(
        indptr: &Bound<'_, PyAny>,
        col_indices: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        shape: (usize, usize),
    ) -> PyResult<Self> {
        let row_ptr = indices(indptr, "indptr").py()?;
        let col_idx = indices(col_indices, "indices").py()?;
        let values = values(data, "data").py()?;
        let a = Csr::new(shape.0, shape.1, row_ptr, col_idx, values).py()?;
        Ok(NativeMatrix::new(a))
    }

    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.a64.nrows(), self.a64.ncols())
    }

    #[getter]
    fn nnz(&self) -> usize {
        self.a64.nnz()
    }

    /// (indptr, indices, data) as int64, int64 and float64 arrays: a `scipy.sparse.csr_array`.
    #[allow(clippy::type_complexity)]
    fn csr_arrays<'py>(
        &self,
        py: Python<'py>,
    ) -> (
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<f64>>,
    ) {
        let a = &self.a64;
        let wide = |v: &[u32]| v.iter().map(|&i| i64::from(i)).collect::<Vec<_>>();
        (
            wide(a.row_ptr()).into_pyarray(py),
            wide(a.col_idx()).into_pyarray(py),
            a.values().to_vec().into_pyarray(py),
        )
    }

    /// y = A·x in f64 on the host.
    fn matvec<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = vector(x, "x")?;
        Ok(self.a64.mul_vec(&x).py()?.into_pyarray(py))
    }

    /// Whether A equals its transpose within `tol` (relative), as CG's input check asks.
    #[pyo3(signature = (tol = 1e-10))]
    fn is_symmetric(&self, py: Python<'_>, tol: f64) -> bool {
        py.detach(|| self.a64.is_symmetric(tol))
    }
}

/// Reads a Matrix Market matrix (coordinate or array; real, integer or pattern; general,
/// symmetric or skew-symmetric; `.gz` too).
#[pyfunction]
pub fn read_mtx(py: Python<'_>, path: std::path::PathBuf) -> PyResult<NativeMatrix> {
    let a = py
        .detach(|| market::read_matrix_market::<f64>(&path))
        .py()?;
    Ok(NativeMatrix::new(a))
}

/// Writes a matrix as a Matrix Market coordinate file.
#[pyfunction]
pub fn write_mtx(py: Python<'_>, path: std::path::PathBuf, matrix: &NativeMatrix) -> PyResult<()> {
    py.detach(|| market::write_matrix_market(&path, &matrix.a64))
        .py()
}

/// Reads a Matrix Market vector (array format, or an n × 1 coordinate matrix).
#[pyfunction]
pub fn read_vector<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let v = py.detach(|| market::read_vector::<f64>(&path)).py()?;
    Ok(v.into_pyarray(py))
}

/// Writes a vector as a Matrix Market array file.
#[pyfunction]
pub fn write_vector(path: std::path::PathBuf, x: &Bound<'_, PyAny>) -> PyResult<()> {
    let x = vector(x, "x")?;
    market::write_vector(&path, &x).py()
}
