#!/usr/bin/env python3
"""The tables of `ca_staged_call.sh`'s folder: `ca_staged_md.py DIR`.

Reads DIR/{old,new,dots}-f32-R.jsonl (R = the rounds) and DIR/{old,new}-f64.jsonl and prints,
per precision and size, µs per iteration of pipelined GMRES(30) and CA-GMRES(10, 30) /
(15, 30) for each binary (round 1 / round 2 where there are two), and each one's ratio to
GMRES(30)'s memory roofline (`krylov bench`'s roofline_ratio, the same call's bandwidth).
"""
import glob
import json
import os
import sys
from collections import defaultdict

d = sys.argv[1]
rows = defaultdict(list)  # (prec, n, method, binary) -> [(us, ratio)]
for path in sorted(glob.glob(os.path.join(d, "*.jsonl"))):
    tag = os.path.basename(path)[:-6]
    binary = tag.split("-")[0]
    for line in open(path):
        r = json.loads(line)
        if "method" not in r:
            continue
        if r["iterations_done"] < r["iterations"]:
            continue
        m = "gmres" if r["method"] == "gmres" else f"ca{r['s_step']}"
        rows[(r["precision"], r["n"], m, binary)].append(
            (r["us_per_iteration"], r["roofline_ratio"])
        )


def cell(key):
    v = rows.get(key)
    if not v:
        return "—"
    us = " / ".join(f"{u:.1f}" for u, _ in v)
    return f"{us} ({min(r for _, r in v):.2f}×)"


for prec in ("f32", "f64"):
    ns = sorted({k[1] for k in rows if k[0] == prec})
    if not ns:
        continue
    print(f"\n{prec}: µs per iteration (× GMRES(30)'s roofline, the better round)\n")
    print("| n | GMRES(30) before | GMRES(30) after | CA(10, 30) before | CA(10, 30) staged dots | "
          "CA(10, 30) after | CA(15, 30) before | CA(15, 30) staged dots | CA(15, 30) after |")
    print("|---:|---|---|---|---|---|---|---|---|")
    for n in ns:
        cells = [cell((prec, n, "gmres", b)) for b in ("old", "new")]
        for m in ("ca10", "ca15"):
            cells += [cell((prec, n, m, b)) for b in ("old", "dots", "new")]
        print(f"| {n:,} | " + " | ".join(cells) + " |")
