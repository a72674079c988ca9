#!/usr/bin/env bash
# Paper 004's test problems with none / Jacobi / ILU(0) / ILUT on one device: iterations, µs per
# iteration and launches per iteration, one Markdown row each (issue 14's table).
# Usage: bench/ilu_lavapipe.sh [KRYLOV_BINARY] (default target/release/krylov); device flags via
# KRYLOV_DEVICE_ARGS (default "--device gpu").
set -euo pipefail
bin=${1:-target/release/krylov}
dev=${KRYLOV_DEVICE_ARGS:---device gpu}
echo "| problem | method | precond | device | iterations | µs/iter | launches/iter | trisolve (levels L/U, dispatches/apply) |"
echo "|---|---|---|---|---|---|---|---|"
for gen in laplace3d:16 convdiff3d:16:x:0.01 convdiff3d:16:diagonal:0.01 convdiff3d:16:circular:0.01; do
  for method in bicg bicgstab gmres; do
    for pc in none jacobi ilu0 ilut; do
      $bin solve $dev --generate "$gen" --method "$method" --precond "$pc" --precision f32 \
        --rtol 1e-5 --max-iter 3000 --json 2>/dev/null | head -1 | python3 -c "
import json, sys
r = json.load(sys.stdin)
rec = max(r['iterations_recorded'], r['iterations'], 1)
us = 1e6 * r['loop_seconds'] / rec if r['loop_seconds'] else 1e6 * r['seconds'] / rec
p = r['preconditioner'] or {}
tri = '%s (%s, %s)' % (p.get('trisolve'), '/'.join(map(str, p['levels'])) if p.get('levels') else '-', p.get('dispatches_per_apply')) if p.get('trisolve') else '-'
dev = r['device']['kind'] + (' ' + r['variant'])
print('| $gen | $method | $pc | %s | %d %s | %.0f | %.1f | %s |' % (dev, r['iterations'], r['reason'] if not r['converged'] else '', us, r['dispatches_per_iteration'], tri))
"
    done
  done
done
