"""kw.solve_batch: many SPD systems in one batched run, against SciPy's direct solves, on the
CPU reference and the GPU; several right-hand sides of one matrix; bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import krylov_wgpu as kw

from conftest import load


def laplacian(n, shift=0.0):
    return (sp.diags([(2.0 + shift) * np.ones(n), -np.ones(n - 1), -np.ones(n - 1)], [0, 1, -1])).tocsr()


def systems():
    mats = [laplacian(30), laplacian(57, 0.1), load("bcsstk01")[0], load("494_bus")[0]]
    rng = np.random.default_rng(7)
    rhs = [rng.standard_normal(A.shape[0]) for A in mats]
    rhs[1] = rng.standard_normal((57, 3))  # three right-hand sides of one matrix
    return mats, rhs


@pytest.mark.parametrize("precond", ["none", "jacobi"])
def test_batch_matches_direct_solves(device, precond):
    mats, rhs = systems()
    xs, report = kw.solve_batch(mats, rhs, rtol=1e-10, precond=precond, device=device, maxiter=5000)
    assert report["all_converged"], report["columns"]
    assert report["systems"] == 4 and report["columns_total"] == 6
    assert report["device"]["kind"] == device
    for A, b, x in zip(mats, rhs, xs):
        assert x.shape == b.shape
        exact = sla.spsolve(A.tocsc(), b)
        assert np.linalg.norm(x - exact) <= 1e-6 * np.linalg.norm(exact) * max(1, np.linalg.norm(exact))
        r = b - A @ x
        norms = np.linalg.norm(r, axis=0) / np.linalg.norm(b, axis=0)
        assert np.all(norms <= 1e-10 * 1.001)
    if device == "gpu":
        kernels = set(report["kernels"])
        assert kernels == {"batch_cg", "batch_cg_block"}
        assert report["counts"]["reductions"] == 0


def test_f32_batch_returns_float32_and_never_claims_a_false_convergence(device):
    mats, rhs = systems()
    mats = [A.astype(np.float32) for A in mats]
    rhs = [np.asarray(b, dtype=np.float32) for b in rhs]
    xs, report = kw.solve_batch(mats, rhs, rtol=1e-5, device=device, maxiter=5000)
    assert report["precision"] == "f32"
    assert all(x.dtype == np.float32 for x in xs)
    for c in report["columns"]:
        if c["converged"]:
            assert c["relative_residual"] <= 1e-5 * 1.001
        else:
            assert c["reason"] in ("residual_gap", "max_iterations"), c


def test_one_matrix_alone_and_a_non_spd_system_do_not_disturb_the_others():
    A = laplacian(40)
    x, report = kw.solve_batch(A, np.ones(40), rtol=1e-8)
    assert report["systems"] == 1 and np.linalg.norm(A @ x - 1) <= 1e-7 * np.sqrt(40)
    mats = [laplacian(20), -laplacian(20), laplacian(25)]
    xs, report = kw.solve_batch(mats, [np.ones(20), np.ones(20), np.ones(25)], rtol=1e-8)
    reasons = [c["reason"] for c in report["columns"]]
    assert reasons == ["converged", "not_spd", "converged"]
    alone, _ = kw.solve_batch(mats[2], np.ones(25), rtol=1e-8)
    np.testing.assert_array_equal(xs[2], alone)


def test_bad_batches_are_refused():
    with pytest.raises(kw.InputError):
        kw.solve_batch([laplacian(5), laplacian(6)], [np.ones(5)])
    with pytest.raises(kw.InputError):
        kw.solve_batch([laplacian(5)], [np.ones(4)])
    with pytest.raises(kw.KrylovError, match="jacobi or none"):
        kw.solve_batch([laplacian(5)], [np.ones(5)], precond="ilu0")
