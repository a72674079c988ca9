#!/usr/bin/env bash
# Several GPUs in one process (issue #19): pipelined CG on one GPU (the single-device solver,
# `--device gpu`), on the distributed path with one device (`--devices 1`) and with two
# (`--devices 2`), same run, 3D Laplace (7-point) and 2D Poisson (5-point) from 1e7 to 1e8
# unknowns in f64 and f32: strong scaling (same n), weak scaling (5e7 on one GPU vs 1e8 on
# two) and the exchange's share. 200 iterations (DIST_ITERS) from x = 0 (rtol 0); time per iteration =
# loop_seconds / iterations. JSON lines under $OUT, a table from bench/gpu/dist_md.py.
#
#   bench/gpu/dist.sh [KRYLOV] [OUT] [small]     (small: lavapipe-sized check of the script)
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.dev/krylov}
OUT=${2:-${OUT:-/tmp/krylov-dist}}
MODE=${3:-full}
mkdir -p "$OUT"
source bench/gpu/device_env.sh
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; "$BIN" info; } >"$OUT/info.txt" 2>&1
timeout 120 "$BIN" bench --json --sizes 1e6 --method cg --variant pipelined --precision f64 \
    --check-mode device --iterations 30 --runs 3 >"$OUT/bandwidth.jsonl" 2>>"$OUT/err.txt"
ITERS=${DIST_ITERS:-200}
if [ "$MODE" = small ]; then
    RUNS="laplace3d:20:f32:one,d1,d2 poisson2d:60:f64:one,d1,d2"
    ITERS=20
else
    # problem:k:precision:modes (one = single-device solver, dN = distributed on N devices)
    RUNS=${DIST_RUNS:-"laplace3d:216:f32:one,d1,d2 laplace3d:216:f64:one,d1,d2
          laplace3d:368:f64:one,d1,d2 laplace3d:464:f64:one,d2 laplace3d:464:f32:one,d2
          poisson2d:7072:f64:one,d1,d2 poisson2d:10000:f64:one,d2"}
fi
for run in $RUNS; do
    # problem:k:precision:modes[:method] — modes: one (single-device solver, pipelined),
    # onec (single-device, classical), dN (distributed on N devices)
    IFS=: read -r prob k prec modes method <<<"$run"
    method=${method:-cg}
    for mode in ${modes//,/ }; do
        case $mode in
            one) dev=(--device gpu --format csr) ;;
            onec) dev=(--device gpu --format csr --variant classical) ;;
            d*) dev=(--devices "${mode#d}") ;;
        esac
        tag="$prob-$k-$prec-$mode"
        [ "$method" != cg ] && tag="$method.$tag"
        /usr/bin/time -v timeout 200 "$BIN" solve --generate "$prob:$k" --precision "$prec" \
            --method "$method" "${dev[@]}" --rtol 0 --atol 0 --max-iter $ITERS --json \
            >"$OUT/$tag.json" 2>"$OUT/$tag.err"
        echo "$tag rc=$? $(grep -h 'Elapsed' "$OUT/$tag.err")" >&2
    done
done
# One profiled run (KRYLOV_PROFILE=1: GPU timestamps per launch, device 0's kernel_times).
if [ "$MODE" = full ] && [ -z "${DIST_RUNS:-}" ]; then
    KRYLOV_PROFILE=1 timeout 200 "$BIN" solve --generate laplace3d:368 --precision f64 --devices 2 \
        --rtol 0 --atol 0 --max-iter 50 --json >"$OUT/profile-laplace3d-368-f64-d2.json" 2>>"$OUT/err.txt"
fi
python3 bench/gpu/dist_md.py "$OUT" | tee "$OUT/table.md"
