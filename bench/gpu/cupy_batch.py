"""CuPy (cuSPARSE) looping CG over a batch of independent systems: the peer of `krylov batch`.

The systems are those of `krylov batch --generate poisson2d:K --count N`: the 2D Poisson
5-point matrix on a K x K grid plus (k mod 7)·0.01·I for system k, b = A_k·1, no
preconditioner, rtol 1e-6. The matrices are uploaded before the clock starts (in CuPy's
favour); the loop solves each system with cupyx.scipy.sparse.linalg.cg and brings x back. A
second loop uploads each matrix inside it (`systems_per_second_with_uploads`).
Prints one JSON object per (K, count, precision).
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


def poisson(k):
    t = sp.diags([-np.ones(k - 1), 2 * np.ones(k), -np.ones(k - 1)], [-1, 0, 1])
    i = sp.identity(k)
    return (sp.kron(i, t) + sp.kron(t, i)).tocsr()


def tol_kwargs(rtol):
    params = inspect.signature(cla.cg).parameters
    kw = {"rtol": rtol} if "rtol" in params else {"tol": rtol}
    if "atol" in params:
        kw["atol"] = 0.0
    return kw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="32:1000,100:100", help="K:count,...")
    ap.add_argument("--precisions", default="f32,f64")
    ap.add_argument("--rtol", type=float, default=1e-6)
    a = ap.parse_args()
    print(f"cupy {cp.__version__} on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}",
          file=sys.stderr)
    kw = tol_kwargs(a.rtol)
    for case in a.cases.split(","):
        k, count = (int(v) for v in case.split(":"))
        base = poisson(k)
        n = base.shape[0]
        for prec in a.precisions.split(","):
            dt = np.float32 if prec == "f32" else np.float64
            mats, rhs = [], []
            for s in range(count):
                m = (base + (s % 7) * 0.01 * sp.identity(n)).tocsr().astype(dt)
                A = csp.csr_matrix(m)
                mats.append(A)
                rhs.append(A @ cp.ones(n, dtype=dt))
            # Warm-up: kernels, cuSPARSE handles.
            cla.cg(mats[0], rhs[0], maxiter=10000, **kw)
            cp.cuda.Device().synchronize()
            t = time.perf_counter()
            xs = []
            for A, b in zip(mats, rhs):
                x, info = cla.cg(A, b, maxiter=10000, **kw)
                xs.append(cp.asnumpy(x))
            cp.cuda.Device().synchronize()
            dt_s = time.perf_counter() - t
            # The same loop with each matrix and right-hand side uploaded inside it (as
            # `krylov batch` counts its uploads).
            host = [(base + (s % 7) * 0.01 * sp.identity(n)).tocsr().astype(dt) for s in range(count)]
            cp.cuda.Device().synchronize()
            t = time.perf_counter()
            for m in host:
                A = csp.csr_matrix(m)
                b = A @ cp.ones(n, dtype=dt)
                x, info = cla.cg(A, b, maxiter=10000, **kw)
                cp.asnumpy(x)
            cp.cuda.Device().synchronize()
            dt_up = time.perf_counter() - t
            worst = 0.0
            for A, b, x in zip(mats[:20], rhs[:20], xs[:20]):
                r = cp.asnumpy(b) - cp.asnumpy(A @ cp.asarray(x))
                worst = max(worst, float(np.linalg.norm(r) / np.linalg.norm(cp.asnumpy(b))))
            print(json.dumps({
                "peer": "cupy-loop", "k": k, "n": n, "count": count, "precision": prec,
                "seconds": dt_s, "systems_per_second": count / dt_s,
                "seconds_with_uploads": dt_up, "systems_per_second_with_uploads": count / dt_up,
                "worst_relative_residual_first_20": worst,
            }), flush=True)


if __name__ == "__main__":
    main()
