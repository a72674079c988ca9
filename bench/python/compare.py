#!/usr/bin/env python3
"""Time to solution from Python: krylov_wgpu against SciPy (CPU) and CuPy (where present),
same matrices, same right-hand side (b = A·1), same tolerance, one process.

    python3 bench/python/compare.py [--sizes 1e4,1e5,1e6] [--rtol 1e-8] [--out DIR]

Rows: kw (a SciPy matrix passed in: conversion, upload and set-up in every call), kw.Matrix
(a handle: A and M stay on the device; what repeated solves cost), kw mixed (f32 solves
refined to f64 accuracy, via the handle), SciPy, and CuPy with A and b already on the GPU
(its best case: no transfer timed). Median of --repeats timed calls after one warm-up call
(one timed call for solves over 5 s). Iterations come from each solver's report or from a
separate run with a counting callback; the true relative residual |b - Ax|/|b| is computed in
float64 on the host for every row. Writes compare.jsonl and compare.md under --out.
"""

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import krylov_wgpu as kw

ROOT = Path(__file__).resolve().parents[2]

try:
    import cupy
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as csla

    cupy.cuda.runtime.getDeviceCount()
except Exception:  # no CuPy, or no CUDA device
    cupy = None


def poisson2d(n):
    """5-point Laplacian on an m×m grid, m = round(sqrt(n)): SPD."""
    m = int(round(n**0.5))
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    return sp.csr_array(sp.kron(sp.eye(m), t) + sp.kron(t, sp.eye(m))), f"poisson2d:{m}"


def convdiff2d(n, peclet=50.0):
    """2-D convection–diffusion, first-order upwind in x, on an m×m grid: nonsymmetric."""
    m = int(round(n**0.5))
    h = 1.0 / (m + 1)
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    c = sp.diags([-1.0, 1.0], [-1, 0], shape=(m, m)) * (peclet * h)
    a = sp.kron(sp.eye(m), t + c) + sp.kron(t, sp.eye(m))
    return sp.csr_array(a), f"convdiff2d:{m}:{peclet:g}"


def real(name):
    with warnings.catch_warnings():  # SciPy 1.18 announces mmread's return type change
        warnings.simplefilter("ignore", DeprecationWarning)
        a = sp.csr_array(scipy.io.mmread(ROOT / "tests" / "data" / f"{name}.mtx")).astype(np.float64)
    return a, name


def timed(fn, repeats, warm=True):
    if warm:
        fn()  # warm-up: device opened, kernels compiled, caches filled
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        if times[-1] > 5.0:
            break
    return statistics.median(times), out


def relres(a, b, x):
    x = np.asarray(x, dtype=np.float64)
    return float(np.linalg.norm(b - a @ x) / np.linalg.norm(b))


def counting(solver, a, b, **kwargs):
    """A call of `solver` that also counts its iterations with a callback (a Python call per
    iteration: noise next to a CPU SpMV, and CuPy's loop calls Python every iteration anyway)."""
    if solver.__name__ == "gmres" and solver.__module__.startswith("scipy"):
        kwargs["callback_type"] = "pr_norm"

    def call():
        count = [0]

        def cb(*_):
            count[0] += 1

        x, info = solver(a, b, callback=cb, **kwargs)
        return x, info, count[0]

    return call


def run_case(a, name, method, rtol, restart, repeats, scipy_max_n):
    n = a.shape[0]
    b = a @ np.ones(n)
    maxiter = 20 * n
    rows = []
    extra = {"restart": restart} if method == "gmres" else {}

    def row(solver, seconds, iterations, x, note=""):
        r = {
            "matrix": name,
            "n": n,
            "nnz": int(a.nnz),
            "method": method if method != "gmres" else f"gmres({restart})",
            "solver": solver,
            "seconds": seconds,
            "iterations": iterations,
            "relres": relres(a, b, x),
            "note": note,
        }
        rows.append(r)
        print(json.dumps(r), flush=True)

    # krylov_wgpu: a SciPy matrix in every call.
    opts = dict(method=method, rtol=rtol, maxiter=maxiter, check=False, **extra)
    t, rep = timed(lambda: kw.solve(a, b, **opts), repeats)
    row("kw", t, rep.iterations, rep.x, f"{rep.device['name']}; {rep.reason_name}")
    # The handle: A (and M) stay on the device between solves.
    handle = kw.Matrix(a)
    t, rep = timed(lambda: kw.solve(handle, b, **opts), repeats)
    row("kw.Matrix", t, rep.iterations, rep.x, f"{rep.format}; {rep.dispatches_per_iteration:.2f} dispatches/it")
    t, rep = timed(lambda: kw.solve(handle, b, precision="mixed", **opts), repeats)
    outer = (rep.refinement or {}).get("outer_iterations")
    row("kw.Matrix mixed", t, rep.iterations, rep.x, f"{outer} outer; {rep.reason_name}")

    scipy_solver = getattr(sla, method)
    # SciPy's GMRES counts maxiter in restart cycles.
    scipy_max = maxiter if method != "gmres" else maxiter // restart + 1
    if n <= scipy_max_n:
        # Nothing to warm up on the CPU; large SciPy solves take a minute each.
        call = counting(scipy_solver, a, b, rtol=rtol, maxiter=scipy_max, **extra)
        t, (x, info, its) = timed(call, repeats if n <= 1e5 else 1, warm=False)
        row("scipy", t, its, x, f"info {info}")
    if cupy is not None:
        ad = csp.csr_matrix(a)
        bd = cupy.asarray(b)
        cupy_solver = getattr(csla, method)

        tol = {"tol": rtol} if _cupy_tol() else {"rtol": rtol}
        call = counting(cupy_solver, ad, bd, maxiter=maxiter, **tol, **extra)

        def solve_cupy():
            out = call()
            cupy.cuda.runtime.deviceSynchronize()
            return out

        t, (x, info, its) = timed(solve_cupy, repeats)
        if method == "gmres":
            # CuPy's GMRES calls back once per restart cycle, not per iteration.
            row("cupy", t, None, cupy.asnumpy(x), f"info {info}; {its} restart cycles")
        else:
            row("cupy", t, its, cupy.asnumpy(x), f"info {info}")
    return rows


def _cupy_tol():
    """Whether CuPy's solvers still take `tol` (older) rather than `rtol`."""
    import inspect

    return "rtol" not in inspect.signature(csla.cg).parameters


def markdown(rows):
    out = ["| matrix | n | method | solver | iterations | time to solution | vs SciPy | vs CuPy | \\|b−Ax\\|/\\|b\\| | note |",
           "|---|---:|---|---|---:|---:|---:|---:|---:|---|"]
    ref = {}
    for r in rows:
        ref[(r["matrix"], r["method"], r["solver"])] = r["seconds"]
    for r in rows:
        key = (r["matrix"], r["method"])
        sci = ref.get(key + ("scipy",))
        cu = ref.get(key + ("cupy",))
        ratio = lambda other: f"{other / r['seconds']:.1f}×" if other and r["solver"] not in ("scipy", "cupy") else ""
        out.append(
            f"| {r['matrix']} | {r['n']} | {r['method']} | {r['solver']} | {r['iterations'] if r['iterations'] is not None else '—'} | "
            f"{r['seconds'] * 1e3:.1f} ms | {ratio(sci)} | {ratio(cu)} | {r['relres']:.1e} | {r['note']} |"
        )
    return "\n".join(out) + "\n"


def from_jsonl(path):
    """The table again from a compare.jsonl (e.g. after changing how it is drawn)."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    for r in rows:
        if r["solver"] == "cupy" and r["method"].startswith("gmres") and "cycles" not in r["note"]:
            r["note"] += f"; {r['iterations']} restart cycles"
            r["iterations"] = None
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="1e4,1e5,1e6")
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--restart", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--scipy-max-n", type=float, default=1.1e6, help="largest n SciPy runs (CPU time)")
    p.add_argument("--real", default="bcsstk21:cg,nos6:cg,sherman4:bicgstab,add32:gmres,pde2961:bicgstab")
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--table", metavar="JSONL", help="only print the table of an earlier run")
    args = p.parse_args()
    if args.table:
        print(markdown(from_jsonl(args.table)), end="")
        return 0
    print(f"krylov_wgpu {kw.__version__}; auto device: {kw.auto_device('f64')}", flush=True)
    print(f"CuPy: {cupy.__version__ if cupy else 'absent'}; SciPy {scipy.__version__}; NumPy {np.__version__}", flush=True)
    rows = []
    for spec in filter(None, args.real.split(",")):
        name, method = spec.split(":")
        a, label = real(name)
        rows += run_case(a, label, method, args.rtol, args.restart, args.repeats, args.scipy_max_n)
    for n in (int(float(s)) for s in args.sizes.split(",")):
        a, label = poisson2d(n)
        rows += run_case(a, label, "cg", args.rtol, args.restart, args.repeats, args.scipy_max_n)
        a, label = convdiff2d(n)
        for method in ("bicgstab", "gmres"):
            # SciPy's restarted GMRES on the largest problem would take many minutes.
            limit = args.scipy_max_n if method != "gmres" else min(args.scipy_max_n, 2e5)
            rows += run_case(a, label, method, args.rtol, args.restart, args.repeats, limit)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "compare.md").write_text(markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    sys.exit(main())
