#!/usr/bin/env bash
# One-workgroup GMRES (`--variant workgroup`: a whole GMRES(m) cycle in one launch of one
# workgroup) against p(1)-GMRES, fused GMRES and CuPy, in one device call.
# Usage (device machine): [VARIANT_DIR=DIR] bash bench/gpu/workgroup_gmres_call.sh BIN OUT
#   1. the same-run table: poisson2d 1e3, 4e3, 1e4, GMRES(30) fused / p1 / workgroup, device
#      mode, f32 and f64 (rows beyond one workgroup's memory are refused and noted), + CuPy;
#   2. steady state: 600-step loops (20 cycles) at 5e2–1e4, f32 and f64;
#   3. with VARIANT_DIR: the same loops alternating the built-in kernel and
#      DIR/gmres/gmres_workgroup.wgsl (KRYLOV_SHADER_DIR), ROUNDS (default "1 2");
#   4. time to solution (rtol 1e-8 f64, 1e-5 f32) on the shared nonsymmetric matrices
#      (MATRICES: names in tests/data);
#   5. GPU time per launch (KRYLOV_PROFILE) at 1e3 and 1e4.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
OUT=$2
mkdir -p "$OUT"
source bench/gpu/device_env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; } > "$OUT/info.txt" 2>&1
SIZES=1e3,4e3,1e4 PROBLEMS=poisson2d METHODS=gmres VARIANTS=fused,p1,workgroup CHECK_MODES=device \
    KRYLOV_TIMEOUT=150 CUPY_TIMEOUT=150 KRYLOV_BIN="$BIN" OUT="$OUT/cmp" bash bench/gpu/compare.sh > "$OUT/cmp.log" 2>&1
loops() { # $1 tag, $2 variants, [KRYLOV_SHADER_DIR from the caller]
    timeout 150 "$BIN" bench --json --problem poisson2d --sizes 5e2,1e3,2e3,4e3,1e4 --method gmres \
        --variant "$2" --check-mode device --iterations 600 --runs 3 --precision f32,f64 \
        > "$OUT/loop600-$1.jsonl" 2> "$OUT/loop600-$1.err"
}
loops all p1,workgroup
if [ -n "${VARIANT_DIR:-}" ]; then
    for round in ${ROUNDS:-1 2}; do
        loops "base-$round" workgroup
        KRYLOV_SHADER_DIR=$VARIANT_DIR loops "v-$round" workgroup
    done
fi
for m in ${MATRICES:-add32 jpwh_991 sherman4 pores_1 pde2961 Trefethen_2000 west0479}; do
    for p in f64 f32; do
        rtol=1e-8
        [ "$p" = f32 ] && rtol=1e-5
        for v in p1 workgroup; do
            timeout 60 "$BIN" solve "tests/data/$m.mtx" --device gpu --precision $p --method gmres \
                --variant $v --rtol $rtol --max-iter 20000 --heat --json \
                > "$OUT/tts-$m-$p-$v.json" 2> "$OUT/tts-$m-$p-$v.err"
        done
    done
done
for k in 32 100; do
    for v in p1 workgroup; do
        KRYLOV_PROFILE=1 timeout 60 "$BIN" solve --generate "poisson2d:$k" --device gpu \
            --precision f32 --method gmres --variant $v --rtol 0 --atol 0 --max-iter 60 --heat \
            --json > "$OUT/profile-$k-$v.json" 2> "$OUT/profile-$k-$v.err"
    done
done
