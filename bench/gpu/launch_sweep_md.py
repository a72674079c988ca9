#!/usr/bin/env python3
"""Table of bench/gpu/launch_sweep.sh: µs per iteration per (method, precision, n) under each
launch setting (columns), and the per-kernel GPU times of the profiled settings.

    python3 bench/gpu/launch_sweep_md.py DIR
"""
import json
import pathlib
import sys


def rows(path):
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("{") and '"method"' in line:
            yield json.loads(line)


def main():
    d = pathlib.Path(sys.argv[1])
    files = sorted(d.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    table = {}
    labels = []
    kernels = {}
    for f in files:
        label = f.stem
        labels.append(label)
        for r in rows(f):
            key = (r["method"], r["precision"], r["n"])
            table.setdefault(key, {})[label] = r["us_per_iteration"]
            if r.get("kernel_us_per_iteration"):
                kernels[(label,) + key] = r["kernel_us_per_iteration"]
    print("| method | prec | n | " + " | ".join(labels) + " |")
    print("|---|---|---|" + "---|" * len(labels))
    for key in sorted(table):
        cells = [f"{table[key][l]:.1f}" if l in table[key] else "" for l in labels]
        print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
    if kernels:
        print()
        print("| setting | method | prec | n | GPU µs per iteration per kernel |")
        print("|---|---|---|---|---|")
        for k in sorted(kernels):
            ks = ", ".join(f"{name} {us:.1f}" for name, us in kernels[k] if us >= 0.05)
            print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {ks} |")


if __name__ == "__main__":
    main()
