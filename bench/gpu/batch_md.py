"""Markdown tables from bench/gpu/batch.sh: batched throughput against one-by-one solves and
CuPy's loop, and the one-workgroup kernel's time per iteration against pipelined CG.

    python3 bench/gpu/batch_md.py batch.jsonl cupy.jsonl
"""
import json
import sys


def load(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def main():
    runs = load(sys.argv[1])
    cupy = load(sys.argv[2]) if len(sys.argv) > 2 else []
    peer = {(c["n"], c["count"], c["precision"]): c for c in cupy}
    rows = {}
    for r in runs:
        res = r["result"]
        if res is None:
            continue
        if r["label"] == "batch":
            key = (res["columns"][0]["n"], res["systems"], res["precision"])
            row = rows.setdefault(key, {})
            # Two runs: the second (caches and driver warm) is the one reported; both kept.
            row.setdefault("batch", []).append(res)
        elif r["label"] == "one-by-one":
            n = None
            for other in runs:
                o = other["result"]
                if other["label"] == "batch" and o and o["systems"] == res["systems"] \
                        and o["precision"] == res["precision"] and other["args"].split("--count")[0] == r["args"].split("--count")[0]:
                    n = o["columns"][0]["n"]
            rows.setdefault((n, res["systems"], res["precision"]), {})["one"] = res
    print("| n | systems | precision | batched systems/s | pack+upload / launches / check (ms) | one by one (pipelined CG) | CuPy loop | CuPy loop with uploads | batched / CuPy | batched / one by one | max iterations | launches | converged |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(rows, key=lambda k: (k[2], k[0] or 0)):
        n, count, prec = key
        row = rows[key]
        b = row.get("batch", [None])[-1]
        one = row.get("one")
        c = peer.get((n, count, prec))
        bs = b["systems_per_second"] if b else None
        fmt = lambda v: f"{v:,.0f}" if v else "—"
        ratio = lambda x, y: f"{x / y:.0f}×" if x and y else "—"
        split = (f"{b['setup_seconds'] * 1e3:.1f} / {b['loop_seconds'] * 1e3:.1f} / {b['check_seconds'] * 1e3:.1f}"
                 if b and "setup_seconds" in b else "—")
        print(f"| {n} | {count} | {prec} | {fmt(bs)} | {split} | {fmt(one and one['systems_per_second'])} | "
              f"{fmt(c and c['systems_per_second'])} | {fmt(c and c.get('systems_per_second_with_uploads'))} | {ratio(bs, c and c['systems_per_second'])} | "
              f"{ratio(bs, one and one['systems_per_second'])} | {b['max_iterations'] if b else '—'} | "
              f"{b['launches'] if b else '—'} | {b['converged'] if b else '—'}/{b['columns_total'] if b else '—'} |")
    print()
    print("| n | precision | one workgroup (batch_cg) µs/iteration (launch loop) | iterations (stop) | launches | threads | pipelined CG µs/iteration | dispatches/iteration |")
    print("|---|---|---|---|---|---|---|---|")
    single = {}
    for r in runs:
        res = r["result"]
        if res is None:
            continue
        if r["label"] == "single":
            c = res["columns"][0]
            single.setdefault((c["n"], res["precision"]), {})["wg"] = (
                res["loop_seconds"] / max(c["iterations"], 1) * 1e6, res["launches"],
                f"{c['iterations']} ({c['reason']})", res.get("workgroup_sizes", ["?"])[0])
        elif r["label"] == "pipelined":
            single.setdefault((res["n"], res["precision"]), {})["pipe"] = (
                res["loop_seconds"] / max(res["iterations_recorded"], 1) * 1e6, res["dispatches_per_iteration"])
    for key in sorted(single, key=lambda k: (k[1], k[0])):
        s = single[key]
        wg = s.get("wg")
        pipe = s.get("pipe")
        print(f"| {key[0]} | {key[1]} | {wg[0]:.1f} | {wg[2]} | {wg[1]} | {wg[3]} | {pipe[0]:.1f} | {pipe[1]:.2f} |"
              if wg and pipe else f"| {key[0]} | {key[1]} | {wg} | | | | {pipe} | |")


if __name__ == "__main__":
    main()
