//! The library's typed errors as the package's Python exceptions.
//!
//! The classes are defined in Python (`krylov_wgpu/_errors.py`) so that they can also derive
//! from the built-in exception a SciPy user catches (`InputError` is a `ValueError`,
//! `DeviceError` a `RuntimeError`, `UnsupportedError` a `NotImplementedError`); each carries
//! the library's variant name in `.kind`.

use krylov_wgpu::KrylovError;
use pyo3::prelude::*;

/// The exception class (in `krylov_wgpu._errors`) and variant name of `e`.
fn class_of(e: &KrylovError) -> (&'static str, &'static str) {
    use KrylovError as E;
    match e {
        E::Io { .. } => ("InputError", "Io"),
        E::MatrixMarket { .. } => ("InputError", "MatrixMarket"),
        E::NotSquare { .. } => ("InputError", "NotSquare"),
        E::DimensionMismatch { .. } => ("InputError", "DimensionMismatch"),
        E::InvalidMatrix(_) => ("InputError", "InvalidMatrix"),
        E::NonFinite { .. } => ("InputError", "NonFinite"),
        E::ZeroDiagonal { .. } => ("InputError", "ZeroDiagonal"),
        E::FormatRefused { .. } => ("InputError", "FormatRefused"),
        E::InvalidOption(_) => ("InputError", "InvalidOption"),
        E::MethodMismatch(_) => ("InputError", "MethodMismatch"),
        E::NoAdapter(_) => ("DeviceError", "NoAdapter"),
        E::NoUsableAdapter { .. } => ("DeviceError", "NoUsableAdapter"),
        E::MissingFeature { .. } => ("DeviceError", "MissingFeature"),
        E::BufferTooLarge { .. } => ("DeviceError", "BufferTooLarge"),
        E::Gpu(_) => ("DeviceError", "Gpu"),
        E::Unsupported(_) => ("UnsupportedError", "Unsupported"),
    }
}

/// `e` as an instance of its `krylov_wgpu` exception class, with the library's message.
pub fn to_py(e: KrylovError) -> PyErr {
    let (class, kind) = class_of(&e);
    let message = e.to_string();
    Python::attach(|py| {
        let made = py
            .import("krylov_wgpu._errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.call1((message.clone(), kind)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            // The package's Python half is missing (the extension imported alone).
            Err(_) => pyo3::exceptions::PyRuntimeError::new_err(message),
        }
    })
}

/// An option string the library could not parse, as `InputError` (kind `InvalidOption`).
pub fn invalid_option(message: impl Into<String>) -> PyErr {
    to_py(KrylovError::InvalidOption(message.into()))
}

/// `Result<T, KrylovError>` → `PyResult<T>`.
pub trait IntoPy<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for krylov_wgpu::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
