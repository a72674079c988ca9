#!/usr/bin/env bash
# One device call for the performance model (issue 18): calibrate, then validate on the GPU
# list and the held-out list, everything under $2 (its profile in $2/profile).
#   bash bench/gpu/model_call.sh KRYLOV_BIN OUT_DIR
set -u
krylov=$1
out=$2
mkdir -p "$out"
export KRYLOV_PROFILE_DIR=$out/profile KRYLOV_REQUIRE_GPU=1
start=$(date +%s)
"$krylov" calibrate --json > "$out/profile.json" 2> "$out/calibrate.log"
echo "calibrate: exit $? after $(( $(date +%s) - start )) s" | tee -a "$out/calls.log"
python3 bench/gpu/circuit_mtx.py /tmp/circuit.mtx
python3 bench/model_validate.py "$krylov" "$out/validation" --matrices bench/model_matrices_gpu.txt \
    --runs 5 --iters 40 --variant pipelined,fused > "$out/validation.log" 2>&1
echo "validation: exit $? after $(( $(date +%s) - start )) s" | tee -a "$out/calls.log"
python3 bench/model_validate.py "$krylov" "$out/heldout" --matrices bench/model_matrices_heldout.txt \
    --runs 5 --iters 40 --variant pipelined,fused > "$out/heldout.log" 2>&1
echo "held-out: exit $? after $(( $(date +%s) - start )) s" | tee -a "$out/calls.log"
