#!/usr/bin/env python3
"""Table of bench/gpu/bicg_pair.sh's runs: BiCG on one GPU (concurrent, classical) and on two
(the A- and Aᵀ-recurrences on different devices): iterations, µs per iteration, loop time to
solution, launches and host syncs per iteration, the exchange's values and the host's waits.

    python3 bench/gpu/bicg_pair_md.py OUT
"""
import glob
import json
import os
import sys

out = sys.argv[1]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    tag = os.path.basename(path)[:-5]
    prob, k, field, prec, precond, mode = tag.rsplit("-", 5)
    try:
        r = json.load(open(path))
    except (json.JSONDecodeError, OSError):
        continue
    runs.setdefault((prob, int(k), field, prec, precond), {})[mode] = r


def us(r):
    return r["loop_seconds"] / max(r["iterations"], 1) * 1e6


print("| problem | n | prec | M | mode | iterations | converged | µs/it | loop s | launches/it | syncs/it | 2 GPUs vs mode |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for (prob, k, field, prec, precond), modes in sorted(runs.items()):
    name = prob + (f" ({field})" if field != "none" else "")
    d2 = modes.get("d2")
    for mode in ("one", "onec", "d2"):
        r = modes.get(mode)
        if r is None:
            continue
        label = {"one": "1 GPU concurrent", "onec": "1 GPU classical", "d2": "2 GPUs"}[mode]
        if mode == "one" and not any("concurrent" in n for n in r.get("notes", [])):
            label = "1 GPU pipelined"
        ratio = ""
        if d2 and mode != "d2" and d2["loop_seconds"] > 0:
            ratio = f"{r['loop_seconds'] / d2['loop_seconds']:.2f}×"
        print(
            f"| {name} | {r['n']:.1e} | {prec} | {precond} | {label} | {r['iterations']} | "
            f"{r['converged']} | {us(r):.0f} | {r['loop_seconds']:.3f} | "
            f"{r['dispatches_per_iteration']:.1f} | {r['syncs_per_iteration']:.2f} | {ratio} |"
        )
    if d2 and d2.get("devices"):
        d = d2["devices"]
        waits = ", ".join(f"{p['wait_seconds']:.3f}" for p in d["devices"])
        print(
            f"| | | | | 2 GPUs: exchange {d['exchange_values_per_iteration']} values/it, "
            f"{d['exchange_seconds']:.3f} s copying ({d['exchange_share']:.0%}), waits {waits} s | | | | | | | |"
        )
