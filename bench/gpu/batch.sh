#!/usr/bin/env bash
# Batched CG (issue #16 items 2 and 4) against the one-by-one pipelined CG and CuPy's loop,
# in one run of the `device` tool; JSON lines under $OUT, then a markdown table.
#
#   bench/gpu/batch.sh [KRYLOV] [OUT]
#
# Throughput: `krylov batch --generate poisson2d:K --count N` (A + (k mod 7)·0.01·I, b = A·1,
# no preconditioner, rtol 1e-6) for 1000 systems of n = 1024 and 100 of n = 1e4, f32 and f64;
# the same systems `--one-by-one` and through bench/gpu/cupy_batch.py.
# Latency of one system (item 2): one workgroup running whole iterations (`krylov batch
# --count 1`, rtol 0, a fixed iteration count) against pipelined CG (`krylov solve`).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.dev/krylov}
OUT=${2:-${OUT:-/tmp/krylov-batch}}
mkdir -p "$OUT"
source bench/gpu/device_env.sh
export PYTHONUNBUFFERED=1
jsonl="$OUT/batch.jsonl"
: >"$jsonl"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; "$BIN" info; } >"$OUT/info.txt" 2>&1
emit() { # label, command... (the environment passes through)
    local label=$1
    shift
    local line
    line=$("$@" 2>>"$OUT/err.txt") || true
    echo "{\"label\": \"$label\", \"args\": \"$*\", \"result\": ${line:-null}}" >>"$jsonl"
}
for prec in f32 f64; do
    for case in 32:1000 100:100; do
        k=${case%%:*}
        count=${case#*:}
        emit batch "$BIN" batch --generate "poisson2d:$k" --count "$count" --precond none --precision $prec --device gpu --json
        emit batch "$BIN" batch --generate "poisson2d:$k" --count "$count" --precond none --precision $prec --device gpu --json
        emit one-by-one "$BIN" batch --generate "poisson2d:$k" --count "$count" --precond none --precision $prec --device gpu --json --one-by-one
    done
    # One system, fixed 2000 iterations: µs per iteration of the one-workgroup kernel and of
    # pipelined CG.
    for k in 10 32 100 316; do
        emit single "$BIN" batch --generate "poisson2d:$k" --count 1 --precond none --precision $prec --device gpu --json --rtol 0 --max-iter 2000 --batch 250
        emit pipelined "$BIN" solve --generate "poisson2d:$k" --precision $prec --device gpu --json --rtol 0 --atol 0 --max-iter 2000 --format csr
    done
done
timeout 400 python3 bench/gpu/cupy_batch.py --cases 32:1000,100:100 --precisions f32,f64 >"$OUT/cupy.jsonl" 2>>"$OUT/err.txt"
python3 bench/gpu/batch_md.py "$jsonl" "$OUT/cupy.jsonl" >"$OUT/batch.md"
cat "$OUT/batch.md"
