#!/usr/bin/env bash
# A/B of cg_workgroup kernel variants (KRYLOV_SHADER_DIR=exp-wg/vN) with the GPU's SM clock
# sampled meanwhile. Usage (device machine): bash bench/gpu/workgroup_ab.sh BIN OUT
# The variants of 2026-11-29 are kept in bench/results/h200-2026-11-29-workgroup/ab/kernels/:
#   for v in v1 v3 v4 v5 v6; do mkdir -p exp-wg/$v/cg
#     cp bench/results/h200-2026-11-29-workgroup/ab/kernels/cg_workgroup.$v.wgsl exp-wg/$v/cg/cg_workgroup.wgsl; done
# (they were written against the kernel of that day's step 4; v0 is the binary's own kernel).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
OUT=$2
mkdir -p "$OUT"
source bench/gpu/device_env.sh
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,power.draw --format=csv -lms 50 > "$OUT/clocks.csv" 2>&1 &
SMI=$!
for v in v0 ${VARIANTS:-v1 v2}; do
    dir=""
    [ "$v" != v0 ] && dir="exp-wg/$v"
    for rep in 1 2; do
        KRYLOV_SHADER_DIR=$dir timeout 100 "$BIN" bench --json --problem laplace3d,poisson2d \
            --sizes ${SIZES:-1e3,3e3,8e3} --method cg --variant workgroup --precision f32,f64 \
            --check-mode device --iterations 2000 --runs 3 > "$OUT/$v-$rep.jsonl" 2> "$OUT/$v-$rep.err"
        date +%T.%N >> "$OUT/marks.txt"; echo "$v-$rep" >> "$OUT/marks.txt"
    done
done
kill $SMI
