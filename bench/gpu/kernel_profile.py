#!/usr/bin/env python3
"""One solve's line of a kernel profile: `kernel_profile.py PROFILED.json UNTIMED.json LABEL`.

PROFILED is `krylov solve --json` with KRYLOV_PROFILE=1 (GPU time per kernel), UNTIMED the same
solve without (its loop time is the one to quote). Prints the label, the iterations, both
times per iteration, the relative residual, how many bindings the pool took, and the eight
kernels with the most GPU time (calls, µs per call, µs per iteration). Used by
cagmres_profile.sh and pool_parts_profile.sh.
"""
import json
import sys

try:
    p, q = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
except Exception as e:  # a solve that failed or was refused
    print(sys.argv[3], "failed", e)
    sys.exit()
it = q["iterations_recorded"]
pit = p["iterations_recorded"]
held = [n for n in q["notes"] if "bindings" in n]
print(sys.argv[3], "| it", it, "untimed us/it %.1f" % (1e6 * q["loop_seconds"] / it),
      "profiled us/it %.1f" % (1e6 * p["loop_seconds"] / pit),
      "|r|/|b| %.6e" % q["relative_residual"], "|", held[0][-40:] if held else "one binding")
for k in sorted(p["kernel_times"], key=lambda k: -k["seconds"])[:8]:
    print("    %-22s calls %5d  us/call %8.1f  us/it %8.1f" % (
        k["name"], k["calls"], 1e6 * k["seconds"] / k["calls"], 1e6 * k["seconds"] / pit))
