#!/usr/bin/env bash
# Cooperative CG (`--variant cooperative`) against fused CG, and CuPy, in one device call.
# Usage (device machine): bash bench/gpu/cooperative_call.sh BIN DIAG OUT
#   1. correctness: DIAG (examples/cooperative_check) — cooperative vs fused with the same
#      workgroups, bit for bit, both check modes, f32 and f64, 2D Poisson 9e4 and 1e6 rows;
#   2. steady state: 2000-iteration loops, poisson2d 1e3–1e7, f32 and f64, fused / cooperative;
#   3. the launch's workgroups (--max-groups 64 … 1024) at 1e4, 1e5, 1e6 (f32);
#   4. the same-run table protocol (30 iterations, median of 5) with CuPy, poisson2d;
#   5. time to solution (rtol 1e-6, Jacobi) on shared SPD matrices, fused and cooperative.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
DIAG=$2
OUT=$3
mkdir -p "$OUT"
source bench/gpu/device_env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; } > "$OUT/info.txt" 2>&1
for g in 64 1024; do
    timeout 60 "$DIAG" 300 $g 300 > "$OUT/diag-300-$g.txt" 2>&1
done
timeout 60 "$DIAG" 1000 512 200 > "$OUT/diag-1000-512.txt" 2>&1
timeout 200 "$BIN" bench --json --problem poisson2d --sizes 1e3,1e4,1e5,1e6,1e7 --method cg \
    --variant fused,cooperative --precision f32,f64 --check-mode device \
    --iterations 2000 --runs 3 > "$OUT/loop2000.jsonl" 2> "$OUT/loop2000.err"
for g in 64 128 256 512 1024; do
    timeout 60 "$BIN" bench --json --problem poisson2d --sizes 1e4,1e5,1e6 --method cg \
        --variant cooperative --precision f32 --check-mode device --max-groups $g \
        --iterations 2000 --runs 3 > "$OUT/groups-$g.jsonl" 2> "$OUT/groups-$g.err"
done
SIZES=1e3,1e4,1e5,1e6,1e7 PROBLEMS=poisson2d METHODS=cg VARIANTS=fused,cooperative CHECK_MODES=device \
    KRYLOV_TIMEOUT=150 CUPY_TIMEOUT=150 KRYLOV_BIN="$BIN" OUT="$OUT/cmp" \
    bash bench/gpu/compare.sh > "$OUT/cmp.log" 2>&1
for m in 494_bus nos6 bcsstk21 mesh1e1 bcsstk01; do
    for p in f32 f64; do
        for v in fused cooperative; do
            timeout 60 "$BIN" solve "tests/data/$m.mtx" --device gpu --precision $p \
                --variant $v --precond jacobi --rtol 1e-6 --json \
                > "$OUT/tts-$m-$p-$v.json" 2> "$OUT/tts-$m-$p-$v.err"
        done
    done
done
