#!/usr/bin/env bash
# CG at n = 1e8 (2D Poisson, 5e8 non-zeros), pipelined and fused, beside CuPy in one call:
# bench/gpu/split.sh's solves (200 iterations from x = 0, rtol 0, CSR; f64 over two
# storage bindings) for both variants, fused also in DIA (f32: one binding), and the
# streaming bandwidth for the roofline.
#
#   bench/gpu/fused_1e8.sh BIN OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
OUT=$2
mkdir -p "$OUT"
source bench/gpu/device_env.sh
export PYTHONUNBUFFERED=1
timeout 100 "$BIN" bench --json --sizes 1e6 --method cg --variant pipelined --precision f32,f64 \
    --check-mode device --iterations 30 --runs 3 >"$OUT/bandwidth.jsonl" 2>>"$OUT/err.txt"
solve() {
    timeout 150 "$BIN" solve --generate poisson2d:10000 --precision "$1" --format "$2" \
        --variant "$3" --device gpu --rtol 0 --atol 0 --max-iter 200 --batch 200 --json \
        >"$OUT/solve-$1-$2-$3.json" 2>"$OUT/solve-$1-$2-$3.err"
}
for prec in f32 f64; do
    for v in pipelined fused; do solve $prec csr $v; done
done
solve f32 dia fused
solve f32 dia pipelined
timeout 200 python3 bench/gpu/cupy_bench.py --problems poisson2d --sizes 1e8 --precisions f64,f32 \
    --iters 30 --runs 3 >"$OUT/cupy.jsonl" 2>>"$OUT/err.txt"
