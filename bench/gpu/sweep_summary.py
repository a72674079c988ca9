#!/usr/bin/env python3
"""Summary of bench/gpu/sweep.sh's JSON lines: counts by exit code and stop reason, every exit
other than 0 or 3 (a refusal says why; anything else is a defect), every claimed convergence
whose true residual exceeds the tolerance, and the recoveries the reports name.

  sweep_summary.py sweep.jsonl
"""
import collections
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print(f"{len(rows)} solves; exit codes {dict(collections.Counter(r['rc'] for r in rows))}")
reasons = collections.Counter((r["report"] or {}).get("reason") for r in rows)
print("stops:", dict(reasons))
print("\nexits other than 0 (converged) and 3 (not converged):")
for r in rows:
    if r["rc"] not in (0, 3):
        print(f"  {r['matrix']} {r['method']} {r['precond']} {r['precision']}: rc {r['rc']}: {r['error'][:160]}")
print("\nconvergence the true residual contradicts (rtol 1e-6):")
bad = [r for r in rows if r["report"] and r["report"]["converged"]
       and not (r["report"]["relative_residual"] or 1.0) <= 1e-6 * 1.01]
for r in bad:
    print(f"  {r['matrix']} {r['method']} {r['precond']} {r['precision']}: {r['report']['relative_residual']}")
print(f"  {len(bad)}")
print("\nsolves again after an f32 overflow (restart_log):")
for r in rows:
    log = (r["report"] or {}).get("restart_log") or []
    if log and "solved again" in log[0]:
        rep = r["report"]
        print(f"  {r['matrix']} {r['method']} {r['precond']} {r['precision']}: {rep['reason']} "
              f"{rep['relative_residual']:.2e} after {rep['iterations']} ({log[0][:60]})")
