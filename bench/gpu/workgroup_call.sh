#!/usr/bin/env bash
# One-workgroup CG (`--variant workgroup`) against pipelined and fused CG, and CuPy, in one
# device call. Usage (device machine): bash bench/gpu/workgroup_call.sh BIN OUT
#   1. steady state: 2000-iteration loops, poisson2d and laplace3d from 1e2 to 1e4 rows, f32
#      and f64, CG pipelined / fused / workgroup (rows over the workgroup's memory skipped);
#   2. the same-run table protocol (30 iterations, median of 5) with CuPy, poisson2d;
#   3. time to solution (rtol 1e-6, Jacobi) on the SPD matrices of tests/data that fit;
#   4. GPU time per kernel (--profile) at 1e3 and 4e3.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
OUT=$2
mkdir -p "$OUT"
source bench/gpu/device_env.sh
SIZES=${SIZES:-5e2,1e3,2e3,3e3,4e3,6e3,8e3}
timeout 150 "$BIN" bench --json --problem poisson2d,laplace3d --sizes $SIZES --method cg \
    --variant pipelined,fused,workgroup --precision f32,f64 --check-mode device \
    --iterations 2000 --runs 3 > "$OUT/loop2000.jsonl" 2> "$OUT/loop2000.err"
SIZES=$SIZES PROBLEMS=poisson2d METHODS=cg VARIANTS=pipelined,fused,workgroup CHECK_MODES=device \
    KRYLOV_TIMEOUT=150 CUPY_TIMEOUT=150 KRYLOV_BIN="$BIN" OUT="$OUT/cmp" \
    bash bench/gpu/compare.sh > "$OUT/cmp.log" 2>&1
for m in 494_bus nos6 bcsstk21 mesh1e1 bcsstk01; do
    for p in f32 f64; do
        for v in pipelined fused workgroup; do
            for rep in 1 2; do
                timeout 60 "$BIN" solve "tests/data/$m.mtx" --device gpu --precision $p \
                    --variant $v --precond jacobi --rtol 1e-6 --json \
                    > "$OUT/tts-$m-$p-$v-$rep.json" 2> "$OUT/tts-$m-$p-$v-$rep.err"
            done
        done
    done
done
timeout 100 "$BIN" bench --json --profile --problem poisson2d --sizes 1e3,4e3 --method cg \
    --variant pipelined,fused,workgroup --precision f32,f64 --check-mode device \
    --iterations 2000 --runs 3 > "$OUT/profile.jsonl" 2> "$OUT/profile.err"
