#!/usr/bin/env bash
# What a pool over several storage bindings costs GMRES's and CA-GMRES's kernels (issues #16,
# #17): one problem, the pool forced over more bindings with KRYLOV_MAX_BINDING_BYTES, each
# configuration once profiled (KRYLOV_PROFILE=1: GPU time per kernel) and once untimed.
#
#   KRYLOV_BIN=.dev/krylov OUT=$OUT/parts bash bench/gpu/pool_parts_profile.sh
#
# SPEC: generator (default banded:12000000:-1,0,1, tridiagonal, so that A's arrays fit in two
# bindings even at two vectors per binding); PREC; LIMITS: KRYLOV_MAX_BINDING_BYTES values
# ("-" = the adapter's own limit); CONFIGS: solver flags, ';'-separated; ITERS (300).
set -u
k=${KRYLOV_BIN:-.dev/krylov}
out=${OUT:-/tmp/pool-parts}
mkdir -p "$out"
spec=${SPEC:-banded:12000000:-1,0,1}
prec=${PREC:-f32}
# f32, n = 1.2e7: 48 MB per vector; 9, 5 and 2 vectors per binding.
limits=${LIMITS:-"- 432000000 240000000 96000000"}
IFS=';' read -r -a configs <<<"${CONFIGS:---method cagmres --s-step 15 --restart 30;--method gmres --variant pipelined --restart 30}"
iters=${ITERS:-300}
for lim in $limits; do
    for cfg in "${configs[@]}"; do
        env=()
        [ "$lim" != - ] && env=(KRYLOV_MAX_BINDING_BYTES="$lim")
        for prof in 1 0; do
            # shellcheck disable=SC2086
            env "${env[@]}" KRYLOV_PROFILE=$prof "$k" solve --generate "$spec" --precision "$prec" --device gpu \
                --format csr --rtol 0 --atol 0 --max-iter "$iters" --heat $cfg --json >"$out/r$prof.json" 2>"$out/r$prof.err"
        done
        python3 "$(dirname "$0")/kernel_profile.py" "$out/r1.json" "$out/r0.json" "limit $lim: $cfg" | tee -a "$out/profile.txt"
    done
done
