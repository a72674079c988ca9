#!/usr/bin/env python3
"""Table of bench/gpu/dist.sh's runs: time per iteration on one GPU (single-device solver),
on the distributed path with one and two devices, the speed-up, the roofline of one GPU
(stream_triad bandwidth, pipelined CG's bytes), and the exchange's share.

    python3 bench/gpu/dist_md.py OUT
"""
import glob
import json
import os
import sys

out = sys.argv[1]
bw = None
try:
    for line in open(os.path.join(out, "bandwidth.jsonl")):
        r = json.loads(line)
        if r.get("roofline_us"):
            bw = r["bytes_per_iteration"] / r["roofline_us"] / 1e3  # GB/s
except OSError:
    pass
runs = {}
for path in glob.glob(os.path.join(out, "*.json")):
    if os.path.basename(path).startswith("profile-"):
        continue
    tag = os.path.basename(path)[:-5]
    method = "cg"
    if "." in tag:
        method, tag = tag.split(".", 1)
    prob, k, prec, mode = tag.rsplit("-", 3)
    try:
        r = json.load(open(path))
    except (json.JSONDecodeError, OSError):
        continue
    runs.setdefault((method, prob, int(k), prec), {})[mode] = r


def us(r):
    return r["loop_seconds"] / max(r["iterations"], 1) * 1e6


print(f"stream_triad bandwidth of one GPU: {bw:.0f} GB/s\n" if bw else "")
print("| method | problem | n | nnz | prec | 1 GPU (µs/it) | 1 GPU classical | roofline 1 GPU (CG) | dist 1 dev | dist 2 dev | speed-up 2 vs 1 GPU | exchange values/it | halo copy share | wait (s) | true rel. residual (2 dev) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (method, prob, k, prec), m in sorted(runs.items(), key=lambda e: (e[0][0], e[0][3], e[0][1], list(e[1].values())[0]["n"])):
    any_r = next(iter(m.values()))
    n, nnz = any_r["n"], any_r["nnz"]
    s = 8 if prec == "f64" else 4
    need = (s + 4) * nnz + 4 * (n + 1) + 9 * s * n
    roof = need / (bw * 1e3) if bw else float("nan")
    one = us(m["one"]) if "one" in m else float("nan")
    d1 = us(m["d1"]) if "d1" in m else float("nan")
    onec = us(m["onec"]) if "onec" in m else float("nan")
    d2 = us(m["d2"]) if "d2" in m else float("nan")
    ex = m.get("d2", {}).get("devices") or {}
    print(f"| {method} | {prob}:{k} | {n:.3g} | {nnz:.3g} | {prec} | {one:.0f} | {onec:.0f} | {roof:.0f} | {d1:.0f} | {d2:.0f} | "
          f"{one / d2:.2f}× | {ex.get('exchange_values_per_iteration', '')} | "
          f"{100 * ex.get('exchange_share', float('nan')):.2f} % | {ex.get('wait_seconds', float('nan')):.2f} | "
          f"{m.get('d2', {}).get('relative_residual', float('nan')):.2e} |")

for path in sorted(glob.glob(os.path.join(out, "profile-*.json"))):
    try:
        r = json.load(open(path))
    except (json.JSONDecodeError, OSError):
        continue
    it = max(r["iterations"], 1)
    print(f"\n{os.path.basename(path)}: device 0's GPU time per iteration by kernel "
          f"(timestamps; wall {us(r):.0f} µs/iteration while profiled)\n")
    print("| kernel | calls | µs per iteration |")
    print("|---|---|---|")
    for k in r.get("kernel_times", []):
        print(f"| {k['name']} | {k['calls']} | {k['seconds'] / it * 1e6:.0f} |")
