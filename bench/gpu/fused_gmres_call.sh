#!/usr/bin/env bash
# Fused GMRES (two launches per step) against pipelined GMRES (four) and CuPy in one device
# call. Usage (device machine): bash bench/gpu/fused_gmres_call.sh BIN OUT
#   1. the same-run table: poisson2d 1e3–1e7, GMRES(30) pipelined and fused, device mode,
#      + CuPy (its CG, BiCGStab and GMRES rows);
#   2. laplace3d 1e4–1e7 (7-point stencil);
#   3. steady state: 600-iteration loops (20 cycles) at 1e3–1e6;
#   4. CGS2 and Jacobi at 1e4–1e6, and a scattered matrix (random-spd:n:7, SELL) at 1e5–1e6.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
OUT=$2
mkdir -p "$OUT"
source bench/gpu/device_env.sh
PROBLEMS=poisson2d METHODS=gmres VARIANTS=pipelined,fused CHECK_MODES=device KRYLOV_TIMEOUT=240 \
    CUPY_TIMEOUT=150 KRYLOV_BIN="$BIN" OUT="$OUT/cmp" bash bench/gpu/compare.sh > "$OUT/cmp.log" 2>&1
timeout 120 "$BIN" bench --json --problem laplace3d --sizes 1e4,1e5,1e6,1e7 --method gmres \
    --variant pipelined,fused --check-mode device --iterations 30 --runs 5 \
    > "$OUT/laplace3d.jsonl" 2> "$OUT/laplace3d.err"
timeout 150 "$BIN" bench --json --problem poisson2d --sizes 1e3,1e4,1e5,1e6 --method gmres \
    --variant pipelined,fused --check-mode device --iterations 600 --runs 3 --precision f32,f64 \
    > "$OUT/loop600.jsonl" 2> "$OUT/loop600.err"
for extra in "--gs cgs2" "--precond jacobi"; do
    tag=$(echo "$extra" | tr -d ' -')
    for k in 100 316 1000; do
        for v in pipelined fused; do
            timeout 60 "$BIN" solve --generate "poisson2d:$k" --device gpu --precision f32 \
                --method gmres --variant $v $extra --rtol 0 --atol 0 --max-iter 300 --heat --json \
                > "$OUT/$tag-$k-$v.json" 2> "$OUT/$tag-$k-$v.err"
        done
    done
done
for n in 100000 1000000; do
    for v in pipelined fused; do
        timeout 60 "$BIN" solve --generate "random-spd:$n:7" --device gpu --precision f32 \
            --method gmres --variant $v --rtol 0 --atol 0 --max-iter 300 --heat --json \
            > "$OUT/random-$n-$v.json" 2> "$OUT/random-$n-$v.err"
    done
done
# Per-kernel GPU time (timestamps), f32, 60 steps.
for k in 100 1000; do
    for v in pipelined fused; do
        KRYLOV_PROFILE=1 timeout 60 "$BIN" solve --generate "poisson2d:$k" --device gpu \
            --precision f32 --method gmres --variant $v --rtol 0 --atol 0 --max-iter 60 --heat \
            --json > "$OUT/profile-$k-$v.json" 2> "$OUT/profile-$k-$v.err"
    done
done
