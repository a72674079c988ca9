#!/usr/bin/env bash
# Compensated f32 reductions (issue 15): plain vs compensated sums in the f32 GPU kernels,
# what they cost (loop seconds per iteration) and bring (the true relative residual
# ‖b − Ax‖/‖b‖, recomputed in f64, that the solve attains when asked for rtol 1e-12).
#
#   bench/compensated.sh [KRYLOV_BINARY]      # default target/release/krylov
#
# On lavapipe: KRYLOV_REQUIRE_GPU=1 VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json.
# Prints one markdown table row per (problem, method, reduction); BENCHMARKS.md has the numbers.
set -euo pipefail
bin=${1:-target/release/krylov}
rows=(
  "--generate poisson2d:64|cg|pipelined|1500"
  "--generate poisson2d:64|cg|classical|1500"
  "tests/data/nos6.mtx --precond jacobi|cg|pipelined|3000"
  "tests/data/bcsstk21.mtx --precond jacobi|cg|pipelined|3000"
  "tests/data/sherman4.mtx --rhs tests/data/sherman4_rhs.mtx|bicgstab|pipelined|1000"
  "tests/data/add32.mtx|bicgstab|classical|1000"
  "tests/data/pores_1.mtx --precond jacobi|gmres|pipelined|1500"
)
echo "| problem | method | reduction | iterations | stop | true ‖b − Ax‖/‖b‖ | ms / iteration |"
echo "|---|---|---|---:|---|---:|---:|"
for row in "${rows[@]}"; do
  IFS='|' read -r problem method variant maxit <<<"$row"
  for red in plain compensated; do
    # shellcheck disable=SC2086
    json=$("$bin" solve $problem --precision f32 --device gpu --method "$method" \
      --variant "$variant" --reduction "$red" --rtol 1e-12 --max-iter "$maxit" --json || true)
    python3 -c '
import json, sys
r = json.loads(sys.argv[1])
per = 1e3 * r["loop_seconds"] / max(r["iterations_recorded"], 1)
cells = [sys.argv[2], r["method"] + " " + r["variant"], r["reduction"], str(r["iterations"]),
         r["reason"], "%.3e" % r["relative_residual"], "%.3f" % per]
print("| " + " | ".join(cells) + " |")
' "$json" "$problem"
  done
done
