#!/usr/bin/env bash
# How the number of workgroups of the solvers' fused reducing kernels (`--max-groups`)
# changes the time per iteration of matrices whose BCSR layout has many row chunks (every
# workgroup first sums all partials of the previous kernel, so a launch pays that prologue
# once per wave of workgroups): pipelined CG / BiCGStab, f32, device mode, 40 iterations,
# median of 5, per format, for several caps.
#   fused_groups.sh KRYLOV OUT [GROUPS...]
set -euo pipefail
K=$1; OUT=$2; shift 2
GROUPS_LIST=${*:-"128 256 512 1024"}
mkdir -p "$OUT"
for g in $GROUPS_LIST; do
    "$K" bench --generate reservoir3d:40:40:10,convdiff3d:24:circular,convdiff2d:300 --method bicgstab \
        --variant pipelined --check-mode device --iterations 40 --runs 5 \
        --formats csr,bcsr1,bcsr2,bcsr4 --max-groups "$g" --bandwidth-n 0 > "$OUT/bicgstab-g$g.txt" 2>&1
    "$K" bench --generate laplace3d:40,fem2d:127,poisson2d:200,laplace3d:100 --method cg \
        --variant pipelined --check-mode device --iterations 40 --runs 5 \
        --formats csr,bcsr1,bcsr2,bcsr4,bcsr8 --max-groups "$g" --bandwidth-n 0 > "$OUT/cg-g$g.txt" 2>&1
done
for g in 256 1024; do
    "$K" bench --generate reservoir3d:40:40:10 --method bicgstab --variant pipelined --check-mode device \
        --iterations 40 --runs 3 --formats csr,bcsr1 --max-groups "$g" --bandwidth-n 0 --profile \
        > "$OUT/profile-bicgstab-g$g.txt" 2>&1
done
