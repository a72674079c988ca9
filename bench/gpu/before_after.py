#!/usr/bin/env python3
"""Compares two `krylov bench --json` outputs of the same configurations (e.g. two builds
in one device call): launch/transfer/iteration counts per row, and the after/before ratio
of µs per iteration (geometric mean overall and per method, the extreme rows).

usage: before_after.py BEFORE.jsonl AFTER.jsonl [LABEL]"""
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jsonl  # noqa: E402  (the one JSON-lines reader of bench/gpu)


def load(path):
    """Per-iteration rows keyed by their configuration."""
    rows, _meta = jsonl.load(path)
    return {
        (r["problem"], r["n"], r["method"], r["precision"], r["variant"], r["check_mode"]): r
        for r in rows
        if "us_per_iteration" in r
    }


def gmean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main():
    before, after = load(sys.argv[1]), load(sys.argv[2])
    label = sys.argv[3] if len(sys.argv) > 3 else f"{sys.argv[1]} -> {sys.argv[2]}"
    keys = [k for k in before if k in after]
    differ = [
        k for k in keys
        if before[k]["dispatches_per_iteration"] != after[k]["dispatches_per_iteration"]
        or before[k]["transfers_per_iteration"] != after[k]["transfers_per_iteration"]
        or before[k]["iterations"] != after[k]["iterations"]
    ]
    ratio = {k: after[k]["us_per_iteration"] / before[k]["us_per_iteration"] for k in keys}
    r = list(ratio.values())
    print(f"{label}: {len(keys)} rows, counts differ in {len(differ)}; after/before µs/iter "
          f"geo mean {gmean(r):.3f}, median {statistics.median(r):.3f}, range {min(r):.2f}-{max(r):.2f}")
    for m in sorted({k[2] for k in keys}):
        print(f"  {m}: {gmean([v for k, v in ratio.items() if k[2] == m]):.3f}")
    for k in differ:
        print("  COUNTS DIFFER", k)


if __name__ == "__main__":
    main()
