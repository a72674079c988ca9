#!/usr/bin/env python3
"""Table of bench/gpu/dist_where.sh's runs: µs per iteration, and per device the GPU time of
each kernel per iteration (profiled runs) and the loop time not covered by kernels."""
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/krylov-dist-where")
print("| run | µs/it | device | kernels, µs per iteration | kernels total | loop − kernels |")
print("|---|---:|---|---|---:|---:|")
for f in sorted(out.glob("*.json")):
    try:
        d = json.loads(f.read_text().splitlines()[0])
    except (ValueError, IndexError):
        print(f"| {f.stem} | failed | | | | |")
        continue
    it = max(d.get("iterations", 0), 1)
    us = 1e6 * d["loop_seconds"] / it
    devs = (d.get("devices") or {}).get("devices") or [{"kernel_times": d.get("kernel_times", [])}]
    for i, dv in enumerate(devs):
        kt = dv.get("kernel_times") or []
        if not kt:
            if i == 0:
                print(f"| {f.stem} | {us:.0f} | | | | |")
            continue
        per = ", ".join(f"{k['name']} {1e6 * k['seconds'] / it:.0f}" for k in kt)
        tot = 1e6 * sum(k["seconds"] for k in kt) / it
        print(f"| {f.stem} | {us:.0f} | {i} | {per} | {tot:.0f} | {us - tot:.0f} |")
