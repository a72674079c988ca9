#!/usr/bin/env bash
# Per-kernel GPU time of CA-GMRES against pipelined GMRES (issue #17), 304 iterations from
# x = 0 (rtol 0), the monomial basis (so every cycle is blocked), each run once profiled
# (KRYLOV_PROFILE=1: GPU timestamps around every launch) and once untimed.
#
#   KRYLOV_BIN=.dev/krylov OUT=$OUT/prof VARIANTS="base:DIR new:" bash bench/gpu/cagmres_profile.sh
#
# VARIANTS: label:KRYLOV_SHADER_DIR pairs (an empty dir = the kernels built into the binary);
# SPECS: "generator precision" pairs; CONFIGS: solver flags, ';'-separated (default below);
# ITERS: iterations per run (304); HEAT=1: `--heat` (clocks up during the set-up).
set -u
k=${KRYLOV_BIN:-.dev/krylov-main}
out=${OUT:-/tmp/cagmres-profile}
variants=${VARIANTS:-"built-in:"}
mkdir -p "$out"
IFS=';' read -r -a specs <<<"${SPECS:-poisson2d:1000 f64;poisson2d:3162 f32;poisson2d:100 f64}"
configs=(
    "--method cagmres --s-step 5 --restart 30 --basis monomial"
    "--method cagmres --s-step 8 --restart 32 --basis monomial"
    "--method gmres --variant pipelined --gs cgs2 --restart 30"
)
[ -n "${CONFIGS:-}" ] && IFS=';' read -r -a configs <<<"$CONFIGS"
iters=${ITERS:-304}
heat=
[ "${HEAT:-0}" = 1 ] && heat=--heat
for spec in "${specs[@]}"; do
    set -- $spec
    for cfg in "${configs[@]}"; do
        for v in $variants; do
            label=${v%%:*}
            dir=${v#*:}
            # Pipelined GMRES does not use the CA kernels: once is enough.
            case $cfg in *"method gmres"*) [ "$v" != "${variants%% *}" ] && continue ;; esac
            # shellcheck disable=SC2086
            KRYLOV_SHADER_DIR=$dir KRYLOV_PROFILE=1 $k solve --generate $1 --precision $2 --device gpu --rtol 0 --atol 1e-300 --max-iter $iters $heat $cfg --json >"$out/p.json" 2>/dev/null || true
            # shellcheck disable=SC2086
            KRYLOV_SHADER_DIR=$dir $k solve --generate $1 --precision $2 --device gpu --rtol 0 --atol 1e-300 --max-iter $iters $heat $cfg --json >"$out/q.json" 2>/dev/null || true
            python3 "$(dirname "$0")/kernel_profile.py" "$out/p.json" "$out/q.json" "$label $1 $2 $cfg" | tee -a "$out/profile.txt"
        done
    done
done
