#!/usr/bin/env bash
# Performance-model validation (issue 18): calibrate the device, then predicted vs measured
# time per iteration for the shared matrices and generators × every storage format, and how
# often `--format auto` (the model's pick) is within 5% of the measured-fastest format.
#
#   bench/model_validate.sh <krylov-binary> <outdir>
#
# Writes <outdir>/profile/ (the calibrated profile; KRYLOV_PROFILE_DIR points there, so the
# user's cache is left alone), <outdir>/calibrate.log, <outdir>/rows.jsonl and
# <outdir>/model_validation.md (the table for BENCHMARKS.md). No network; python3 stdlib.
# Environment: QUICK=1 (calibrate --quick), ITERS (40), RUNS (5), PROTOCOL (bench: one heated
# `krylov bench` process per matrix; solve: a fresh `krylov solve` per run), VARIANT (pipelined),
# MATRICES (a file of `label args... method` lines; default: the list in model_validate.py),
# SKIP_CALIBRATE=1 (reuse <outdir>/profile).
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 <krylov-binary> <outdir>" >&2
    exit 2
fi
BIN=$(realpath "$1")
OUT=$(mkdir -p "$2" && realpath "$2")
cd "$(dirname "$0")/.."
export KRYLOV_PROFILE_DIR="$OUT/profile"
export KRYLOV_REQUIRE_GPU=${KRYLOV_REQUIRE_GPU:-1}
mkdir -p "$KRYLOV_PROFILE_DIR"
{ "$BIN" info; } > "$OUT/info.txt" 2>&1 || true
if [ -z "${SKIP_CALIBRATE:-}" ]; then
    echo "== calibrate" >&2
    "$BIN" calibrate ${QUICK:+--quick} --json > "$OUT/profile.json" 2> "$OUT/calibrate.log"
    tail -n 5 "$OUT/calibrate.log" >&2
fi
echo "== predict vs measure" >&2
python3 bench/model_validate.py "$BIN" "$OUT" --iters "${ITERS:-40}" --runs "${RUNS:-5}" \
    --protocol "${PROTOCOL:-bench}" \
    --variant "${VARIANT:-pipelined}" ${MATRICES:+--matrices "$MATRICES"} > "$OUT/validate.log"
cat "$OUT/model_validation.md"
