"""Shared set-up: the repository's test matrices, and the two devices every solver test runs
on: the f64 CPU reference and a GPU (lavapipe in CI). With KRYLOV_REQUIRE_GPU=1 a missing GPU
fails the GPU cases instead of skipping them, as in the Rust tests."""

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import krylov_wgpu as kw

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


def load(name):
    """A test matrix as SciPy CSR (float64) and b = A·1."""
    A = sp.csr_array(scipy.io.mmread(DATA / f"{name}.mtx")).astype(np.float64)
    return A, A @ np.ones(A.shape[0])



@pytest.fixture(params=["cpu", "gpu"])
def device(request):
    if request.param == "gpu" and not kw.devices():
        if os.environ.get("KRYLOV_REQUIRE_GPU") == "1":
            pytest.fail("KRYLOV_REQUIRE_GPU=1 but wgpu finds no adapter")
        pytest.skip("no GPU adapter")
    return request.param


def true_relres(A, b, x):
    """|b - Ax| / |b| in float64."""
    x = np.asarray(x, dtype=np.float64)
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def scipy_iterations(solver, A, b, **kwargs):
    """(x, info, iterations) of a scipy.sparse.linalg solver, iterations counted by callback."""
    count = [0]

    def cb(*_):
        count[0] += 1

    if solver.__name__ == "gmres":
        kwargs.setdefault("callback_type", "pr_norm")
    x, info = solver(A, b, callback=cb, **kwargs)
    return x, info, count[0]
