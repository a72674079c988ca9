"""SciPy's calling conventions: positional and keyword forms, x0, maxiter and info, M,
callback, GMRES's restart and cycle-counted maxiter."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import krylov_wgpu as kw
from conftest import load, true_relres


def poisson(n=30):
    """2-D Poisson (5-point) on an n×n grid: SPD, n² unknowns."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return sp.csr_array(sp.kron(sp.eye(n), t) + sp.kron(t, sp.eye(n)))


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres", "bicg"])
def test_positional_and_keyword_forms_agree(method, device):
    A = poisson()
    b = np.ones(A.shape[0])
    f = getattr(kw, method)
    x1, i1 = f(A, b, None, rtol=1e-9, device=device)
    x2, i2 = f(A=A, b=b, x0=None, rtol=1e-9, atol=0.0, device=device)
    assert i1 == i2 == 0
    np.testing.assert_array_equal(x1, x2)
    assert true_relres(A, b, x1) <= 1.01e-9
    # SciPy's signature: everything after x0 is keyword-only.
    with pytest.raises(TypeError):
        f(A, b, None, 1e-9)


def test_defaults_are_scipys(device):
    A = poisson()
    b = np.ones(A.shape[0])
    # rtol = 1e-5 and atol = 0 by default, as in SciPy.
    x, info, report = kw.cg(A, b, device=device, full_output=True)
    assert info == 0
    assert 1e-7 < report.relative_residual <= 1.01e-5
    x_ref, info_ref = sla.cg(A, b)
    assert info_ref == 0 and true_relres(A, b, x_ref) <= 1e-5


def test_x0_is_used(device):
    A = poisson()
    x_true = np.linspace(0.0, 1.0, A.shape[0])
    b = A @ x_true
    _, info, report = kw.cg(A, b, x0=x_true, rtol=1e-8, device=device, full_output=True)
    assert info == 0 and report.iterations == 0
    _, _, cold = kw.cg(A, b, rtol=1e-8, device=device, full_output=True)
    assert cold.iterations > 10


def test_maxiter_gives_scipys_positive_info(device):
    A, b = load("bcsstk01")
    x, info, report = kw.cg(A, b, rtol=1e-12, maxiter=7, device=device, full_output=True)
    assert info == 7 == report.iterations
    assert report.reason_name == "max_iterations" and not report.converged
    assert np.isfinite(x).all()
    _, info_ref = sla.cg(A, b, rtol=1e-12, maxiter=7)
    assert info_ref == 7


def test_gmres_maxiter_counts_restart_cycles(device):
    A, b = load("sherman4")
    _, info, report = kw.gmres(A, b, rtol=1e-12, restart=10, maxiter=3, device=device, full_output=True)
    assert info == 30 == report.iterations
    _, _, report = kw.gmres(A, b, rtol=1e-8, restart=50, device=device, full_output=True)
    assert report.converged
    assert all("restart" not in note or "50" in note for note in report.notes)


def test_callback_sees_every_iteration(device):
    A = poisson()
    b = np.ones(A.shape[0])
    seen = []
    _, info, report = kw.cg(A, b, rtol=1e-8, callback=seen.append, device=device, full_output=True)
    assert info == 0
    assert len(seen) == report.iterations
    # The residual norms the solver tracked, in order (history[0] is the initial one).
    np.testing.assert_allclose(seen, report.history[1 : report.iterations + 1], rtol=1e-12)
    seen_gmres = []
    kw.gmres(A, b, rtol=1e-8, callback=seen_gmres.append, callback_type="pr_norm", device=device)
    assert len(seen_gmres) > 0
    with pytest.raises(kw.UnsupportedError):
        kw.gmres(A, b, callback=print, callback_type="x", device=device)


def test_a_raising_callback_stops_the_solve(device):
    A = poisson()
    b = np.ones(A.shape[0])
    calls = []

    def stop(rk):
        calls.append(rk)
        if len(calls) == 3:
            raise StopIteration("enough")

    with pytest.raises(StopIteration, match="enough"):
        kw.cg(A, b, rtol=1e-12, callback=stop, device=device)
    assert len(calls) == 3


@pytest.mark.parametrize("M", ["jacobi", "ilu0"])
def test_m_names_a_preconditioner(M, device):
    A, b = load("sherman4")
    x, info, report = kw.bicgstab(A, b, rtol=1e-8, M=M, device=device, full_output=True)
    assert info == 0 and report.preconditioner["kind"] == M
    assert true_relres(A, b, x) <= 1.01e-8
    x2, info2 = kw.bicgstab(A, b, rtol=1e-8, precond=M, device=device)
    np.testing.assert_array_equal(x, x2)


def test_m_as_an_operator_is_refused_with_the_alternative():
    A = poisson(8)
    M = sp.diags(1.0 / A.diagonal())
    with pytest.raises(kw.UnsupportedError, match="precond="):
        kw.cg(A, np.ones(A.shape[0]), M=M)
    with pytest.raises(NotImplementedError):
        kw.cg(A, np.ones(A.shape[0]), M=sla.aslinearoperator(M))


def test_cagmres_through_solve(device):
    """CA-GMRES(s, m) with its options; its report says what ran and counts fewer global
    reductions per iteration than GMRES."""
    A, b = load("sherman4")
    # The monomial basis: no standard GMRES first cycle, so every block is a CA block.
    report = kw.solve(A, b, method="cagmres", rtol=1e-8, restart=30, s_step=5, tsqr="cholqr2",
                      basis="monomial", precond="ilu0", device=device)
    assert report.converged and true_relres(A, b, report.x) <= 1.01e-8
    assert report.method == "cagmres"
    assert report.cagmres["options"] == {"s": 5, "m": 30, "basis": "monomial", "tsqr": "cholqr2"}
    gmres = kw.solve(A, b, method="gmres", rtol=1e-8, restart=30, precond="ilu0", device=device)
    assert report.reductions_per_iteration < gmres.reductions_per_iteration
    with pytest.raises(kw.InputError, match="multiple of s"):
        kw.solve(A, b, method="cagmres", restart=30, s_step=4, device=device)


def test_method_auto_takes_cg_or_gmres_and_recovers_from_an_indefinite_matrix(device):
    # solve()'s default method: CG for a symmetric matrix with a positive diagonal ...
    A = poisson(12)
    b = A @ np.ones(A.shape[0])
    report = kw.solve(A, b, rtol=1e-8, device=device)
    assert report.method == "cg"
    assert any(n.startswith("method auto: A is symmetric") for n in report.notes)
    # ... GMRES for a nonsymmetric one ...
    N, c = load("sherman4")
    report = kw.solve(N, c, rtol=1e-6, device=device)
    assert report.method == "gmres" and report.converged
    assert "method auto: A is not symmetric: GMRES" in report.notes
    assert true_relres(N, c, report.x) <= 1.01e-6
    # ... and GMRES again when CG finds a symmetric matrix with a positive diagonal
    # indefinite (2-D Poisson shifted by 2: eigenvalues in (-2, 6), diagonal 2).
    S = sp.csr_array(poisson(12) - 2.0 * sp.eye(144))
    assert S.diagonal().min() > 0
    report = kw.solve(S, S @ np.ones(144), rtol=1e-8, device=device)
    assert report.method == "gmres" and report.converged
    assert any(n.startswith("method auto: CG found <p, Ap> <= 0") for n in report.notes)
    # An explicit method is kept.
    with pytest.raises(kw.InputError, match="symmetric"):
        kw.solve(N, c, method="cg", device=device)


def test_precond_auto_solves_a_stagnating_system_again_with_ilut(device):
    # west0479 (nonsymmetric): GMRES(30) without a preconditioner stagnates on it, so
    # precond="auto" solves it again with ILUT and says so, as the CLI's --precond auto.
    A, b = load("west0479")
    report = kw.solve(A, b, rtol=1e-6, precond="auto", device=device)
    assert report.method == "gmres" and report.converged
    assert report.preconditioner["kind"] == "ilut"
    assert true_relres(A, b, report.x) <= 1.01e-6
    # The method-auto note first, then the retry's.
    assert report.notes[0] == "method auto: A is not symmetric: GMRES"
    note = report.notes[1]
    assert note.startswith("precond auto: gmres without a preconditioner "), report.notes
    assert ", at iteration " in note and note.endswith(": solved again with ilut"), note
    # Mixed-precision refinement stalls without one (its f32 inner solves stagnate) and is
    # solved again alike.
    mixed = kw.solve(A, b, rtol=1e-6, precond="auto", precision="mixed", device=device)
    assert mixed.converged and mixed.preconditioner["kind"] == "ilut", mixed.notes
    assert mixed.refinement is not None
    assert true_relres(A, b, mixed.x) <= 1.01e-6
    assert any(n.startswith("precond auto: gmres without a preconditioner stopped (stagnation)")
               for n in mixed.notes), mixed.notes
    # precond="none" (the default) keeps the failure (NotConvergedError with the report).
    with pytest.raises(kw.NotConvergedError) as e:
        kw.solve(A, b, rtol=1e-6, precond="none", device=device)
    none = e.value.report
    assert none.reason_name == "stagnation" and none.preconditioner is None
    assert not any(n.startswith("precond auto:") for n in none.notes)
    # A maxiter the user set is kept: no retry.
    limited = kw.solve(A, b, rtol=1e-6, precond="auto", maxiter=20, device=device, check=False)
    assert limited.reason_name == "max_iterations" and limited.iterations == 20
    assert limited.preconditioner is None
    assert not any(n.startswith("precond auto:") for n in limited.notes)
    # SciPy's shape: M="auto" (GMRES's default maxiter, in restart cycles, is no user limit).
    x, info, rep = kw.gmres(A, b, rtol=1e-6, restart=30, M="auto", device=device,
                            full_output=True)
    assert info == 0 and rep.preconditioner["kind"] == "ilut"
    assert any(n.startswith("precond auto: gmres") for n in rep.notes)
