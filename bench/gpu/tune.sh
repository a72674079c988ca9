#!/usr/bin/env bash
# Tuning sweep for CG on the device machine (see bench/NOTES.md): one table per launch
# configuration, unprofiled wall time per iteration unless the config says --profile.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/krylov-tune}
mkdir -p "$OUT"
BIN=${KRYLOV_BIN:-.dev/krylov}
source bench/gpu/device_env.sh
SIZES=${SIZES:-1e3,1e4,1e5,1e6,1e7}
run() {
    echo "## $*" | tee -a "$OUT/tune.txt"
    "$BIN" bench --sizes "$SIZES" --precision f32,f64 --runs 5 --iterations 60 "$@" 2>&1 | tee -a "$OUT/tune.txt"
}
run --variant pipelined,classical --check-mode device,paper
run --variant pipelined --check-mode device --unchecked
run --variant pipelined --check-mode device --max-groups 256
run --variant pipelined --check-mode device --max-groups 4096
run --variant pipelined --check-mode device --workgroup-size 128
run --variant pipelined --check-mode device --workgroup-size 512
run --variant pipelined --check-mode device --subgroups off
run --variant pipelined --check-mode device --profile --bandwidth-n 0
