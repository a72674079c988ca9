"""Input types: any SciPy sparse format, dense arrays, float32/float64, int32/int64 indices,
non-contiguous and (n, 1) vectors, duplicate entries."""

import numpy as np
import pytest
import scipy.sparse as sp

import krylov_wgpu as kw
from conftest import load, true_relres


def system():
    A, b = load("494_bus")
    return A, b


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "bsr", "lil", "dia", "dok"])
def test_every_scipy_format_gives_the_same_solution(fmt):
    A, b = system()
    x_ref, _ = kw.cg(A, b, rtol=1e-10, device="cpu")
    x, info = kw.cg(A.asformat(fmt), b, rtol=1e-10, device="cpu")
    assert info == 0
    np.testing.assert_array_equal(x, x_ref)
    # The old sparse-matrix classes too.
    x, info = kw.cg(sp.csr_matrix(A).asformat(fmt), b, rtol=1e-10, device="cpu")
    np.testing.assert_array_equal(x, x_ref)


def test_dense_input():
    A, b = load("mesh1e1")
    x_ref, _ = kw.cg(A, b, rtol=1e-10, device="cpu")
    x, info = kw.cg(A.toarray(), b, rtol=1e-10, device="cpu")
    assert info == 0
    np.testing.assert_array_equal(x, x_ref)
    # Fortran order, integer entries.
    x, info = kw.cg(np.asfortranarray(A.toarray()), b, rtol=1e-10, device="cpu")
    np.testing.assert_array_equal(x, x_ref)
    I = np.eye(5, dtype=np.int64) * 2
    x, info = kw.cg(I, np.ones(5), device="cpu")
    np.testing.assert_allclose(x, 0.5)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_index_widths(index_dtype):
    A, b = system()
    B = sp.csr_array((A.data, A.indices.astype(index_dtype), A.indptr.astype(index_dtype)), shape=A.shape)
    assert B.indices.dtype == index_dtype
    x, info = kw.cg(B, b, rtol=1e-10, device="cpu")
    x_ref, _ = kw.cg(A, b, rtol=1e-10, device="cpu")
    assert info == 0
    np.testing.assert_array_equal(x, x_ref)


def test_duplicates_are_summed_and_unsorted_indices_accepted():
    rows = np.array([0, 0, 1, 1, 0, 2, 2])
    cols = np.array([1, 0, 1, 0, 0, 2, 2])
    vals = np.array([-1.0, 2.0, 2.0, -1.0, 2.0, 1.5, 1.5])
    A = sp.coo_array((vals, (rows, cols)), shape=(3, 3))
    x, info = kw.cg(A, np.ones(3), rtol=1e-12, device="cpu")
    dense = A.toarray()
    assert info == 0
    np.testing.assert_allclose(dense @ x, np.ones(3), rtol=1e-10)


def test_float32_inputs_solve_in_f32(device):
    A, b = system()
    A32, b32 = A.astype(np.float32), b.astype(np.float32)
    x, info, report = kw.cg(A32, b32, rtol=1e-4, device=device, full_output=True)
    assert info == 0 and x.dtype == np.float32 and report.precision == "f32"
    assert true_relres(A, b, x) <= 1e-4 * 1.01
    # float64 anywhere: f64, as NumPy's promotion would.
    x, info, report = kw.cg(A32, b, rtol=1e-8, device=device, full_output=True)
    assert x.dtype == np.float64 and report.precision == "f64"
    # An explicit precision wins; mixed returns float64 at f64 accuracy (Jacobi: 494_bus is
    # badly scaled, and unpreconditioned f32 CG needs over 10·n iterations to 1e-10 on it).
    x, info, report = kw.cg(A32, b32, rtol=1e-10, M="jacobi", precision="mixed", device=device, full_output=True)
    assert info == 0 and x.dtype == np.float64 and report.refinement is not None
    assert true_relres(A32.astype(np.float64), b32.astype(np.float64), x) <= 1.01e-10


def test_non_contiguous_and_column_vectors(device):
    A, b = system()
    x_ref, _ = kw.cg(A, b, rtol=1e-10, device=device)
    wide = np.zeros(2 * b.size)
    wide[::2] = b
    x, info = kw.cg(A, wide[::2], rtol=1e-10, device=device)
    np.testing.assert_array_equal(x, x_ref)
    x, info = kw.cg(A, b.reshape(-1, 1), rtol=1e-10, device=device)
    np.testing.assert_array_equal(x, x_ref)
    x0 = np.zeros((A.shape[0], 3))[:, 1]
    x, info = kw.cg(A, b, x0=x0, rtol=1e-10, device=device)
    np.testing.assert_array_equal(x, x_ref)
    # b as a list.
    x, info = kw.cg(A, list(b), rtol=1e-10, device=device)
    np.testing.assert_array_equal(x, x_ref)
