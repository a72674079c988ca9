#!/usr/bin/env bash
# CG (or GMRES, CA-GMRES) on one GPU against two at 5e7 (issue #19), one process per run, in one call:
# for each problem the single-device solver (`one`, --device gpu --format csr) and the
# distributed path (`dN`, --devices N), DIST_ITERS iterations (default 1000) from x = 0 with
# rtol 0, each GPU heated during the set-up (`solve --heat`). Modes may add `.nospin` (read-backs
# waited for by a blocking fence wait only, KRYLOV_SPIN_WAIT=0), `.spin` (=1) or `.prof`
# (KRYLOV_PROFILE=1: GPU timestamps per launch; their per-submit read-back stretches a
# distributed loop several-fold, so time a plain run beside it). JSON per run under OUT.
#
#   bench/gpu/dist_where.sh [KRYLOV] [OUT]     then: python3 bench/gpu/dist_where.py OUT
#   (DIST_RUNS="problem:k:precision[:method[:s]] …", DIST_MODES="one d2 …", DIST_ITERS,
#   DIST_HEAT, DIST_ROUND)
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.dev/krylov}
OUT=${2:-${OUT:-/tmp/krylov-dist-where}}
mkdir -p "$OUT"
source bench/gpu/device_env.sh
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; "$BIN" info; } >"$OUT/info.txt" 2>&1
ITERS=${DIST_ITERS:-1000}
# --heat (DIST_HEAT=0 leaves it out): the GPUs run a streaming kernel during the set-up, so
# every timed loop starts at a busy GPU's clocks (a 15–60 s set-up lets the driver lower them).
HEAT=()
[ "${DIST_HEAT:-1}" = 1 ] && HEAT=(--heat)
# DIST_ROUND: a suffix for the file names, so repeated rounds do not overwrite each other.
ROUND=${DIST_ROUND:-}
RUNS=${DIST_RUNS:-"poisson2d:7072:f64 laplace3d:368:f64"}
# mode[.prof][.spin|.nospin]: see above; without .spin/.nospin the default (polling first on
# hardware adapters)
MODES=${DIST_MODES:-"one d1 d2 d2.nospin"}
for run in $RUNS; do
    # problem:k:precision[:method[:s]] — method cg (default), gmres or cagmres (s: --s-step),
    # restart 30
    IFS=: read -r prob k prec method s <<<"$run"
    method=${method:-cg}
    extra=()
    [ "$method" != cg ] && extra=(--restart 30)
    [ "$method" = cagmres ] && extra+=(--s-step "${s:-5}")
    for mode in $MODES; do
        base=${mode%%.*}
        case $base in
            one) dev=(--device gpu --format csr) ;;
            d*) dev=(--devices "${base#d}") ;;
        esac
        prof=0 spin=
        [[ $mode == *.prof* ]] && prof=1
        [[ $mode == *.spin* ]] && spin=1
        [[ $mode == *.nospin* ]] && spin=0
        tag="$prob-$k-$prec-$mode$ROUND"
        [ "$method" != cg ] && tag="$method${s:+$s}.$tag"
        KRYLOV_PROFILE=$prof KRYLOV_SPIN_WAIT=$spin /usr/bin/time -v timeout 200 "$BIN" solve --generate "$prob:$k" \
            --precision "$prec" --method "$method" "${extra[@]}" "${dev[@]}" "${HEAT[@]}" --rtol 0 --atol 0 --max-iter "$ITERS" \
            --json >"$OUT/$tag.json" 2>"$OUT/$tag.err"
        echo "$tag rc=$? $(grep -h 'Elapsed' "$OUT/$tag.err")" >&2
    done
done
