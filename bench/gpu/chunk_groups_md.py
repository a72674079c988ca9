#!/usr/bin/env python3
"""Medians over rounds of chunk_groups.sh's tables: one row per (method, matrix, format),
one column per cap (µs per iteration).  chunk_groups_md.py OUT"""
import collections, glob, re, statistics, sys

t = collections.defaultdict(list)
caps = set()
for f in glob.glob(f"{sys.argv[1]}/*-cap*-r*.txt"):
    cap = int(re.search(r"cap(\d+)", f).group(1))
    caps.add(cap)
    for line in open(f):
        p = line.split()
        if len(p) > 8 and p[1].isdigit():
            t[(p[4], p[0], p[3], cap)].append(float(p[8]))
caps = sorted(caps)
keys = sorted({k[:3] for k in t})
print("| method | matrix | format | " + " | ".join(f"cap {c}" for c in caps) + " |")
print("|---|---|---|" + "---:|" * len(caps))
for k in keys:
    cells = [f"{statistics.median(t[k + (c,)]):.1f}" if t.get(k + (c,)) else "—" for c in caps]
    print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")
