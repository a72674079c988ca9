#!/usr/bin/env bash
# Issue 14's table on a real GPU, beside CuPy in the same run: paper 004's problems (3D Laplace
# 7-point; 3D convection–diffusion, upwind, convection in x / diagonal / circular) with BiCG,
# BiCGStab and GMRES(30) and none / Jacobi / ILU(0) / ILUT, f64, rtol 1e-8, b = A·1. Each problem is
# written once by `krylov solve --write-matrix` so that CuPy (bench/gpu/cupy_ilu.py) solves
# the same A. Output: $OUT/ilu_table.jsonl (ours) and $OUT/ilu_cupy.jsonl (CuPy).
# Usage (device machine, repo root): bench/gpu/ilu_table.sh [KRYLOV_BINARY] [K...]
set -uo pipefail
bin=${1:-target/release/krylov}
shift || true
sizes=${*:-32 64}
out=${OUT:-bench/results}
. bench/gpu/device_env.sh
mkdir -p "$out"
for k in $sizes; do
  for gen in laplace3d:$k convdiff3d:$k:x:0.01 convdiff3d:$k:diagonal:0.01 convdiff3d:$k:circular:0.01; do
    mtx=$(mktemp --suffix .mtx)
    first=1
    # bicg:classical with ilu0 is the classical twin of the concurrent BiCG (both applies and
    # both products one after the other).
    for method in bicg bicg:classical bicgstab gmres; do
      for pc in none jacobi ilu0 ilut; do
        [ "$method" = bicg:classical ] && [ $pc != ilu0 ] && continue
        w=""; [ $first = 1 ] && w="--write-matrix $mtx"; first=0
        variant=pipelined; case $method in *:classical) variant=classical;; esac
        $bin solve --device gpu --generate "$gen" $w --method "${method%%:*}" --variant $variant --precond "$pc" \
          --precision f64 --rtol 1e-8 --max-iter 5000 --json 2>/dev/null | head -1 |
          python3 -c "import json,sys; r=json.load(sys.stdin); r['problem']='$gen'; r.pop('history',None); print(json.dumps(r))" \
          >> "$out/ilu_table.jsonl"
      done
    done
    python3 bench/gpu/cupy_ilu.py "$mtx" --name "$gen" >> "$out/ilu_cupy.jsonl" 2>> "$out/ilu_cupy.err"
    rm -f "$mtx"
  done
done
