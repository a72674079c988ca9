#!/usr/bin/env python3
"""Tables of bench/gpu/cooperative_call.sh's results: python3 cooperative_md.py OUT."""
import glob
import json
import os
import sys


def rows(path):
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "variant" in d:
            out.append(d)
    return out


def mark(d):
    # A loop that stopped early (rtol 0 reached f32's floor, a restart) is not a time per
    # iteration of the whole loop.
    return "" if d.get("restarts", 0) == 0 and d.get("reason") != "not_spd" else " *"


def main(out):
    loop = rows(f"{out}/loop2000.jsonl")
    by = {(d["n"], d["precision"], d["variant"]): d for d in loop}
    print("| n | prec | format | fused µs | cooperative µs | coop / fused | coop × roofline |")
    print("|---|---|---|---:|---:|---:|---:|")
    for (n, p, v), d in sorted(by.items()):
        if v != "fused":
            continue
        c = by.get((n, p, "cooperative"))
        if not c:
            continue
        print(
            f"| {n:,} | {p} | {d['format']} | {d['us_per_iteration']:.2f}{mark(d)} | "
            f"{c['us_per_iteration']:.2f}{mark(c)} | {c['us_per_iteration'] / d['us_per_iteration']:.2f} | "
            f"{c['roofline_ratio']:.2f} |"
        )
    print()
    groups = {}
    for f in sorted(glob.glob(f"{out}/groups-*.jsonl")):
        g = int(f.rsplit("-", 1)[1].split(".")[0])
        for d in rows(f):
            groups[(d["n"], g)] = d
    sizes = sorted({n for n, _ in groups})
    gs = sorted({g for _, g in groups})
    if gs:
        print("| n | " + " | ".join(f"{g} groups" for g in gs) + " |")
        print("|---|" + "---:|" * len(gs))
        for n in sizes:
            cells = []
            for g in gs:
                d = groups.get((n, g))
                cells.append(f"{d['us_per_iteration']:.2f}{mark(d)}" if d else "—")
            print(f"| {n:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
