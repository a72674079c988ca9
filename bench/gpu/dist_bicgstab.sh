#!/usr/bin/env bash
# BiCGStab on several GPUs (issue #19): the pipelined recurrence (paper 000 Alg. 4, two phases
# per iteration) against the classical one (three), on one GPU with the single-device solver
# and on the distributed path with one and two devices, same run. 2D Poisson, 200 iterations
# from x = 0 (rtol 0); time per iteration = loop_seconds / iterations. JSON per run under
# $OUT and a table on stdout (and in $OUT/table.md).
#
#   bench/gpu/dist_bicgstab.sh [KRYLOV] [OUT] [small]     (small: a lavapipe-sized check)
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.dev/krylov}
OUT=${2:-${OUT:-/tmp/krylov-dist-bicgstab}}
MODE=${3:-full}
mkdir -p "$OUT"
source bench/gpu/device_env.sh 2>/dev/null || true
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; "$BIN" info; } >"$OUT/info.txt" 2>&1
ITERS=200
SIZES=${SIZES:-"1000:f32 1000:f64 3162:f32 3162:f64"}
DEVS=${DEVS:-"d1 d2"}
if [ "$MODE" = small ]; then
    SIZES="60:f64"
    ITERS=20
    DEVS="d1 d0,0"
fi
for sp in $SIZES; do
    IFS=: read -r k prec <<<"$sp"
    for variant in pipelined classical; do
        for mode in one $DEVS; do
            case $mode in
                one) dev=(--device gpu --format csr) ;;
                d*) dev=(--devices "${mode#d}") ;;
            esac
            tag="poisson2d-$k-$prec-$variant-$mode"
            timeout 200 "$BIN" solve --generate "poisson2d:$k" --precision "$prec" --method bicgstab \
                --variant "$variant" "${dev[@]}" --rtol 0 --atol 0 --max-iter $ITERS --json \
                >"$OUT/$tag.json" 2>"$OUT/$tag.err"
            echo "$tag rc=$?" >&2
        done
    done
done
python3 - "$OUT" <<'PY' | tee "$OUT/table.md"
import glob, json, os, sys
out = sys.argv[1]
rows = {}
for path in glob.glob(os.path.join(out, "*.json")):
    _, k, prec, variant, mode = os.path.basename(path)[:-5].split("-")
    try:
        r = json.load(open(path))
    except (json.JSONDecodeError, OSError):
        continue
    rows[(int(k), prec, variant, mode)] = r
print("| n | prec | variant | where | µs/iteration | host syncs/iteration | launches/iteration | iterations | exchange share |")
print("|---|---|---|---|---|---|---|---|---|")
for key in sorted(rows, key=lambda t: (t[0], t[1], t[3], t[2])):
    k, prec, variant, mode = key
    r = rows[key]
    us = r["loop_seconds"] / max(r["iterations"], 1) * 1e6
    d = r.get("devices") or {}
    share = f"{100 * d['exchange_share']:.1f} %" if d.get("exchange_share") is not None else ""
    where = {"one": "1 GPU (single-device solver)"}.get(mode, f"{mode[1:]} device(s), distributed")
    print(f"| {r['n']:.3g} | {prec} | {variant} | {where} | {us:.0f} | {r['syncs_per_iteration']:.2f} | "
          f"{r['dispatches_per_iteration']:.2f} | {r['iterations']} | {share} |")
PY
