#!/usr/bin/env bash
# (Run from the repository root with exp-fg4/gmres/gmres_gs_update.wgsl = gmres_gs_update.batched.wgsl of this folder
# and exp-head/gmres/gmres_gs_update.wgsl = the kernel of commit cf7e9d7.)
# A/B of gmres_gs_update variants in one call (KRYLOV_SHADER_DIR), two rounds alternating.
BIN=$1; OUT=$2; mkdir -p $OUT
for round in 1 2; do
  for tag in cur fg4 head; do
    case $tag in cur) dir="";; fg4) dir=exp-fg4;; head) dir=exp-head;; esac
    variants=pipelined,fused; [ $tag = head ] && variants=pipelined
    KRYLOV_SHADER_DIR=$dir timeout 100 $BIN bench --json --problem poisson2d --sizes 1e4,1e5,1e6,1e7 --method gmres \
      --variant $variants --check-mode device --iterations 30 --runs 5 --precision f32 \
      > $OUT/ab-$tag-$round.jsonl 2> $OUT/ab-$tag-$round.err
  done
done
for tag in cur head; do
  case $tag in cur) dir="";; head) dir=exp-head;; esac
  for k in 100 1000; do
    KRYLOV_SHADER_DIR=$dir KRYLOV_PROFILE=1 timeout 60 $BIN solve --generate "poisson2d:$k" --device gpu \
      --precision f32 --method gmres --variant pipelined --rtol 0 --atol 0 --max-iter 60 --heat \
      --json > $OUT/profile-$tag-$k.json 2> $OUT/profile-$tag-$k.err
  done
done
