#!/usr/bin/env bash
# Before/after of the solvers' workgroup count on BCSR (issue 18, run 6): the model's
# validation (bench/model_validate.py: predicted vs measured µs per iteration, fastest of 3)
# on bench/model_matrices_bcsr.txt in CSR and BCSR, with an OLD and a NEW binary taking turns
# (ROUNDS rounds), on the profile in $KRYLOV_PROFILE_DIR.
#   bench/gpu/bcsr_groups.sh OLD_BIN NEW_BIN OUTDIR
set -euo pipefail
OLD=$1 NEW=$2 OUT=$3
ROUNDS=${ROUNDS:-1}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
for r in $(seq 1 "$ROUNDS"); do
    for v in old new; do
        bin=$OLD; [ "$v" = new ] && bin=$NEW
        python3 bench/model_validate.py "$bin" "$OUT/$v-$r" --matrices bench/model_matrices_bcsr.txt \
            --formats csr,bcsr1,bcsr2,bcsr4,bcsr8 > "$OUT/$v-$r.log" 2>&1
    done
done
