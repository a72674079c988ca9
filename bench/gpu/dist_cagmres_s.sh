#!/usr/bin/env bash
# CA-GMRES on two GPUs by block size (issue #19): CA(5, 30) and CA(10, 30) on one GPU
# (`--device gpu --format csr`) and on two (`--devices 2`), beside one GPU's pipelined
# GMRES(30), at n = 1e7 in f32; 1000 iterations from x = 0 (rtol = atol = 0: long enough for
# the clocks to recover from the set-up, see BENCHMARKS "CA-GMRES on two GPUs"); time per
# iteration = loop_seconds / iterations. JSON under $OUT/ca-s, a table on stdout.
#
#   bench/gpu/dist_cagmres_s.sh [KRYLOV] [OUT]
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.dev/krylov}
OUT=${2:-${OUT:-/tmp/krylov-dist-ca}}/ca-s
mkdir -p "$OUT"
source bench/gpu/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/info.txt" 2>&1
for prob in convdiff2d:3163 poisson2d:3163 laplace3d:216; do
    for run in "cagmres 5 one" "cagmres 5 d2" "cagmres 10 one" "cagmres 10 d2" "gmres 0 one"; do
        read -r method s mode <<<"$run"
        case $mode in one) dev=(--device gpu --format csr) ;; d2) dev=(--devices 2) ;; esac
        extra=()
        [ "$method" = cagmres ] && extra=(--s-step "$s")
        tag="${prob//:/-}-$method-s$s-$mode"
        timeout 200 "$BIN" solve --generate "$prob" --precision f32 --method "$method" "${extra[@]}" \
            --restart 30 "${dev[@]}" --rtol 0 --atol 0 --max-iter 1000 --json >"$OUT/$tag.json" 2>"$OUT/$tag.err"
        python3 - "$OUT/$tag.json" "$tag" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    print(f"{sys.argv[2]}: {r['loop_seconds'] / r['iterations'] * 1e6:.0f} µs/it, "
          f"{r['syncs_per_iteration']:.2f} syncs/it, {r['reductions_per_iteration']:.2f} reductions/it")
except Exception as e:
    print(sys.argv[2], "failed", e)
PY
    done
done
