"""Markdown table of `krylov bench --spmv --json`: GB/s per format (paper 003 Table 3 bytes:
2 × stored values + index data) and GFLOP/s on the true non-zeros, best format marked."""
import sys

from jsonl import load

rows, meta = load(sys.argv[1])

bw = meta.get("stream_gb_per_s", 0)
print(f"Adapter: {meta.get('adapter', '?')}; streaming bandwidth (stream_triad): {bw:.0f} GB/s\n")
print("| matrix | n | nnz | prec | format | MB | µs/SpMV | GB/s (003) | % stream | GFLOP/s | rel. error |")
print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
best = {}
for r in rows:
    if r.get("refused"):
        continue
    k = (r["matrix"], r["precision"])
    if k not in best or r["seconds"] < best[k]:
        best[k] = r["seconds"]
for r in rows:
    head = f"| {r['matrix']} | {r['n']} | {r['nnz']} | {r['precision']} | {r['format']} |"
    if r.get("refused"):
        print(f"{head} – | refused: {r['refused'][:90]} | | | | |")
        continue
    mark = " **best**" if best.get((r["matrix"], r["precision"])) == r["seconds"] else ""
    pct = f"{100 * r['gb_per_s'] / bw:.0f}" if bw else "–"
    print(f"{head} {r['matrix_bytes'] / 1e6:.1f} | {r['seconds'] * 1e6:.2f}{mark} | {r['gb_per_s']:.0f} | "
          f"{pct} | {r['gflops']:.1f} | {r['relative_error']:.1e} |")
