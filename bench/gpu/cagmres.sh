#!/usr/bin/env bash
# CA-GMRES(s, m) against classical and pipelined GMRES(m), per iteration and to solution
# (issue #17): one JSON line per run into $OUT/cagmres.jsonl, then a markdown table.
#
#   bench/gpu/cagmres.sh [KRYLOV] [OUT] [POISSON_SIDES] [CONVDIFF_SIDES] [PRECISION]
#
# Per iteration: rtol 0 and max_iter = 2m + s (whole cycles, the Newton basis's Arnoldi
# cycle first), time = loop_seconds / iterations_recorded. To solution: rtol 1e-8.
# Problems: 2D Poisson (5-point) and 3D convection-diffusion (circular field), f64 unless
# PRECISION says f32 (f64 GMRES(30) at n = 1e7 exceeds one 2 GiB binding: issue #16).
set -euo pipefail
krylov=${1:-target/release/krylov}
out=${2:-${OUT:-/tmp/cagmres-bench}}
sizes=${3:-"100 316 1000 3162"}
cd_sizes=${4:-"22 46 100"}
precision=${5:-f64}
mkdir -p "$out"
jsonl="$out/cagmres.jsonl"
: >"$jsonl"
run() { # label, args...
    local label=$1
    shift
    local line
    # A run stopped by its iteration limit exits non-zero but still prints its report.
    line=$("$krylov" solve "$@" --json 2>"$out/err.txt") || true
    if [ -n "$line" ]; then
        echo "{\"label\": \"$label\", \"args\": \"$*\", \"report\": $line}" >>"$jsonl"
    else
        echo "{\"label\": \"$label\", \"args\": \"$*\", \"error\": $(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()[-400:]))' "$out/err.txt")}" >>"$jsonl"
    fi
}
configs=(
    "gmres-classical-30|--method gmres --variant classical --gs cgs2 --restart 30"
    "gmres-pipelined-30|--method gmres --variant pipelined --gs cgs2 --restart 30"
    "gmres-pipelined-60|--method gmres --variant pipelined --gs cgs2 --restart 60"
    "ca-s2-m30|--method cagmres --s-step 2 --restart 30"
    "ca-s5-m30|--method cagmres --s-step 5 --restart 30"
    "ca-s4-m60|--method cagmres --s-step 4 --restart 60"
    "ca-s5-m60|--method cagmres --s-step 5 --restart 60"
    "ca-s8-m64|--method cagmres --s-step 8 --restart 64"
    "ca-s5-m30-cgs2|--method cagmres --s-step 5 --restart 30 --tsqr cgs2"
    "ca-s8-m64-cgs2|--method cagmres --s-step 8 --restart 64 --tsqr cgs2"
)
for k in $sizes; do
    for c in "${configs[@]}"; do
        label=${c%%|*}
        args=${c#*|}
        m=$(echo "$args" | sed 's/.*--restart \([0-9]*\).*/\1/')
        # shellcheck disable=SC2086
        run "$label" --generate "poisson2d:$k" --device gpu --precision $precision --rtol 0 --atol 1e-300 --max-iter $((2 * m + 8)) $args
        # shellcheck disable=SC2086
        run "$label" --generate "poisson2d:$k" --device gpu --precision $precision --rtol 1e-8 --max-iter 4000 $args
    done
done
for k in $cd_sizes; do
    for c in "${configs[@]}"; do
        label=${c%%|*}
        args=${c#*|}
        # shellcheck disable=SC2086
        run "$label" --generate "convdiff3d:$k:circular" --device gpu --precision $precision --rtol 1e-8 --max-iter 4000 $args
    done
done
python3 "$(dirname "$0")/cagmres_md.py" "$jsonl" >"$out/cagmres.md"
cat "$out/cagmres.md"
