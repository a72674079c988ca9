"""CuPy (cuSPARSE) peers of issue 14's table: GMRES(30) and BiCGStab (where CuPy has it) with
none / Jacobi / ILU(0) on a Matrix Market file that `krylov solve --write-matrix` wrote, so both
solve the very same A; b = A·1, rtol as given, f64. ILU(0) comes from `cupyx.scipy.sparse.
linalg.spilu` when CuPy has it (otherwise the row says so); Jacobi is a LinearOperator scaling
by 1/diag(A). Prints one JSON object per line: iterations (callback count), seconds of the
solve (median of `runs` after a warm-up), µs per iteration, true relative residual.
"""
import argparse
import json
import time

import numpy as np
import scipy.io
import scipy.sparse as sp
import cupy as cp
import cupyx.scipy.sparse as csp
import cupyx.scipy.sparse.linalg as cla


def preconditioner(a, kind):
    n = a.shape[0]
    if kind == "none":
        return None, ""
    if kind == "jacobi":
        d = 1.0 / a.diagonal()
        return cla.LinearOperator((n, n), matvec=lambda v: d * v), ""
    if kind == "ilu0":
        if not hasattr(cla, "spilu"):
            return None, "cupyx has no spilu"
        f = cla.spilu(a, fill_factor=1, drop_tol=0)
        return cla.LinearOperator((n, n), matvec=f.solve), ""
    raise SystemExit(kind)


def run(method, a, b, m, rtol, maxiter):
    count = [0]

    def cb(*_):
        count[0] += 1

    kw = {"rtol": rtol} if "rtol" in method.__code__.co_varnames else {"tol": rtol}
    if method is cla.gmres:
        kw.update(restart=30, callback_type="pr_norm")
    count[0] = 0
    x, info = method(a, b, M=m, maxiter=maxiter, callback=cb, atol=0.0, **kw)
    cp.cuda.Device().synchronize()
    return x, info, count[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("matrix")
    ap.add_argument("--name", default="")
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--maxiter", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    host = sp.csr_matrix(scipy.io.mmread(args.matrix))
    a = csp.csr_matrix(host)
    b = a @ cp.ones(a.shape[0])
    methods = [("gmres", cla.gmres)]
    if hasattr(cla, "bicgstab"):
        methods.append(("bicgstab", cla.bicgstab))
    for name, method in methods:
        for kind in ["none", "jacobi", "ilu0"]:
            row = {"problem": args.name, "method": name, "precond": kind, "peer": "cupy " + cp.__version__}
            try:
                t0 = time.perf_counter()
                m, why = preconditioner(a, kind)
                cp.cuda.Device().synchronize()
                row["setup_seconds"] = time.perf_counter() - t0
                if why:
                    row["skipped"] = why
                    print(json.dumps(row), flush=True)
                    continue
                x, info, its = run(method, a, b, m, args.rtol, args.maxiter)
                times = []
                for _ in range(args.runs):
                    t = time.perf_counter()
                    x, info, its = run(method, a, b, m, args.rtol, args.maxiter)
                    times.append(time.perf_counter() - t)
                sec = float(np.median(times))
                rel = float(cp.linalg.norm(b - a @ x) / cp.linalg.norm(b))
                row.update(iterations=its, info=int(info), seconds=sec,
                           us_per_iter=1e6 * sec / max(its, 1), relative_residual=rel)
            except Exception as e:  # a peer that cannot run a row says why
                row["error"] = f"{type(e).__name__}: {e}"
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
