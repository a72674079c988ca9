#!/usr/bin/env bash
# A/B of the cap on the workgroups a fused solver kernel takes for BCSR's row chunks
# (KRYLOV_MAX_CHUNK_GROUPS, Tuning::max_chunk_groups): every workgroup of a fused kernel
# first sums all partials of the previous one, so G workgroups read G² partials. Pipelined
# CG / BiCGStab, f32, device mode, 40 iterations, median of 5 per run; ROUNDS rounds, the
# caps in a rotated order per round, one process per (cap, method).
#   chunk_groups.sh KRYLOV OUT [CAPS...]
set -euo pipefail
K=$1; OUT=$2; shift 2
CAPS=(${*:-256 512 1024})
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
FORMATS=csr,bcsr1,bcsr2,bcsr4,bcsr8
for r in $(seq 1 "$ROUNDS"); do
    n=${#CAPS[@]}
    for i in $(seq 0 $((n - 1))); do
        cap=${CAPS[$(((i + r) % n))]}
        KRYLOV_MAX_CHUNK_GROUPS=$cap "$K" bench --method cg --variant pipelined --check-mode device \
            --iterations 40 --runs 5 --formats $FORMATS --bandwidth-n 0 \
            --generate laplace3d:20,laplace3d:40,fem2d:127,poisson2d:200,laplace3d:100,fem2d:511,random-spd:1000000:7 \
            --mtx tests/data/Trefethen_2000.mtx,tests/data/bcsstk21.mtx > "$OUT/cg-cap$cap-r$r.txt" 2>&1
        KRYLOV_MAX_CHUNK_GROUPS=$cap "$K" bench --method bicgstab --variant pipelined --check-mode device \
            --iterations 40 --runs 5 --formats $FORMATS --bandwidth-n 0 \
            --generate reservoir3d:40:40:10,convdiff3d:24:circular,convdiff2d:300,convdiff3d:64:circular \
            --mtx tests/data/add32.mtx,tests/data/sherman4.mtx > "$OUT/bicgstab-cap$cap-r$r.txt" 2>&1
    done
done
