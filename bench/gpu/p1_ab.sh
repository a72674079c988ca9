#!/usr/bin/env bash
# A/B of a gmres_p1_step kernel variant through KRYLOV_SHADER_DIR, two rounds alternating.
# Usage (device machine): VARIANT_DIR=DIR bash bench/gpu/p1_ab.sh BIN OUT
#   DIR/gmres/gmres_p1_step.wgsl is the variant; 600-step loops of p1 GMRES at 1e3–1e6 (f32,
#   f64) and its kernel's GPU time at 1e4 and 1e5 for the built-in kernel (base) and the variant.
set -uo pipefail
BIN=$1; OUT=$2; mkdir -p "$OUT"
for round in 1 2; do
  for tag in base v; do
    dir=""; [ $tag = v ] && dir=${VARIANT_DIR:?set VARIANT_DIR to the kernel folder (gmres/gmres_p1_step.wgsl)}
    KRYLOV_SHADER_DIR=$dir timeout 120 "$BIN" bench --json --problem poisson2d --sizes 1e3,1e4,1e5,1e6 --method gmres \
      --variant p1 --check-mode device --iterations 600 --runs 3 --precision f32,f64 > "$OUT/loop-$tag-$round.jsonl" 2> "$OUT/loop-$tag-$round.err"
  done
done
for tag in base v; do
  dir=""; [ $tag = v ] && dir=$VARIANT_DIR
  for k in 100 316; do
    KRYLOV_SHADER_DIR=$dir KRYLOV_PROFILE=1 timeout 60 "$BIN" solve --generate "poisson2d:$k" --device gpu --precision f32 --method gmres --variant p1 --rtol 0 --atol 0 --max-iter 60 --heat --json > "$OUT/profile-$k-$tag.json" 2> "$OUT/profile-$k-$tag.err"
  done
done
