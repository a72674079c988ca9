"""Markdown for issue 15's precision table from mixed_table.jsonl (ours) and mixed_cupy.jsonl
(CuPy): per problem, each precision's iterations (inner iterations summed for mixed, with the
outer count), final true relative residual, converged or why not, and seconds to solution.
Usage: python3 bench/gpu/mixed_md.py DIR
"""
import json
import sys
from pathlib import Path


def rows(path):
    p = Path(path)
    return [json.loads(l) for l in p.read_text().splitlines() if l.strip()] if p.exists() else []


def main():
    d = sys.argv[1]
    ours = rows(f"{d}/mixed_table.jsonl")
    cupy = rows(f"{d}/mixed_cupy.jsonl")
    print("| problem | n | method + M | precision | iterations (outer) | true rel. residual | stop | solve s | loop µs/it | process s |")
    print("|---|---|---|---|---|---|---|---:|---:|---:|")
    for r in ours:
        ref = r.get("refinement")
        prec = r["asked"].replace("--reduction compensated", "compensated").replace(
            "--outer-precision double-single", "(double-single outer)")
        if ref:
            prec = f"mixed ({ref['outer_precision']} outer)"
            its = f"{r['iterations']} ({ref['outer_iterations']})"
        else:
            its = str(r["iterations"])
        pc = (r.get("preconditioner") or {}).get("kind", "none")
        print(f"| {r['problem']} | {r['n']} | {r['method']} + {pc} | {prec} | {its} | "
              f"{r['relative_residual']:.1e} | {r['reason']} | {r['seconds']:.3f} | "
              f"{1e6 * r['loop_seconds'] / max(1, r['iterations_recorded']):.1f} | {r.get('wall_seconds', float('nan')):.2f} |")
        for c in [c for c in cupy if c["problem"] == r["problem"]] if prec.startswith("mixed (double") else []:
            if "error" in c:
                print(f"| {c['problem']} | | CuPy {c['method']} + {c['precond']} | {c['precision']} | | | error: {c['error'][:60]} | | | |")
                continue
            stop = "converged" if c["info"] == 0 else f"info {c['info']}"
            print(f"| {c['problem']} | | {c['peer']} {c['method']} + {c['precond']} | {c['precision']} | "
                  f"{c['iterations']} | {c['relative_residual']:.1e} | {stop} | {c['seconds']:.3f} | | |")


if __name__ == "__main__":
    main()
