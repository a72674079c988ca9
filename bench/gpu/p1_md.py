#!/usr/bin/env python3
"""Tables of a bench/gpu/p1_gmres_call.sh result folder: 600-step loops (fused vs p1),
time to solution (tts-*.json[.gz]), the scattered matrix and per-kernel GPU times.
Usage: python3 bench/gpu/p1_md.py DIR"""
import glob
import gzip
import json
import os
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    return d.get("report", d)


def main(root):
    loops = {}
    for line in open(os.path.join(root, "loop600.jsonl")):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if "n" in d:
            loops[(d["n"], d["precision"], d["variant"])] = d
    print("| n | prec | fused µs/step | p1 µs/step | p1 / fused |")
    print("|---:|---|---:|---:|---:|")
    for (n, p, v), d in sorted(loops.items()):
        if v != "fused" or (n, p, "p1") not in loops:
            continue
        q = loops[(n, p, "p1")]
        f, g = d["us_per_iteration"], q["us_per_iteration"]
        note = "" if q["iterations_done"] == 600 else f" (p1 stopped at {q['iterations_done']}: {q['reason']})"
        print(f"| {n:,} | {p} | {f:.1f} | {g:.1f}{note} | {g / f:.2f} |")
    print()
    print("| matrix | prec | fused: steps, ms | p1: steps, ms | p1 restarts | p1 / fused time |")
    print("|---|---|---|---|---:|---:|")
    names = sorted({os.path.basename(p).rsplit("-", 2)[0] for p in glob.glob(os.path.join(root, "tts-*"))})
    for name in names:
        for prec in ("f64", "f32"):
            runs = {}
            for v in ("fused", "p1"):
                hits = glob.glob(os.path.join(root, f"{name}-{prec}-{v}.json*"))
                if hits:
                    runs[v] = load(hits[0])
            if len(runs) < 2:
                continue
            f, p = runs["fused"], runs["p1"]
            cell = lambda r: f"{r['iterations']} ({r['reason'] if r['reason'] != 'converged' else 'conv.'}), {r['loop_seconds'] * 1e3:.2f}"
            fell = " (fell back)" if any("went on as fused" in n for n in p["notes"]) else ""
            print(f"| {name[4:]} | {prec} | {cell(f)} | {cell(p)} | {p['restarts']}{fell} | {p['loop_seconds'] / f['loop_seconds']:.2f} |")
    print()
    for path in sorted(glob.glob(os.path.join(root, "profile-*.json*"))):
        r = load(path)
        ks = ", ".join(f"{k['name']} {k['calls']}× {k['seconds'] * 1e6 / k['calls']:.1f} µs" for k in r["kernel_times"])
        print(f"- {os.path.basename(path)}: {ks}")


if __name__ == "__main__":
    main(sys.argv[1])
