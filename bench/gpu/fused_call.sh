#!/usr/bin/env bash
# Fused CG (one launch per iteration) against pipelined CG and CuPy in one device call.
# Usage (device machine): bash bench/gpu/fused_call.sh BIN OUT
#   1. the same-run table: poisson2d 1e3–1e7, CG pipelined and fused, device mode, + CuPy;
#   2. laplace3d 1e4–1e7 (27-point-free 7-point stencil: more gathers per row);
#   3. steady state: 2000-iteration loops at 1e3–1e5 (f32 and f64);
#   4. a scattered matrix (random-spd, 7 per row: gathers that miss the cache) at 1e5 and
#      1e6, time per iteration of a solve to rtol 0 and 300 iterations.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
OUT=$2
mkdir -p "$OUT"
source bench/gpu/device_env.sh
PROBLEMS=poisson2d METHODS=cg VARIANTS=pipelined,fused CHECK_MODES=device KRYLOV_TIMEOUT=240 \
    CUPY_TIMEOUT=150 KRYLOV_BIN="$BIN" OUT="$OUT/cmp" bash bench/gpu/compare.sh > "$OUT/cmp.log" 2>&1
timeout 150 "$BIN" bench --json --problem laplace3d --sizes 1e4,1e5,1e6,1e7 --method cg \
    --variant pipelined,fused --check-mode device --iterations 30 --runs 5 \
    > "$OUT/laplace3d.jsonl" 2> "$OUT/laplace3d.err"
timeout 150 "$BIN" bench --json --problem poisson2d --sizes 1e3,1e4,1e5 --method cg \
    --variant pipelined,fused --check-mode device --iterations 2000 --runs 5 \
    > "$OUT/loop2000.jsonl" 2> "$OUT/loop2000.err"
for n in 100000 1000000; do
    for p in f32 f64; do
        for v in pipelined fused; do
            timeout 60 "$BIN" solve --generate "random-spd:$n:7" --device gpu --precision $p \
                --variant $v --rtol 0 --max-iter 300 --batch 300 --json \
                > "$OUT/random-$n-$p-$v.json" 2> "$OUT/random-$n-$p-$v.err"
        done
    done
done
