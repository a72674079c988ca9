#!/usr/bin/env bash
# Issue 14's held-out failure classes on matrices of the same kinds (generators), every method
# with none / Jacobi (right and left) / ILU(0) / ILUT: f64, rtol 1e-8, b = A·1, one Markdown
# row each (converged or the stop reason by name, iterations, true relative residual,
# restarts, reordering, time).
# Usage: bench/hard_kinds.sh [KRYLOV_BINARY] (default target/release/krylov); device flags via
# KRYLOV_DEVICE_ARGS (default "--device cpu"; "--device gpu" on a GPU).
set -eu
bin=${1:-target/release/krylov}
dev=${KRYLOV_DEVICE_ARGS:---device cpu}
echo "| kind | matrix | method | M (side) | result | iterations | true ‖b−Ax‖/‖b‖ | restarts | rows matched | s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
row() { # kind spec method precond side
  $bin solve $dev --generate "$2" --method "$3" --precond "$4" --side "$5" --rtol 1e-8 \
    --max-iter 10000 --json 2>/dev/null | head -1 | python3 -c "
import json, sys
r = json.load(sys.stdin)
import re
ro = r.get('reordering') or ''
m = re.search(r'(\d+) of \d+ rows moved', ro)
moved = m.group(1) if m else '-'
res = 'converged' if r['converged'] else r['reason']
print('| $1 | \`$2\` (n = %d) | $3 | $4 ($5) | %s | %d | %.1e | %d | %s | %.2f |' % (r['n'], res, r['iterations'], r['relative_residual'], r['restarts'], moved, r['seconds']))
"
}
for kv in "reservoir reservoir3d:35:11:13" "convection-dominated convdiff2d:128:3000" \
          "zero diagonal cavity2d:32" "waveguide waveguide2d:64"; do
  kind=${kv% *}; spec=${kv##* }
  for method in gmres bicgstab bicg; do
    row "$kind" "$spec" "$method" none right
    row "$kind" "$spec" "$method" jacobi right
    [ "$method" != bicg ] && row "$kind" "$spec" "$method" jacobi left
    row "$kind" "$spec" "$method" ilu0 right
    row "$kind" "$spec" "$method" ilut right
  done
done
