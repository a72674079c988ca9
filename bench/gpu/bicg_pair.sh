#!/usr/bin/env bash
# BiCG on two devices (paper 004 §3.1, issue #19 item 3) against BiCG on one: the same
# problems (paper 004's 3D convection–diffusion with upwind differences and 3D Laplace) solved
# to rtol 1e-8 with ILU(0)
#   one  — one GPU, the concurrent variant (both recurrences in every launch, stacked M⁻¹/M⁻ᵀ)
#   onec — one GPU, classical BiCG (the recurrence the two devices run)
#   d2   — two GPUs, the A-recurrence on the first, the Aᵀ-recurrence on the second
# JSON per run under OUT, then a table (bench/gpu/bicg_pair_md.py).
#
#   bash bench/gpu/bicg_pair.sh [KRYLOV] [OUT] [small]
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.dev/krylov}
OUT=${2:-${OUT:-/tmp/krylov-bicg-pair}}
MODE=${3:-full}
mkdir -p "$OUT"
source bench/gpu/device_env.sh
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; "$BIN" info; } >"$OUT/info.txt" 2>&1
DEVS=${BICG_DEVICES:-0,1}
if [ "$MODE" = small ]; then
    RUNS="convdiff3d:12:circular:f64:ilu0 laplace3d:12::f32:jacobi"
else
    # problem:k:field:precision:precond
    RUNS=${BICG_RUNS:-"convdiff3d:64:circular:f64:ilu0 convdiff3d:100:circular:f64:ilu0
          convdiff3d:128:circular:f64:ilu0 convdiff3d:100:x:f64:ilu0 convdiff3d:100:diagonal:f32:ilu0
          laplace3d:100::f64:ilu0 convdiff3d:100:circular:f64:jacobi convdiff3d:100:circular:f64:none"}
fi
for run in $RUNS; do
    IFS=: read -r prob k field prec precond <<<"$run"
    spec="$prob:$k"
    [ -n "$field" ] && spec="$spec:$field"
    for mode in one onec d2; do
        case $mode in
            one) dev=(--device gpu) ;;
            onec) dev=(--device gpu --variant classical) ;;
            d2) dev=(--devices "$DEVS") ;;
        esac
        tag="$prob-$k-${field:-none}-$prec-$precond-$mode"
        /usr/bin/time -v timeout 300 "$BIN" solve --generate "$spec" --precision "$prec" \
            --method bicg --precond "$precond" "${dev[@]}" --rtol 1e-8 --max-iter 3000 --json \
            >"$OUT/$tag.json" 2>"$OUT/$tag.err"
        echo "$tag rc=$? $(grep -h 'Elapsed' "$OUT/$tag.err")" >&2
    done
done
python3 bench/gpu/bicg_pair_md.py "$OUT" | tee "$OUT/table.md"
