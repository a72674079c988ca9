"""kw.solve's report: everything the CLI's JSON has, the same numbers for the same solve,
counts on the GPU, the device and its reason."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import krylov_wgpu as kw
from conftest import DATA, load, true_relres

ROOT = Path(__file__).resolve().parents[2]


def krylov_binary():
    for profile in ("debug", "release"):
        path = ROOT / "target" / profile / "krylov"
        if path.exists():
            return path
    return None


@pytest.mark.skipif(krylov_binary() is None, reason="the krylov CLI is not built (cargo build)")
def test_report_has_every_field_of_the_cli_json():
    A, b = load("sherman4")
    args = ["solve", str(DATA / "sherman4.mtx"), "--method", "bicgstab", "--rtol", "1e-8", "--json", "--device", "cpu"]
    out = subprocess.run([krylov_binary(), *args], capture_output=True, text=True, check=True)
    cli = json.loads(out.stdout)
    report = kw.solve(kw.read_mtx(DATA / "sherman4.mtx"), b, method="bicgstab", rtol=1e-8, device="cpu")
    ours = report.to_dict()
    # The CLI adds the matrix's name and the error against its known solution (all ones).
    assert set(cli) - {"matrix", "solution_error"} == set(ours)
    for key in ("iterations", "converged", "reason", "n", "nnz", "method", "variant", "precision"):
        assert ours[key] == cli[key], key
    assert ours["relative_residual"] == pytest.approx(cli["relative_residual"], rel=1e-12)
    assert ours["residual_inf"] == pytest.approx(cli["residual_inf"], rel=1e-12)
    assert report.iterations == cli["iterations"] and report.converged


def test_report_fields_and_history(device):
    A, b = load("494_bus")
    report = kw.solve(A, b, rtol=1e-8, device=device)
    assert report.converged and report.info == 0 and report.reason_name == "converged"
    assert isinstance(report.history, np.ndarray) and report.history.dtype == np.float64
    assert len(report.history) == report.iterations + 1
    assert report.history[0] == pytest.approx(np.linalg.norm(b), rel=1e-12)
    assert report.relative_residual == pytest.approx(true_relres(A, b, report.x), rel=1e-6)
    assert report.residual_inf == pytest.approx(np.abs(b - A @ report.x).max(), rel=1e-6)
    assert report.device_reason
    assert report.device["kind"] == ("cpu" if device == "cpu" else "gpu")
    assert "converged" in repr(report)
    with pytest.raises(AttributeError, match="no field"):
        report.no_such_field


def test_gpu_counts_are_the_pipelined_kernels(device):
    if device == "cpu":
        pytest.skip("launch counts are a GPU matter")
    A, b = load("494_bus")
    report = kw.solve(A, b, rtol=1e-8, device=device, check_mode="paper")
    # Pipelined CG (paper 000): 2 launches and 1 host transfer per iteration in paper mode.
    assert report.dispatches_per_iteration == pytest.approx(2.0, abs=0.05)
    assert report.transfers_per_iteration == pytest.approx(1.0, abs=0.05)
    # Its two kernels each start one global reduction; paper mode waits for one readback.
    assert report.reductions_per_iteration == pytest.approx(2.0, abs=0.05)
    assert report.syncs_per_iteration == pytest.approx(1.0, abs=0.05)
    assert report.cycles is None and report.syncs_per_cycle is None
    device_mode = kw.solve(A, b, rtol=1e-8, device=device)
    assert device_mode.transfers_per_iteration < 0.5


def test_mixed_precision_report(device):
    A, b = load("494_bus")
    report = kw.solve(A, b, rtol=1e-10, precision="mixed", precond="jacobi", device=device)
    assert report.converged and report.relative_residual <= 1.01e-10
    assert report.refinement["outer_iterations"] >= 2
    assert report.x.dtype == np.float64
    assert true_relres(A, b, report.x) <= 1.01e-10


def test_devices_lists_what_the_cli_lists():
    adapters = kw.devices()
    assert isinstance(adapters, list)
    for a in adapters:
        assert {"index", "name", "backend", "software", "shader_f64", "auto_f64", "auto_f32"} <= set(a)
    pick = kw.auto_device("f64")
    assert pick["reason"]
    if os.environ.get("KRYLOV_REQUIRE_GPU") == "1":
        assert adapters, "KRYLOV_REQUIRE_GPU=1 but no adapter"
