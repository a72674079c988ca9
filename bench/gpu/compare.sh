#!/usr/bin/env bash
# krylov-wgpu vs CuPy (cuSPARSE) on the same GPU, in one run of the `device` tool.
#
# Here (build machine):  cargo build --release && mkdir -p .dev && cp target/release/krylov .dev/
#                        (and the Vulkan loader in .gl/, see the device tool's README)
# There (GPU machine):   bash bench/gpu/compare.sh            (results under $OUT)
#
# Environment: SIZES (default 1e3,1e4,1e5,1e6,1e7), PROBLEMS (poisson2d,laplace3d),
# METHODS (cg,bicgstab,gmres), PRECISIONS (f32,f64), ITERS (30), RUNS (5), FORMAT (auto),
# VARIANTS (classical,pipelined,fused; fused is CG's and GMRES's), CHECK_MODES (paper,device), KRYLOV_BIN. SPMV=1 adds
# `krylov bench --spmv` (every format, GB/s) on the generators and the shared matrices in
# tests/data.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/krylov-bench}
mkdir -p "$OUT"
BIN=${KRYLOV_BIN:-.dev/krylov}
SIZES=${SIZES:-1e3,1e4,1e5,1e6,1e7}
PROBLEMS=${PROBLEMS:-poisson2d,laplace3d}
METHODS=${METHODS:-cg,bicgstab,gmres}
PRECISIONS=${PRECISIONS:-f32,f64}
ITERS=${ITERS:-30}
RUNS=${RUNS:-5}
FORMAT=${FORMAT:-auto}  # storage format of our solvers (auto: chosen per matrix; CuPy is CSR)
PROFILE=${PROFILE:-}   # set to 1 for GPU time per kernel (timestamps distort small sizes)
# TTS=1 adds time to solution (upload + solve to rtol 1e-6 + download) for CG and GMRES.
# SKIP_ITER=1 skips the per-iteration tables (e.g. for a time-to-solution-only call).

source bench/gpu/device_env.sh
export WGPU_VALIDATION_INDIRECT_CALL=0
export PYTHONUNBUFFERED=1

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; "$BIN" info; } > "$OUT/info.txt" 2>&1
cat "$OUT/info.txt"

if [ -z "${SKIP_ITER:-}" ]; then
echo "== krylov bench" >&2
timeout "${KRYLOV_TIMEOUT:-420}" "$BIN" bench --json ${PROFILE:+--profile} --problem "$PROBLEMS" --sizes "$SIZES" --method "$METHODS" \
    --precision "$PRECISIONS" --variant "${VARIANTS:-classical,pipelined,fused}" --check-mode "${CHECK_MODES:-paper,device}" \
    --iterations "$ITERS" --runs "$RUNS" --format "$FORMAT" > "$OUT/krylov.jsonl" 2> "$OUT/krylov.err"
tail -3 "$OUT/krylov.err" >&2

echo "== cupy" >&2
timeout "${CUPY_TIMEOUT:-140}" python3 bench/gpu/cupy_bench.py --problems "$PROBLEMS" --sizes "$SIZES" --precisions "$PRECISIONS" \
    --iters "$ITERS" --runs "$RUNS" > "$OUT/cupy.jsonl" 2> "$OUT/cupy.err"
tail -3 "$OUT/cupy.err" >&2

python3 bench/gpu/table.py "$OUT/krylov.jsonl" "$OUT/cupy.jsonl" | tee "$OUT/table.md"
fi

if [ -n "${SPMV:-}" ]; then
    echo "== spmv per format" >&2
    timeout "${KRYLOV_SPMV_TIMEOUT:-200}" "$BIN" bench --spmv --json --problem "$PROBLEMS" --sizes "$SIZES" \
        --precision "$PRECISIONS" --runs 5 --repeat 50 \
        --mtx "$(ls tests/data/*.mtx | tr '\n' ',' | sed 's/,$//')" > "$OUT/spmv.jsonl" 2> "$OUT/spmv.err"
    tail -3 "$OUT/spmv.err" >&2
    python3 bench/gpu/spmv_table.py "$OUT/spmv.jsonl" | tee "$OUT/spmv.md"
fi

if [ -n "${TTS:-}" ]; then
    echo "== time to solution (rtol 1e-6)" >&2
    timeout "${KRYLOV_TTS_TIMEOUT:-150}" "$BIN" bench --json --tts --problem "$PROBLEMS" --sizes "$SIZES" \
        --method cg,gmres --precision "$PRECISIONS" --runs 3 --bandwidth-n 0 --format "$FORMAT" > "$OUT/tts.jsonl" 2> "$OUT/tts.err"
    timeout "${CUPY_TTS_TIMEOUT:-150}" python3 bench/gpu/cupy_bench.py --tts --problems "$PROBLEMS" \
        --sizes "$SIZES" --precisions "$PRECISIONS" --runs 3 > "$OUT/cupy_tts.jsonl" 2> "$OUT/cupy_tts.err"
    python3 bench/gpu/tts_table.py "$OUT/tts.jsonl" "$OUT/cupy_tts.jsonl" | tee "$OUT/tts.md"
fi
