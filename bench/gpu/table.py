"""Joins `krylov bench --json` and cupy_bench.py output into one Markdown table."""
import sys

from jsonl import load


ours, meta = load(sys.argv[1])
cupy, _ = load(sys.argv[2]) if len(sys.argv) > 2 else ([], {})
peer = {(r["problem"], r["n"], r["precision"], r["method"]): r["us_per_iteration"] for r in cupy}
classical = {
    (r["problem"], r["n"], r["precision"], r["method"], r["check_mode"]): r["us_per_iteration"]
    for r in ours if r["variant"] == "classical"
}
print(f"Adapter: {meta.get('adapter', '?')}; streaming bandwidth (stream_triad): "
      f"{meta.get('stream_gb_per_s', 0):.0f} GB/s\n")
print("| problem | n | nnz | format | method | prec | variant | check | µs/iter | CuPy µs/iter | ours/CuPy | "
      "classical/pipelined | roofline µs | ×roofline | GB/s | launches/it | transfers/it | GPU µs/it per kernel |")
print("|---|---:|---:|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for r in ours:
    if r.get("iterations_done", r["iterations"]) < r["iterations"]:
        # The run stopped early (e.g. a BiCGStab breakdown on b = A·1): its per-iteration
        # time averages no-op iterations and means nothing.
        r["check_mode"] += f" ⚠ {r.get('reason', '?')} at {r['iterations_done']}"
    key = (r["problem"], r["n"], r["precision"], r["method"])
    c = peer.get(key)
    us = r["us_per_iteration"]
    ratio = f"{us / c:.3f}" if c else "–"
    speedup = "–"
    if r["variant"] == "pipelined":
        cl = classical.get(key + (r["check_mode"].split(" ")[0],))
        if cl:
            speedup = f"{cl / us:.2f}"
    kernels = ", ".join(f"{k} {v:.1f}" for k, v in r.get("kernel_us_per_iteration", []))
    peer_us = f"{c:.1f}" if c else "–"
    # One row shape for every method: rows without a CuPy peer (BiCGStab) keep the format column.
    print(f"| {r['problem']} | {r['n']} | {r['nnz']} | {r.get('format', 'csr')} | {r['method']} | {r['precision']} | "
          f"{r['variant']} | {r['check_mode']} | {us:.1f} | {peer_us} | {ratio} | {speedup} | "
          f"{r['roofline_us']:.2f} | {r['roofline_ratio']:.1f} | {r['gb_per_s']:.0f} | "
          f"{r['dispatches_per_iteration']:.2f} | {r['transfers_per_iteration']:.3f} | {kernels} |")
