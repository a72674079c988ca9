"""kw.Matrix: converted once, kept on the device between solves; Matrix Market I/O."""

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import krylov_wgpu as kw
from conftest import DATA, load


def test_handle_reuses_the_upload_and_the_preconditioner(device):
    A, b = load("sherman4")
    M = kw.Matrix(A)
    assert M.shape == A.shape and M.nnz == A.nnz and M.dtype == np.float64
    first = kw.solve(M, b, method="bicgstab", precond="ilu0", rtol=1e-8, device=device)
    second = kw.solve(M, 2.0 * b, method="bicgstab", precond="ilu0", rtol=1e-8, device=device)
    alone = kw.solve(A, 2.0 * b, method="bicgstab", precond="ilu0", rtol=1e-8, device=device)
    assert first.converged and second.converged
    np.testing.assert_array_equal(second.x, alone.x)
    assert second.iterations == alone.iterations
    if device == "gpu":
        up = lambda r: r.counts["bytes_uploaded"]
        # The second solve of the handle skips A (matrix_bytes) and the ILU factors.
        assert up(first) - up(second) >= 2 * first.matrix_bytes
        assert up(alone) == up(first)


def test_handle_in_f32_and_mixed(device):
    A, b = load("494_bus")
    M = kw.Matrix(A, dtype=np.float32)
    r32 = kw.solve(M, b.astype(np.float32), rtol=1e-4, device=device)
    assert r32.precision == "f32" and r32.x.dtype == np.float32
    for _ in range(2):
        mixed = kw.solve(M, b, rtol=1e-10, precision="mixed", precond="jacobi", device=device)
        assert mixed.converged and mixed.relative_residual <= 1.01e-10


def test_to_scipy_and_matvec():
    A, _ = load("west0479")
    M = kw.Matrix(A)
    B = M.to_scipy()
    assert (abs(B - A) > 0).nnz == 0
    x = np.random.default_rng(7).standard_normal(A.shape[1])
    np.testing.assert_allclose(M @ x, A @ x, rtol=1e-13, atol=1e-13 * abs(A).max())
    assert not M.is_symmetric() and kw.Matrix(load("494_bus")[0]).is_symmetric()


def test_matrix_market_round_trip(tmp_path):
    A, b = load("sherman4")
    kw.write_mtx(tmp_path / "a.mtx", A)
    back = kw.read_mtx(tmp_path / "a.mtx")
    assert (abs(back.to_scipy() - A) > 0).nnz == 0
    # What SciPy reads from our file is the same matrix.
    assert (abs(sp.csr_array(scipy.io.mmread(tmp_path / "a.mtx")) - A) > 0).nnz == 0
    kw.write_vector(tmp_path / "b.mtx", b)
    np.testing.assert_array_equal(kw.read_vector(tmp_path / "b.mtx"), b)
    rhs = kw.read_vector(DATA / "sherman4_rhs.mtx")
    assert rhs.shape == (A.shape[0],)
    assert kw.read_mtx(DATA / "bcsstk01.mtx.gz").shape == (48, 48)


def test_io_errors(tmp_path):
    with pytest.raises(kw.InputError) as e:
        kw.read_mtx(tmp_path / "missing.mtx")
    assert e.value.kind == "Io"
    (tmp_path / "bad.mtx").write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")
    with pytest.raises(kw.InputError) as e:
        kw.read_mtx(tmp_path / "bad.mtx")
    assert e.value.kind == "MatrixMarket"
