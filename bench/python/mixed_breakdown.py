#!/usr/bin/env python3
"""Where mixed-precision refinement's time goes (issue 15): for large SPD problems, f64, f32
and mixed (f64 and double-single outer loops) through one kw.Matrix handle in one warm
process; per run the report's `seconds`, its loop time, and refinement's split into inner
loops, the work each inner solve does around its loop, and the outer steps.

    python3 bench/python/mixed_breakdown.py [--problems poisson2d:1024,laplace3d:128] [--out DIR]
"""

import argparse
import json
import os
import statistics
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import krylov_wgpu as kw


def problem(spec):
    kind, m = spec.split(":")
    m = int(m)
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    i = sp.eye(m)
    if kind == "poisson2d":
        a = sp.kron(i, t) + sp.kron(t, i)
    elif kind == "laplace3d":
        a = sp.kron(sp.kron(i, i), t) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(t, i), i)
    else:
        raise SystemExit(f"unknown problem {spec}")
    return sp.csr_array(a)


CONFIGS = {
    "f64": dict(precision="f64"),
    "f32": dict(precision="f32"),
    # --refinement auto: pipelined CG runs as one f32 iteration with reliable updates.
    "mixed reliable f64 outer": dict(precision="mixed", outer_precision="f64"),
    "mixed reliable double-single outer": dict(precision="mixed", outer_precision="double-single"),
    "mixed restart f64 outer": dict(precision="mixed", outer_precision="f64", refinement="restart"),
    "mixed restart double-single outer": dict(
        precision="mixed", outer_precision="double-single", refinement="restart"
    ),
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problems", default="poisson2d:1024,poisson2d:2048,laplace3d:128")
    p.add_argument("--rtol", type=float, default=1e-10)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--inner-rtol", default="1e-4")
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    args = p.parse_args()
    rows = []
    for spec in args.problems.split(","):
        a = problem(spec)
        b = a @ np.ones(a.shape[0])
        handle = kw.Matrix(a)
        for name, cfg in CONFIGS.items():
            restart = "restart" in name
            for inner_rtol in [float(v) for v in args.inner_rtol.split(",")] if restart else [None]:
                extra = dict(cfg, inner_rtol=inner_rtol) if inner_rtol else cfg
                run = lambda: kw.solve(handle, b, rtol=args.rtol, maxiter=50000, device="gpu", check=False, **extra)
                run()  # warm-up
                reps = [run() for _ in range(args.repeats)]
                rep = sorted(reps, key=lambda r: r.seconds)[len(reps) // 2]
                ref = rep.refinement or {}
                inner = sum(ref.get("inner_seconds", []))
                inner_loop = sum(ref.get("inner_loop_seconds", []))
                row = {
                    "problem": spec,
                    "n": a.shape[0],
                    "config": name,
                    "inner_rtol": inner_rtol,
                    "iterations": rep.iterations,
                    "relres": rep.relative_residual,
                    "reason": rep.reason_name,
                    "seconds": rep.seconds,
                    "seconds_all": [r.seconds for r in reps],
                    "loop_seconds": rep.loop_seconds,
                    "us_per_iteration_loop": 1e6 * rep.loop_seconds / max(rep.iterations, 1),
                    "batch_size": rep.batch_size,
                    "inner_iterations": ref.get("inner_iterations"),
                    "inner_seconds": ref.get("inner_seconds"),
                    "inner_loop_seconds": ref.get("inner_loop_seconds"),
                    "around_inner_loops": inner - inner_loop if ref else None,
                    "outer_steps": rep.seconds - inner if ref else None,
                    "inner_setup_seconds": ref.get("inner_setup_seconds"),
                    "device": rep.device.get("name"),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "mixed_breakdown.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    print("| problem | config | inner rtol | iterations (inner) | rel. residual | seconds | loop | around inner loops | outer steps | loop µs/it |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        inner = f" ({'+'.join(map(str, r['inner_iterations']))})" if r["inner_iterations"] else ""
        f = lambda v: f"{1e3 * v:.1f} ms" if v is not None else ""
        print(f"| {r['problem']} | {r['config']} | {r['inner_rtol'] or ''} | {r['iterations']}{inner} | {r['relres']:.1e} | "
              f"{f(r['seconds'])} | {f(r['loop_seconds'])} | {f(r['around_inner_loops'])} | {f(r['outer_steps'])} | "
              f"{r['us_per_iteration_loop']:.1f} |")


if __name__ == "__main__":
    main()
