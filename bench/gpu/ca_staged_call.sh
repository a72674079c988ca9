#!/usr/bin/env bash
# CA-GMRES's block kernels before and after (issue #17), one GPU, one call: the binary before
# (.dev-c/krylov-old.gz: `ca_block_dots`'s tiles, two column groups per update pass), the new
# one (.dev-c/krylov.gz: `ca_block_dots_staged`, four groups per pass) and the new one with the
# old update kernel (KRYLOV_SHADER_DIR=.dev-c/upd-old: the staged inner products alone),
# alternating over ROUNDS rounds of `krylov bench` (2D Poisson, format auto, device mode,
# ITERS iterations, median of 3, pipelined GMRES(30) beside them for the roofline and the
# per-iteration goal); then one profiled solve per binary at 1e7 (GPU time per kernel).
#
#   ROUNDS=2 ITERS=600 bash bench/gpu/ca_staged_call.sh OUT
#
# PROFILE=0 leaves out the profiled solves; DOTS=0 the third binary's rows (the confirmation of the final rule, where the
# update kernel is the old one again).
set -u
out=${1:-/tmp/ca-staged}
. bench/gpu/device_env.sh
mkdir -p .dev "$out"
gunzip -c .dev-c/krylov-old.gz >.dev/krylov-old
gunzip -c .dev-c/krylov.gz >.dev/krylov
chmod +x .dev/krylov-old .dev/krylov
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1
iters=${ITERS:-600}
sizes=${SIZES:-1e4,1e5,1e6,1e7}
bench() { # tag bin shader_dir methods precision sizes
    KRYLOV_SHADER_DIR=$3 timeout 300 "$2" bench --json --problem poisson2d --sizes "$6" \
        --method "$4" --s-step 10,15 --variant pipelined --check-mode device \
        --iterations "$iters" --runs 3 --precision "$5" --format auto >"$out/$1.jsonl" 2>"$out/$1.err"
    python3 - "$out/$1.jsonl" "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "method" not in r:
        continue
    m = r["method"] + (f"({r['s_step']})" if r["s_step"] else "")
    print(sys.argv[2], r["precision"], r["n"], r["format"], m, round(r["us_per_iteration"], 1),
          "us/it", round(r["roofline_ratio"], 2), "x roofline", r["iterations_done"], "done")
EOF
}
for r in $(seq 1 "${ROUNDS:-2}"); do
    bench "old-f32-$r" .dev/krylov-old "" gmres,cagmres f32 "$sizes"
    bench "new-f32-$r" .dev/krylov "" gmres,cagmres f32 "$sizes"
    [ "${DOTS:-1}" = 1 ] && bench "dots-f32-$r" .dev/krylov .dev-c/upd-old cagmres f32 "$sizes"
done | tee "$out/f32.txt"
for b in old new; do
    bin=.dev/krylov
    [ $b = old ] && bin=.dev/krylov-old
    bench "$b-f64" $bin "" gmres,cagmres f64 "${F64_SIZES:-1e6,1e7}"
done | tee "$out/f64.txt"
[ "${PROFILE:-1}" = 1 ] || exit 0
for b in old new; do
    bin=.dev/krylov
    [ $b = old ] && bin=.dev/krylov-old
    for s in 10 15; do
        cfg="--method cagmres --s-step $s --restart 30"
        KRYLOV_PROFILE=1 timeout 120 $bin solve --generate poisson2d:${PROFILE_K:-3162} --precision f32 --device gpu \
            --format auto --rtol 0 --atol 0 --max-iter 300 --heat $cfg --json >"$out/p.json" 2>/dev/null
        timeout 120 $bin solve --generate poisson2d:${PROFILE_K:-3162} --precision f32 --device gpu \
            --format auto --rtol 0 --atol 0 --max-iter 300 --heat $cfg --json >"$out/q.json" 2>/dev/null
        python3 bench/gpu/kernel_profile.py "$out/p.json" "$out/q.json" "$b poisson2d:${PROFILE_K:-3162} f32 $cfg"
    done
done | tee "$out/profile.txt"
rm -f "$out/p.json" "$out/q.json"
