#!/usr/bin/env python3
"""Tables of a bench/gpu/workgroup_gmres_call.sh result folder: 600-step loops (p1 against
workgroup, and the A/B rounds), time to solution (tts-*.json) and per-launch GPU times.
Usage: python3 bench/gpu/workgroup_gmres_md.py DIR"""
import glob
import json
import os
import sys


def rows(path):
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if "n" in d:
            out[(d["n"], d["precision"], d["variant"])] = d
    return out


def cell(d):
    if d is None:
        return "—"
    s = f"{d['us_per_iteration']:.1f}"
    if d["iterations_done"] != 600:
        s += f" (stopped at {d['iterations_done']}: {d['reason']})"
    return s


def main(root):
    loops = rows(os.path.join(root, "loop600-all.jsonl"))
    print("| n | prec | p1 µs/step | workgroup µs/step | workgroup / p1 |")
    print("|---:|---|---:|---:|---:|")
    for n, p in sorted({(n, p) for (n, p, _) in loops}):
        a, b = loops.get((n, p, "p1")), loops.get((n, p, "workgroup"))
        ratio = f"{b['us_per_iteration'] / a['us_per_iteration']:.2f}" if a and b else "—"
        print(f"| {n:,} | {p} | {cell(a)} | {cell(b)} | {ratio} |")
    ab = {tag: rows(os.path.join(root, f"loop600-{tag}.jsonl")) for tag in ("base-1", "v-1", "base-2", "v-2")}
    if any(ab.values()):
        print()
        print("| n | prec | built-in (rounds 1 / 2) | variant (rounds 1 / 2) |")
        print("|---:|---|---:|---:|")
        for n, p in sorted({(n, p) for (n, p, _) in ab["base-1"]}):
            get = lambda t: cell(ab[t].get((n, p, "workgroup")))
            print(f"| {n:,} | {p} | {get('base-1')} / {get('base-2')} | {get('v-1')} / {get('v-2')} |")
    print()
    print("| matrix | prec | p1: steps, ms | workgroup: steps, ms | workgroup / p1 time |")
    print("|---|---|---|---|---:|")
    names = sorted({os.path.basename(p).rsplit("-", 2)[0] for p in glob.glob(os.path.join(root, "tts-*.json"))})
    for name in names:
        for prec in ("f64", "f32"):
            runs = {}
            for v in ("p1", "workgroup"):
                path = os.path.join(root, f"{name}-{prec}-{v}.json")
                try:
                    d = json.load(open(path))
                    runs[v] = d.get("report", d)
                except (OSError, ValueError):
                    err = path[:-5] + ".err"
                    runs[v] = open(err).read().strip().splitlines()[-1][:90] if os.path.exists(err) else "missing"
            def c(r):
                if isinstance(r, str):
                    return r
                why = "conv." if r["reason"] == "converged" else r["reason"]
                return f"{r['iterations']} ({why}), {r['loop_seconds'] * 1e3:.2f}"
            p, w = runs["p1"], runs["workgroup"]
            ratio = f"{w['loop_seconds'] / p['loop_seconds']:.2f}" if not isinstance(p, str) and not isinstance(w, str) else "—"
            print(f"| {name[4:]} | {prec} | {c(p)} | {c(w)} | {ratio} |")
    print()
    for path in sorted(glob.glob(os.path.join(root, "profile-*.json"))):
        try:
            r = json.load(open(path))
        except ValueError:
            continue
        r = r.get("report", r)
        ks = ", ".join(f"{k['name']} {k['calls']}× {k['seconds'] * 1e6 / k['calls']:.1f} µs" for k in r["kernel_times"])
        print(f"- {os.path.basename(path)}: {ks}")


if __name__ == "__main__":
    main(sys.argv[1])
