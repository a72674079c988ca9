#!/usr/bin/env bash
# No size refused (issue #16 item 3), GMRES: pipelined GMRES(30) at n = 1e7 (2D Poisson) in
# f64, whose 35-vector pool (2.8 GB) exceeds one 2 GiB storage binding and goes over two, and
# in f32 (one binding), beside CuPy's GMRES(30) at the same size; JSON under $OUT.
#
#   bench/gpu/gmres_split.sh [KRYLOV] [OUT]
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.dev/krylov}
OUT=${2:-${OUT:-/tmp/krylov-gmres-split}}
mkdir -p "$OUT"
source bench/gpu/device_env.sh
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; "$BIN" info; } >"$OUT/info.txt" 2>&1
for prec in f64 f32; do
    # 60 steps (two cycles) from x = 0, rtol 0: time per iteration = loop_seconds / iterations.
    timeout 200 "$BIN" solve --generate poisson2d:3162 --precision $prec --method gmres \
        --restart 30 --format csr --device gpu --rtol 0 --atol 0 --max-iter 60 --json \
        >"$OUT/solve-$prec.json" 2>"$OUT/solve-$prec.err"
done
timeout 200 python3 bench/gpu/cupy_bench.py --problems poisson2d --sizes 1e7 --precisions f64,f32 \
    --iters 30 --runs 3 >"$OUT/cupy.jsonl" 2>>"$OUT/err.txt"
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
for prec in ("f64", "f32"):
    p = os.path.join(out, f"solve-{prec}.json")
    if os.path.getsize(p) == 0:
        print(prec, "no report:", open(os.path.join(out, f"solve-{prec}.err")).read()[-300:]); continue
    r = json.load(open(p))
    us = r["loop_seconds"] / max(r["iterations_recorded"], 1) * 1e6
    print(prec, f"n={r['n']} {us:.0f} us/iteration, {r['iterations']} iterations, {r['reason']}, "
          f"{r['dispatches_per_iteration']:.2f} dispatches/iteration; notes: {r['notes']}")
for line in open(os.path.join(out, "cupy.jsonl")):
    print("cupy", line.strip())
PY
