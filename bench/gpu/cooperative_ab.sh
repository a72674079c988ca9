#!/usr/bin/env bash
# Cooperative CG's grid barrier and buffers, A/B in one device call (kernels through
# KRYLOV_SHADER_DIR; exp-coop/ travels untracked: exp-coop/A empty, exp-coop/X/cg/cg_cooperative.wgsl
# shaders/cg/cg_cooperative.wgsl of c34b1cf patched with bench/results/h200-2026-12-07-cooperative-ab/kernels/cg_cooperative.X.diff).
# Usage: bash bench/gpu/cooperative_ab.sh BIN DIAG OUT
#   A: the committed kernel; B: no @coherent; C: the last arrival releases the others
#   through a word only the waiters read; D: C without @coherent.
# Two alternating rounds of 2000-iteration loops (poisson2d 1e3–1e6, f32/f64) with fused CG
# as the baseline; C and D also checked bit for bit against fused CG (64 workgroups).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
DIAG=$2
OUT=$3
mkdir -p "$OUT"
source bench/gpu/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/info.txt" 2>&1
for v in C D; do
    KRYLOV_SHADER_DIR=exp-coop/$v timeout 60 "$DIAG" 300 64 300 > "$OUT/diag-$v.txt" 2>&1
done
for round in 1 2; do
    timeout 60 "$BIN" bench --json --problem poisson2d --sizes 1e3,1e4,1e5,1e6 --method cg \
        --variant fused --precision f32,f64 --check-mode device --iterations 2000 --runs 3 \
        > "$OUT/fused-$round.jsonl" 2> "$OUT/fused-$round.err"
    for v in A B C D; do
        KRYLOV_SHADER_DIR=exp-coop/$v timeout 60 "$BIN" bench --json --problem poisson2d \
            --sizes 1e3,1e4,1e5,1e6 --method cg --variant cooperative --precision f32,f64 \
            --check-mode device --iterations 2000 --runs 3 > "$OUT/$v-$round.jsonl" 2> "$OUT/$v-$round.err"
    done
done
