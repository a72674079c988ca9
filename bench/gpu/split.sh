#!/usr/bin/env bash
# No size refused (issue #16 item 3): pipelined CG at n = 1e8 (2D Poisson, 5e8 non-zeros)
# in f64, whose CSR values (4.0 GB) exceed one 2 GiB storage binding and go over two, and
# in f32 (one binding), beside CuPy's CG at the same size; JSON lines under $OUT.
#
#   bench/gpu/split.sh [KRYLOV] [OUT]
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.dev/krylov}
OUT=${2:-${OUT:-/tmp/krylov-split}}
mkdir -p "$OUT"
source bench/gpu/device_env.sh
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; "$BIN" info; } >"$OUT/info.txt" 2>&1
# The streaming bandwidth of this GPU (stream_triad) for the roofline, from a small bench.
timeout 120 "$BIN" bench --json --sizes 1e6 --method cg --variant pipelined --precision f64 \
    --check-mode device --iterations 30 --runs 3 >"$OUT/bandwidth.jsonl" 2>>"$OUT/err.txt"
for prec in f64 f32; do
    # 200 iterations from x = 0 (rtol 0): time per iteration = loop_seconds / iterations.
    /usr/bin/time -v timeout 280 "$BIN" solve --generate poisson2d:10000 --precision $prec \
        --format csr --device gpu --rtol 0 --atol 0 --max-iter 200 --json \
        >"$OUT/solve-$prec.json" 2>"$OUT/solve-$prec.err"
    tail -3 "$OUT/solve-$prec.err" >&2
done
timeout 250 python3 bench/gpu/cupy_bench.py --problems poisson2d --sizes 1e8 --precisions f64,f32 \
    --iters 30 --runs 3 >"$OUT/cupy.jsonl" 2>>"$OUT/err.txt"
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
bw = None
for line in open(os.path.join(out, "bandwidth.jsonl")):
    r = json.loads(line)
    if r.get("roofline_us"):
        bw = r["bytes_per_iteration"] / r["roofline_us"] / 1e3  # GB/s
print("stream_triad bandwidth (GB/s):", bw)
for prec in ("f64", "f32"):
    p = os.path.join(out, f"solve-{prec}.json")
    if os.path.getsize(p) == 0:
        print(prec, "no report"); continue
    r = json.load(open(p))
    us = r["loop_seconds"] / max(r["iterations_recorded"], 1) * 1e6
    # bench::bytes_per_iteration of pipelined CG: the SpMV's (s + 4)·nnz + 4(n + 1) and nine
    # vector passes of s·n bytes.
    s = 8 if prec == "f64" else 4
    need = (s + 4) * r["nnz"] + 4 * (r["n"] + 1) + 9 * s * r["n"]
    roof = need / (bw * 1e3) if bw else float("nan")
    print(prec, f"n={r['n']} nnz={r['nnz']} {us:.0f} us/iteration (roofline {roof:.0f} us, x{us / roof:.2f}), "
          f"{r['dispatches_per_iteration']} dispatches, matrix {r['matrix_bytes']/1e9:.2f} GB, "
          f"{r['iterations']} iterations, reason {r['reason']}, true rel. residual {r['relative_residual']:.3e};", r["format_reason"])
for line in open(os.path.join(out, "cupy.jsonl")):
    print("cupy", line.strip())
PY
