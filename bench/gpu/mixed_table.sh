#!/usr/bin/env bash
# Issue 15's precision table on a real GPU, beside CuPy in the same run: for SPD and
# nonsymmetric problems (generators at n ≈ 1e6–2e6 and shipped matrices), rtol 1e-10,
# b = A·1: f64, f32 (what f32 alone attains), f32 with compensated reductions, mixed with an f64
# outer loop and mixed with a double-single outer loop (as on a GPU without f64). Each problem
# is written once (`--write-matrix`) so CuPy (bench/gpu/cupy_mixed.py) solves the same A.
# Output: $OUT/mixed_table.jsonl (ours), $OUT/mixed_cupy.jsonl (CuPy).
# Usage (device machine, repo root): bench/gpu/mixed_table.sh [KRYLOV_BINARY]
set -uo pipefail
bin=${1:-target/release/krylov}
out=${OUT:-bench/results}
. bench/gpu/device_env.sh
mkdir -p "$out"
# problem | method | preconditioner
problems=${PROBLEMS:-"poisson2d:1024|cg|none poisson2d:2048|cg|none laplace3d:128|cg|none convdiff3d:128:x:0.01|gmres|jacobi
tests/data/nos6.mtx|cg|jacobi tests/data/bcsstk21.mtx|cg|jacobi tests/data/mesh1e1.mtx|cg|none
tests/data/sherman4.mtx|bicgstab|ilu0 tests/data/add32.mtx|bicgstab|jacobi"}
for p in $problems; do
  IFS='|' read -r prob method pc <<< "$p"
  # CuPy reads the same A: a shipped file as it is, a generated one written once by a run of
  # its own (so that no timed run below pays for writing it).
  case $prob in
    *.mtx) src="$prob"; mtx="$prob";;
    *) src="--generate $prob"; mtx=$(mktemp --suffix .mtx)
       $bin solve --device cpu $src --write-matrix "$mtx" --max-iter 1 --json >/dev/null 2>&1;;
  esac
  for prec in "f64" "f32" "f32 --reduction compensated" "mixed" "mixed --outer-precision double-single"; do
    # wall_seconds: the whole process (matrix generation or reading, device start, uploads,
    # pipelines); `seconds` in the report leaves uploads and pipeline creation out.
    t0=$(date +%s.%N)
    json=$(timeout 150 $bin solve --device gpu $src --method "$method" --precond "$pc" --precision $prec \
      --rtol 1e-10 --max-iter 50000 --json 2>/dev/null | head -1)
    t1=$(date +%s.%N)
    echo "$json" |
      python3 -c "import json,sys; r=json.load(sys.stdin); r['problem']='$prob'; r['asked']='$prec'; r['wall_seconds']=$t1-$t0; r.pop('history',None); print(json.dumps(r))" \
      >> "$out/mixed_table.jsonl"
  done
  cm=cg; [ "$method" != cg ] && cm=gmres
  cpc=$pc; [ "$pc" = ilu0 ] && cpc=none
  timeout 240 python3 bench/gpu/cupy_mixed.py "$mtx" --name "$prob" --method $cm --precond $cpc \
    >> "$out/mixed_cupy.jsonl" 2>> "$out/mixed_cupy.err"
  [ "$mtx" != "$prob" ] && rm -f "$mtx"
done
