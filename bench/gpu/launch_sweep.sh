#!/usr/bin/env bash
# Launch-configuration sweep of the pipelined solvers on the device machine: the same
# `krylov bench` rows under several --max-groups / --workgroup-size / --profile settings,
# one JSON-lines file per setting, then one table (bench/gpu/launch_sweep_md.py).
#
#   bash bench/gpu/launch_sweep.sh .dev/krylov $OUT/sweep
#
# Environment: SIZES (1e4,1e5,1e6,1e7), METHODS (cg,gmres), PRECISIONS (f32,f64),
# CONFIGS (a space-separated list of label=flags, flags joined by '+', e.g.
# "g256=--max-groups+256"; a token @DIR runs that setting with KRYLOV_SHADER_DIR=DIR, the
# kernels in DIR/<folder>/<name>.wgsl instead of the built-in ones), RUNS (5).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.dev/krylov}
OUT=${2:-/tmp/krylov-sweep}
mkdir -p "$OUT"
source bench/gpu/device_env.sh
SIZES=${SIZES:-1e4,1e5,1e6,1e7}
METHODS=${METHODS:-cg,gmres}
PRECISIONS=${PRECISIONS:-f32,f64}
RUNS=${RUNS:-5}
CONFIGS=${CONFIGS:-"g1024= g128=--max-groups+128 g256=--max-groups+256 g512=--max-groups+512 g2048=--max-groups+2048 wg128=--workgroup-size+128 wg512=--workgroup-size+512 prof1024=--profile prof256=--profile+--max-groups+256"}
BW=--bandwidth-n+16777216
for cfg in $CONFIGS; do
    label=${cfg%%=*}
    flags=${cfg#*=}
    shader_dir=
    case "$flags" in
        @*) shader_dir=${flags%%+*}; shader_dir=${shader_dir#@}
            case "$flags" in *+*) flags=${flags#*+} ;; *) flags= ;; esac ;;
    esac
    echo "== $label ($flags)" >&2
    start=$(date +%s)
    # shellcheck disable=SC2086
    KRYLOV_SHADER_DIR=$shader_dir timeout "${SWEEP_TIMEOUT:-120}" "$BIN" bench --json --problem poisson2d --sizes "$SIZES" \
        --method "$METHODS" --variant pipelined --check-mode device --precision "$PRECISIONS" \
        --iterations 30 --runs "$RUNS" --format auto ${BW//+/ } ${flags//+/ } \
        > "$OUT/$label.jsonl" 2> "$OUT/$label.err"
    rc=$?
    echo "   $(( $(date +%s) - start )) s, rc $rc" >&2
    BW=--bandwidth-n+0
done
