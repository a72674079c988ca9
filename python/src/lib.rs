//! `krylov_wgpu._native`: the Rust side of the Python package. The SciPy-shaped API
//! (`kw.cg`, `kw.gmres`, …), input conversion and the report object live in Python
//! (`python/krylov_wgpu/`); this module holds the matrix on the Rust side
//! ([`matrix::NativeMatrix`]), runs solves with the GIL released ([`solve`]) and turns the
//! library's errors into the package's exception classes ([`errors`]).

mod batch;
mod errors;
mod matrix;
mod monitor;
mod precond_auto;
mod solve;

use pyo3::prelude::*;

/// The compiled half of `krylov_wgpu` (import `krylov_wgpu`, not this).
#[pymodule]
mod _native {
    #[pymodule_export]
    use super::batch::solve_batch;
    #[pymodule_export]
    use super::matrix::{NativeMatrix, read_mtx, read_vector, write_mtx, write_vector};
    #[pymodule_export]
    use super::solve::{devices, solve};

    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        Ok(())
    }
}
