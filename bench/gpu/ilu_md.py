"""Markdown for issue 14's table from bench/gpu/ilu_table.sh's output: ours (ilu_table.jsonl)
and CuPy's (ilu_cupy.jsonl) rows side by side. Usage: ilu_md.py DIR."""
import json
import sys
from pathlib import Path

d = Path(sys.argv[1])
ours = [json.loads(l) for l in open(d / "ilu_table.jsonl") if l.strip()]
peer = {}
for l in open(d / "ilu_cupy.jsonl") if (d / "ilu_cupy.jsonl").exists() else []:
    if l.strip():
        r = json.loads(l)
        peer[(r["problem"], r["method"], r["precond"])] = r
# CuPy's GMRES calls back once per restart cycle: its count is cycles of 30, and its time is
# compared per solve (ms to the tolerance) rather than per iteration.
print("| problem (n) | method | variant | precond | iterations | µs/iter | launches/iter | transfers/iter | trisolve (levels L/U, launches/apply) | ms to solve | CuPy iterations | CuPy ms to solve |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in ours:
    p = r.get("preconditioner") or {}
    kind = p.get("kind", "none")
    rec = max(r["iterations_recorded"], r["iterations"], 1)
    us = 1e6 * r["loop_seconds"] / rec
    tri = "-"
    if p.get("trisolve"):
        tri = "%s (%s, %s)" % (p["trisolve"], "/".join(map(str, p["levels"])), p["dispatches_per_apply"])
    its = str(r["iterations"]) if r["converged"] else "%d %s" % (r["iterations"], r["reason"])
    c = peer.get((r["problem"], r["method"], kind), {})
    if "iterations" in c:
        ok = c["relative_residual"] <= 1e-8 * 1.01
        cit = str(c["iterations"]) + (" cycles" if r["method"] == "gmres" else "")
        cit += "" if ok else " (rel %.1e)" % c["relative_residual"]
        cus = "%.1f" % (1e3 * c["seconds"])
    else:
        cit, cus = c.get("skipped", c.get("error", "-"))[:40], "-"
    if r["variant"] == "classical" and r["method"] == "bicg":
        cit, cus = "", ""
    print("| %s (%d) | %s | %s | %s | %s | %.1f | %.1f | %.2f | %s | %.1f | %s | %s |" % (
        r["problem"], r["n"], r["method"], r["variant"], kind, its, us,
        r["dispatches_per_iteration"], r["transfers_per_iteration"], tri,
        1e3 * r["loop_seconds"], cit, cus))
