#!/usr/bin/env bash
# One device call for the performance model's GMRES variants (issue 18): calibrate (every
# modelled variant), then validate GMRES(30) pipelined, fused and p1 on
# bench/model_matrices_gmres.txt, everything under $2 (its profile in $2/profile). A third
# argument limits the validation's seconds (what is measured by then is kept).
#   bash bench/gpu/model_gmres_call.sh KRYLOV_BIN OUT_DIR [VALIDATION_SECONDS]
set -u
krylov=$1
out=$2
limit=${3:-100000}
mkdir -p "$out"
export KRYLOV_PROFILE_DIR=$out/profile KRYLOV_REQUIRE_GPU=1
start=$(date +%s)
"$krylov" calibrate --json > "$out/profile.json" 2> "$out/calibrate.log"
echo "calibrate: exit $? after $(( $(date +%s) - start )) s" | tee -a "$out/calls.log"
python3 bench/gpu/circuit_mtx.py /tmp/circuit.mtx
timeout "$limit" python3 bench/model_validate.py "$krylov" "$out/gmres" \
    --matrices bench/model_matrices_gmres.txt --runs "${RUNS:-3}" --iters 60 \
    --variant pipelined,fused,p1 > "$out/gmres.log" 2>&1
echo "gmres validation: exit $? after $(( $(date +%s) - start )) s" | tee -a "$out/calls.log"
