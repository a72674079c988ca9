"""Bad input raises the package's exception (also the built-in class SciPy users catch) with
the library's message and variant; nothing crashes the interpreter."""

import numpy as np
import pytest
import scipy.sparse as sp

import krylov_wgpu as kw
from conftest import load


def spd(n=10):
    return sp.csr_array(sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(n, n)))


def test_non_square():
    with pytest.raises(kw.InputError, match="not square") as e:
        kw.cg(sp.random(5, 4, density=0.5, random_state=1), np.ones(5))
    assert e.value.kind == "NotSquare" and isinstance(e.value, ValueError)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_matrix(bad):
    A = spd()
    A.data[3] = bad
    with pytest.raises(kw.InputError, match="non-finite|finite") as e:
        kw.cg(A, np.ones(10))
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_rhs(bad, device):
    b = np.ones(10)
    b[4] = bad
    with pytest.raises(kw.InputError) as e:
        kw.gmres(spd(), b, device=device)
    assert e.value.kind == "NonFinite"


def test_wrong_shapes():
    with pytest.raises(kw.InputError, match="dimension mismatch"):
        kw.cg(spd(), np.ones(9))
    with pytest.raises(kw.InputError, match="dimension mismatch"):
        kw.cg(spd(), np.ones(10), x0=np.ones(11))
    with pytest.raises(kw.InputError, match="1-D"):
        kw.cg(spd(), np.ones((2, 5, 1)))
    with pytest.raises(kw.UnsupportedError, match="right-hand sides"):
        kw.cg(spd(), np.ones((10, 2)))
    with pytest.raises(kw.InputError, match="2-D"):
        kw.cg(np.ones(10), np.ones(10))


def test_complex_and_non_numeric():
    with pytest.raises(kw.InputError, match="complex"):
        kw.cg(spd().astype(np.complex128), np.ones(10))
    with pytest.raises(kw.InputError, match="complex"):
        kw.cg(spd(), np.ones(10) * 1j)
    with pytest.raises(kw.InputError):
        kw.cg(np.array([["a", "b"], ["c", "d"]]), np.ones(2))


def test_options_are_checked():
    with pytest.raises(kw.InputError, match="unknown option `tolerance`"):
        kw.cg(spd(), np.ones(10), tolerance=1e-3)
    with pytest.raises(kw.InputError, match="method"):
        kw.solve(spd(), np.ones(10), method="lsqr")
    with pytest.raises(kw.InputError, match="precision"):
        kw.cg(spd(), np.ones(10), precision="f16")
    with pytest.raises(kw.InputError, match="device"):
        kw.cg(spd(), np.ones(10), device="tpu")
    with pytest.raises(kw.InputError, match="rtol"):
        kw.cg(spd(), np.ones(10), rtol="small")
    with pytest.raises(kw.InputError):
        kw.cg(spd(), np.ones(10), rtol=-1.0)


def test_cg_on_a_nonsymmetric_matrix(device):
    A, b = load("sherman4")
    with pytest.raises(kw.InputError, match="symmetric") as e:
        kw.cg(A, b, device=device)
    assert e.value.kind == "MethodMismatch"


def test_zero_diagonal_with_jacobi():
    A = sp.csr_array(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(kw.KrylovError) as e:
        kw.gmres(A, np.ones(2), M="jacobi", reorder="none", device="cpu")
    assert e.value.kind == "ZeroDiagonal"


def test_no_device_that_can_run_the_request():
    # f64 on "any GPU" with SHADER_F64 hidden: nothing can run it.
    with pytest.raises(kw.DeviceError) as e:
        kw.cg(spd(), np.ones(10), device="gpu", no_f64=True)
    assert e.value.kind in ("NoUsableAdapter", "NoAdapter") and isinstance(e.value, RuntimeError)


def test_breakdown_is_scipys_negative_info_not_an_exception(device):
    # A skew matrix: <r, r0*> = 0 at once for BiCG-type methods.
    A = sp.csr_array(np.array([[0.0, 1.0], [-1.0, 0.0]]))
    x, info, report = kw.bicg(A, np.array([1.0, 0.0]), reorder="none", device=device, full_output=True)
    assert not report.converged
    if report.reason_name == "breakdown":
        assert info == -10
    else:
        assert info > 0


def test_not_converged_error_carries_the_report(device):
    A, b = load("bcsstk01")
    with pytest.raises(kw.NotConvergedError) as e:
        kw.solve(A, b, rtol=1e-12, maxiter=5, device=device)
    report = e.value.report
    assert report.iterations == 5 and report.x.shape == b.shape and not report.converged
    assert kw.solve(A, b, rtol=1e-12, maxiter=5, device=device, check=False).iterations == 5
