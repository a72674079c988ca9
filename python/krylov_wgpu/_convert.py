"""Inputs as the Rust side takes them: any SciPy sparse matrix or array, a dense NumPy array
or a ``kw.Matrix`` becomes CSR arrays once, with vectorised NumPy operations only."""

import numpy as np

from . import _native
from ._errors import InputError, UnsupportedError


def _real_values(data, what):
    data = np.asarray(data)
    if np.iscomplexobj(data):
        raise InputError(f"{what} is complex: krylov_wgpu solves real systems", "InvalidMatrix")
    if data.dtype not in (np.float64, np.float32):
        if not (np.issubdtype(data.dtype, np.number) or data.dtype == np.bool_):
            raise InputError(f"{what} has dtype {data.dtype}, not a real number type", "InvalidMatrix")
        data = data.astype(np.float64)
    return np.ascontiguousarray(data)


def _index_array(a):
    a = np.asarray(a)
    if a.dtype not in (np.int32, np.int64):
        if not np.issubdtype(a.dtype, np.integer):
            raise InputError(f"index array has dtype {a.dtype}, not an integer type", "InvalidMatrix")
        a = a.astype(np.int64)
    return np.ascontiguousarray(a)


def csr_arrays(A):
    """(indptr, indices, data, shape, dtype) of ``A`` (SciPy sparse or dense), canonical:
    column indices sorted and unique in each row."""
    if hasattr(A, "tocsr") and hasattr(A, "nnz"):
        csr = A.tocsr()
        if not getattr(csr, "has_canonical_format", True):
            csr = csr.copy()
            csr.sum_duplicates()
        dtype = np.dtype(csr.dtype)
        data = _real_values(csr.data, "A")
        return _index_array(csr.indptr), _index_array(csr.indices), data, csr.shape, dtype
    if hasattr(A, "matvec") and hasattr(A, "shape"):
        raise UnsupportedError(
            "A is an operator (a LinearOperator or similar): krylov_wgpu needs the matrix "
            "itself (a SciPy sparse matrix, a NumPy array or kw.Matrix) to store it on the GPU",
            "Unsupported",
        )
    dense = np.asarray(A)
    if dense.ndim != 2:
        raise InputError(f"A must be 2-D, got an array of shape {dense.shape}", "InvalidMatrix")
    dtype = dense.dtype
    dense = _real_values(dense, "A")
    rows, cols = np.nonzero(dense)
    indptr = np.zeros(dense.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
    return indptr, cols.astype(np.int64), np.ascontiguousarray(dense[rows, cols]), dense.shape, dtype


def native_matrix(A):
    """(``_native.NativeMatrix``, the input's dtype) for any accepted ``A``."""
    from ._api import Matrix  # the handle wraps a native matrix already

    if isinstance(A, Matrix):
        return A._native, A.dtype
    indptr, indices, data, shape, dtype = csr_arrays(A)
    return _native.NativeMatrix(indptr, indices, data, tuple(int(s) for s in shape)), dtype


def vector(v, what, n=None):
    """``v`` as a contiguous 1-D float64/float32 array ((n, 1) columns flattened)."""
    if v is None:
        return None
    arr = np.asarray(v)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    elif arr.ndim == 2:
        raise UnsupportedError(
            f"{what} has {arr.shape[1]} columns: for several right-hand sides at once use "
            "kw.solve_batch (SPD systems, batched CG), or solve them one at a time (a kw.Matrix "
            "keeps A on the device)",
            "Unsupported",
        )
    if arr.ndim != 1:
        raise InputError(f"{what} must be 1-D, got shape {arr.shape}", "DimensionMismatch")
    if n is not None and arr.shape[0] != n:
        raise InputError(
            f"dimension mismatch: {what} has {arr.shape[0]} entries, A has {n} rows",
            "DimensionMismatch",
        )
    return _real_values(arr, what)
