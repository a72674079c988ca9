#!/usr/bin/env bash
# CA-GMRES before and after a kernel change (issue #17), one GPU, in one call: two release
# binaries (.dev-c/krylov-old.gz and .dev-c/krylov.gz, gzipped to travel) alternating over
# AB_ROUNDS rounds, each run heated (`--heat`), rtol = atol = 0 so every run does AB_ITERS
# iterations, `--device gpu --format csr`; pipelined GMRES(30) with the new binary once per
# round beside them. Prints µs per iteration (loop seconds / iterations); JSON under OUT/ab.
#
#   AB_SPECS="convdiff2d:3464:f32 poisson2d:1000:f64" AB_S="5 10" bash bench/gpu/ca_update_ab.sh
set -u
. bench/gpu/device_env.sh
mkdir -p .dev && gunzip -c .dev-c/krylov-old.gz > .dev/krylov-old && gunzip -c .dev-c/krylov.gz > .dev/krylov-new
chmod +x .dev/krylov-old .dev/krylov-new
O=${OUT:-/tmp/ca-update-ab}/ab
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$O/info.txt"
iters=${AB_ITERS:-600}
run() { # tag bin args...
    local tag=$1 bin=$2
    shift 2
    timeout 200 .dev/krylov-$bin solve "$@" --device gpu --format csr --heat --rtol 0 --atol 0 \
        --max-iter "$iters" --json >"$O/$tag.json" 2>"$O/$tag.err"
    python3 -c "
import json; r=json.load(open('$O/$tag.json')); print('$tag', r['iterations'], round(r['loop_seconds']/r['iterations']*1e6,1), 'us/it')" 2>/dev/null ||
        echo "$tag failed: $(head -c 300 "$O/$tag.err")"
}
for r in $(seq 1 "${AB_ROUNDS:-2}"); do
    for spec in ${AB_SPECS:-convdiff2d:3464:f32 poisson2d:1000:f64 convdiff2d:1000:f32}; do
        IFS=: read -r prob k prec <<<"$spec"
        for s in ${AB_S:-5 10}; do
            for b in old new; do
                run "$prob-$k-$prec-ca$s-$b-$r" $b --generate "$prob:$k" --precision "$prec" \
                    --method cagmres --s-step "$s" --restart 30
            done
        done
        run "$prob-$k-$prec-gmres-new-$r" new --generate "$prob:$k" --precision "$prec" \
            --method gmres --restart 30
    done
done | tee "$O/ab.txt"
