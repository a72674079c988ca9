//! `_native.solve_batch`: many independent SPD systems in one batched CG run
//! (`solvers::batch::solve_batch_on`), with the GIL released, on the session the options
//! choose.

use krylov_wgpu::gpu::DevicePreference;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::batch::OwnedBatch;
use krylov_wgpu::solvers::batch::solve_batch_on;
use krylov_wgpu::solvers::{Method, SolveOptions};
use krylov_wgpu::{Precision, Result, Scalar};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{IntoPy, invalid_option};
use crate::matrix::{NativeMatrix, vector};
use crate::solve::{DeviceKey, check_known, get, parsed, session};

/// Solutions per system and right-hand side, in f64 or f32.
enum Solutions {
    F64(Vec<Vec<Vec<f64>>>),
    F32(Vec<Vec<Vec<f32>>>),
}

/// The option names `solve_batch` knows.
const KNOWN: &[&str] = &[
    "precision",
    "device",
    "adapter",
    "rtol",
    "atol",
    "maxiter",
    "precond",
    "batch",
];

/// Solves system i, `matrices[i]` x = b for every b of `rhs[i]` (lists of 1-D float64 or
/// float32 arrays); returns the solutions in the same nesting (float64, or float32 for an
/// f32 batch) and the batch report as JSON.
#[pyfunction]
pub fn solve_batch<'py>(
    py: Python<'py>,
    matrices: Vec<PyRef<'py, NativeMatrix>>,
    rhs: Vec<Vec<Bound<'py, PyAny>>>,
    options: &Bound<'py, PyDict>,
) -> PyResult<(Vec<Vec<Bound<'py, PyAny>>>, String)> {
    check_known(options, KNOWN)?;
    if matrices.len() != rhs.len() {
        return Err(invalid_option(format!(
            "{} matrices and {} right-hand-side lists: one list per matrix",
            matrices.len(),
            rhs.len()
        )));
    }
    let rhs: Vec<Vec<Vec<f64>>> = rhs
        .iter()
        .map(|bs| bs.iter().map(|b| vector(b, "b")).collect::<PyResult<_>>())
        .collect::<PyResult<_>>()?;
    let n_max = matrices.iter().map(|m| m.a64.nrows()).max().unwrap_or(1);
    let precision: Precision = parsed(options, "precision", "f64")?;
    let opts = SolveOptions {
        method: Method::Cg,
        rtol: get(options, "rtol", 1e-5)?,
        atol: get(options, "atol", 0.0)?,
        max_iter: get(options, "maxiter", 10 * n_max.max(1))?,
        precond: parsed(options, "precond", "none")?,
        batch: get(options, "batch", 0)?,
        ..Default::default()
    };
    let key = DeviceKey {
        preference: parsed::<DevicePreference>(options, "device", "auto")?,
        adapter: get(options, "adapter", None)?,
        precision,
        allow_mixed: false,
        no_f64: false,
        cpu_only: None,
    };
    let mats: Vec<&Csr<f64>> = matrices.iter().map(|m| &m.a64).collect();
    let run = py.detach(|| -> Result<(Solutions, String)> {
        let session = session(key)?;
        let _busy = session.busy.lock();
        Ok(match precision {
            Precision::F64 => {
                let (x, report) = batch_in::<f64>(&session, &mats, &rhs, &opts)?;
                (Solutions::F64(x), report)
            }
            Precision::F32 => {
                let (x, report) = batch_in::<f32>(&session, &mats, &rhs, &opts)?;
                (Solutions::F32(x), report)
            }
        })
    });
    let (x, report) = run.py()?;
    let out = match x {
        Solutions::F64(x) => to_arrays(py, x),
        Solutions::F32(x) => to_arrays(py, x),
    };
    Ok((out, report))
}

/// The batch in `T` on the session's device.
fn batch_in<T: Scalar>(
    session: &crate::solve::Session,
    mats: &[&Csr<f64>],
    rhs: &[Vec<Vec<f64>>],
    opts: &SolveOptions,
) -> Result<(Vec<Vec<Vec<T>>>, String)> {
    let batch = OwnedBatch::<T>::from_f64(mats, rhs)?;
    let sol = solve_batch_on(
        &session.device,
        session.engine.as_ref(),
        &batch.systems(),
        opts,
    )?;
    let json = serde_json::to_string(&sol.report)
        .map_err(|e| krylov_wgpu::KrylovError::InvalidOption(e.to_string()))?;
    Ok((sol.x, json))
}

/// Solutions as nested lists of NumPy arrays.
fn to_arrays<'py, T: numpy::Element>(
    py: Python<'py>,
    x: Vec<Vec<Vec<T>>>,
) -> Vec<Vec<Bound<'py, PyAny>>> {
    x.into_iter()
        .map(|xs| {
            xs.into_iter()
                .map(|x| x.into_pyarray(py).into_any())
                .collect()
        })
        .collect()
}
