"""CuPy (cuSPARSE) CG and GMRES(30) per-iteration times on the matrices `krylov bench` uses.

Same generators (2D Poisson 5-point on k = round(sqrt(n)), 3D Laplace 7-point on
k = round(cbrt(n))), b = A·1, zero tolerance and a fixed iteration count, median of `runs`
timed solves after one warm-up. Prints one JSON object per line.
"""
import argparse
import inspect
import json
import sys
import time

import numpy as np
import scipy.sparse as sp
import cupy as cp
import cupyx.scipy.sparse as csp
import cupyx.scipy.sparse.linalg as cla


def laplacian_1d(k):
    return sp.diags([-np.ones(k - 1), 2 * np.ones(k), -np.ones(k - 1)], [-1, 0, 1])


def matrix(problem, n):
    if problem == "poisson2d":
        k = max(2, round(n ** 0.5))
        t, i = laplacian_1d(k), sp.identity(k)
        return sp.kron(i, t) + sp.kron(t, i)
    if problem == "laplace3d":
        k = max(2, round(n ** (1 / 3)))
        t, i = laplacian_1d(k), sp.identity(k)
        return sp.kron(sp.kron(i, i), t) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(t, i), i)
    raise SystemExit(f"unknown problem {problem}")


def tol_kwargs(fn):
    params = inspect.signature(fn).parameters
    kw = {"rtol": 0.0} if "rtol" in params else {"tol": 0.0}
    if "atol" in params:
        kw["atol"] = 0.0
    return kw


def timed(fn, runs):
    fn()  # warm-up (cuSPARSE handles, kernels)
    cp.cuda.Device().synchronize()
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        out.append(time.perf_counter() - t)
    return float(np.median(out)), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default="poisson2d,laplace3d")
    ap.add_argument("--sizes", default="1e3,1e4,1e5,1e6,1e7")
    ap.add_argument("--precisions", default="f32,f64")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--restart", type=int, default=30)
    ap.add_argument("--tts", action="store_true",
                    help="time to solution: upload + solve to --rtol + download, median of runs")
    ap.add_argument("--rtol", type=float, default=1e-6)
    a = ap.parse_args()
    if a.tts:
        return tts(a)
    print(f"cupy {cp.__version__} on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}", file=sys.stderr)
    for problem in a.problems.split(","):
        for size in a.sizes.split(","):
            n_req = int(float(size))
            m = matrix(problem, n_req).tocsr()
            for prec in a.precisions.split(","):
                dt = np.float32 if prec == "f32" else np.float64
                A = csp.csr_matrix(m.astype(dt))
                b = A @ cp.ones(A.shape[0], dtype=dt)
                for method in ("cg", "gmres"):
                    if method == "cg":
                        fn = lambda: cla.cg(A, b, maxiter=a.iters, **tol_kwargs(cla.cg))
                    else:
                        fn = lambda: cla.gmres(A, b, restart=a.restart, maxiter=a.iters, **tol_kwargs(cla.gmres))
                    try:
                        med, runs = timed(fn, a.runs)
                    except Exception as e:  # report, keep going
                        print(f"{problem} {size} {prec} {method}: {e}", file=sys.stderr)
                        continue
                    print(json.dumps({
                        "problem": problem, "n": A.shape[0], "nnz": int(A.nnz), "precision": prec,
                        "method": method, "iterations": a.iters,
                        "us_per_iteration": med / a.iters * 1e6,
                        "us_runs": [r / a.iters * 1e6 for r in runs],
                    }), flush=True)
                del A, b
                cp.get_default_memory_pool().free_all_blocks()


def tts(a):
    """Host CSR and b -> GPU -> cg / gmres(restart) to rtol -> x on the host, wall time."""
    for problem in a.problems.split(","):
        for size in a.sizes.split(","):
            m = matrix(problem, int(float(size))).tocsr()
            for prec in a.precisions.split(","):
                dt = np.float32 if prec == "f32" else np.float64
                mh = m.astype(dt)
                bh = mh @ np.ones(mh.shape[0], dtype=dt)
                for method in ("cg", "gmres"):
                    fn = cla.cg if method == "cg" else cla.gmres
                    params = inspect.signature(fn).parameters
                    kw = {"rtol": a.rtol} if "rtol" in params else {"tol": a.rtol}
                    if "atol" in params:
                        kw["atol"] = 0.0
                    if method == "gmres":
                        kw["restart"] = a.restart
                    kw["maxiter"] = 100000

                    def solve():
                        A = csp.csr_matrix(mh)
                        b = cp.asarray(bh)
                        x, info = fn(A, b, **kw)
                        return x.get(), info

                    try:
                        solve()  # warm-up
                        cp.cuda.Device().synchronize()
                        ts = []
                        for _ in range(a.runs):
                            t = time.perf_counter()
                            x, info = solve()
                            ts.append(time.perf_counter() - t)
                        rel = float(np.linalg.norm(bh - mh @ x) / np.linalg.norm(bh))
                    except Exception as e:
                        print(f"{problem} {size} {prec} {method} tts: {e}", file=sys.stderr)
                        continue
                    print(json.dumps({"kind": "tts", "problem": problem, "n": mh.shape[0], "precision": prec,
                                      "method": method, "seconds": float(np.median(ts)), "info": int(info),
                                      "relative_residual": rel}), flush=True)


if __name__ == "__main__":
    main()
