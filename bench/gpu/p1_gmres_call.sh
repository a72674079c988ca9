#!/usr/bin/env bash
# p(1)-GMRES (`--variant p1`: one launch and one global reduction per step) against fused
# GMRES (two launches), pipelined GMRES (four) and CuPy, in one device call.
# Usage (device machine): bash bench/gpu/p1_gmres_call.sh BIN OUT
#   1. the same-run table: poisson2d 1e3–1e7, GMRES(30) pipelined / fused / p1, device mode,
#      f32 and f64, + CuPy's GMRES(30) in the same call;
#   2. steady state: 600-step loops (20 cycles) at 1e3–1e6, f32 and f64;
#   3. time to solution (rtol 1e-8, f64 and f32 1e-5) on shared nonsymmetric matrices and
#      generated convection–diffusion: fused against p1 (p1's recurrences may cost steps);
#   4. a scattered matrix (random:n:7) at 1e5 and 1e6, and per-kernel GPU times at 1e4, 1e6.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
OUT=$2
mkdir -p "$OUT"
source bench/gpu/device_env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; } > "$OUT/info.txt" 2>&1
PROBLEMS=poisson2d METHODS=gmres VARIANTS=pipelined,fused,p1 CHECK_MODES=device KRYLOV_TIMEOUT=200 \
    CUPY_TIMEOUT=150 KRYLOV_BIN="$BIN" OUT="$OUT/cmp" bash bench/gpu/compare.sh > "$OUT/cmp.log" 2>&1
timeout 150 "$BIN" bench --json --problem poisson2d --sizes 1e3,1e4,1e5,1e6 --method gmres \
    --variant fused,p1 --check-mode device --iterations 600 --runs 3 --precision f32,f64 \
    > "$OUT/loop600.jsonl" 2> "$OUT/loop600.err"
for spec in "tests/data/add32.mtx" "tests/data/jpwh_991.mtx" "tests/data/sherman4.mtx" \
    "tests/data/pores_1.mtx" "--generate convdiff2d:316" "--generate convdiff3d:46:circular:0.02"; do
    tag=$(basename "${spec##* }" .mtx | tr ':' '-')
    for p in f64 f32; do
        rtol=1e-8
        [ "$p" = f32 ] && rtol=1e-5
        for v in fused p1; do
            timeout 60 "$BIN" solve $spec --device gpu --precision $p --method gmres --variant $v \
                --rtol $rtol --max-iter 20000 --heat --json \
                > "$OUT/tts-$tag-$p-$v.json" 2> "$OUT/tts-$tag-$p-$v.err"
        done
    done
done
for n in 100000 1000000; do
    for v in fused p1; do
        timeout 60 "$BIN" solve --generate "random:$n:7" --device gpu --precision f32 \
            --method gmres --variant $v --rtol 0 --atol 0 --max-iter 300 --heat --json \
            > "$OUT/random-$n-$v.json" 2> "$OUT/random-$n-$v.err"
    done
done
for k in 100 1000; do
    for v in fused p1; do
        KRYLOV_PROFILE=1 timeout 60 "$BIN" solve --generate "poisson2d:$k" --device gpu \
            --precision f32 --method gmres --variant $v --rtol 0 --atol 0 --max-iter 60 --heat \
            --json > "$OUT/profile-$k-$v.json" 2> "$OUT/profile-$k-$v.err"
    done
done
