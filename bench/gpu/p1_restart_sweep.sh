#!/usr/bin/env bash
# Where a p(1)-GMRES step's time goes with the restart length: steady-state loops (600 steps)
# and the kernel's GPU time of p1 and fused GMRES(m) for m = 2 … 60 at n = 1e4 and 1e5 (f32).
# Usage (device machine): bash bench/gpu/p1_restart_sweep.sh BIN OUT
set -uo pipefail
BIN=$1; OUT=$2; mkdir -p "$OUT"
for m in 2 5 10 20 30 60; do
  timeout 90 "$BIN" bench --json --problem poisson2d --sizes 1e4,1e5 --method gmres --restart $m \
    --variant fused,p1 --check-mode device --iterations 600 --runs 3 --precision f32 \
    > "$OUT/loop-m$m.jsonl" 2> "$OUT/loop-m$m.err"
  for v in fused p1; do
    KRYLOV_PROFILE=1 timeout 60 "$BIN" solve --generate poisson2d:100 --device gpu --precision f32 \
      --method gmres --variant $v --restart $m --rtol 0 --atol 0 --max-iter 120 --heat --json \
      > "$OUT/profile-m$m-$v.json" 2> "$OUT/profile-m$m-$v.err"
  done
done
