"""devices=: CG, BiCGStab, GMRES and CA-GMRES split over two logical GPUs (the first adapter twice), BiCG's
two recurrences on two, against SciPy's solution, and the refusals."""

import os

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import krylov_wgpu as kw

from conftest import load, true_relres


@pytest.fixture
def gpu():
    if not kw.devices():
        if os.environ.get("KRYLOV_REQUIRE_GPU") == "1":
            pytest.fail("KRYLOV_REQUIRE_GPU=1 but wgpu finds no adapter")
        pytest.skip("no GPU adapter")


@pytest.mark.parametrize("method,name", [("cg", "494_bus"), ("bicgstab", "sherman4"),
                                             ("gmres", "sherman4"), ("cagmres", "sherman4")])
def test_two_devices_solve_as_scipy_does(gpu, method, name):
    A, b = load(name)
    rep = kw.solve(A, b, method=method, precond="jacobi", rtol=1e-8, devices=[0, 0],
                   maxiter=5000)
    assert rep.converged
    assert true_relres(A, b, rep.x) <= 1e-8 * 1.001
    reference = spla.spsolve(sp.csc_array(A), b)
    assert np.linalg.norm(rep.x - reference) <= 1e-3 * np.linalg.norm(reference)
    devices = rep.devices["devices"]
    assert len(devices) == 2
    assert sum(d["rows"] for d in devices) == A.shape[0]
    assert rep.devices["exchange_values_per_iteration"] > 0


def test_bicg_puts_its_two_recurrences_on_two_devices(gpu):
    A, b = load("sherman4")
    rep = kw.solve(A, b, method="bicg", precond="ilu0", rtol=1e-8, devices=[0, 0])
    assert rep.converged
    assert true_relres(A, b, rep.x) <= 1e-8 * 1.001
    reference = spla.spsolve(sp.csc_array(A), b)
    assert np.linalg.norm(rep.x - reference) <= 1e-3 * np.linalg.norm(reference)
    # Both devices hold every row; p~ and r~ cross once per iteration each.
    devices = rep.devices["devices"]
    assert [d["rows"] for d in devices] == [A.shape[0], A.shape[0]]
    assert rep.devices["exchange_values_per_iteration"] == 2 * A.shape[0]
    with pytest.raises(kw.KrylovError, match="two devices"):
        kw.solve(A, b, method="bicg", devices=[0, 0, 0])


def test_float32_and_a_string_list(gpu):
    A, b = load("mesh1e1")
    rep = kw.solve(A.astype(np.float32), b.astype(np.float32), rtol=1e-5, devices="0,0")
    assert rep.converged and rep.x.dtype == np.float32
    assert len(rep.devices["devices"]) == 2


def test_what_several_devices_do_not_run_is_refused(gpu):
    A, b = load("mesh1e1")
    with pytest.raises(kw.InputError):
        kw.solve(A, b, devices="two")
    with pytest.raises(kw.InputError):
        kw.solve(A, b, devices=[])
    with pytest.raises(kw.KrylovError, match="cholqr2"):
        kw.solve(A, b, method="cagmres", tsqr="caqr", devices=[0, 0])
    with pytest.raises(kw.KrylovError, match="mixed"):
        kw.solve(A, b, precision="mixed", devices=[0, 0])
