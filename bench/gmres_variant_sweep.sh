#!/bin/bash
# GMRES's `--variant auto` (p1 up to 2e5 rows; VARIANTS="workgroup fused" for another pair)
# against fused GMRES on every matrix of
# MATRICES (default tests/data), f64 and f32, no preconditioner and Jacobi, on lavapipe:
# one JSON report per solve in the current folder, a summary line each on stdout.
# Usage: KRYLOV_BIN=target/release/krylov bash bench/gmres_variant_sweep.sh > sweep.log
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json} KRYLOV_REQUIRE_GPU=1
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
K=${KRYLOV_BIN:-target/release/krylov}
for m in ${MATRICES:-tests/data}/*.mtx; do
  b=$(basename $m .mtx); case $b in *_rhs) continue;; esac
  for prec in f64 f32; do for pc in none jacobi; do for v in ${VARIANTS:-auto fused}; do
    out=$b.$prec.$pc.$v.json
    timeout 300 $K solve $m --method gmres --variant $v --precision $prec --precond $pc --device gpu --max-iter 3000 --json > $out 2> ${out%.json}.err
    echo "$b $prec $pc $v rc=$? $(python3 -c "
import json,sys
try:
  d=json.load(open('$out'))
except Exception as e:
  print('nojson'); sys.exit()
print(d.get('variant'),d.get('converged'),d.get('iterations'),'rel=%.2e'%(d.get('true_relative_residual') or d.get('relative_residual') or -1),'restarts',d.get('restarts'),'t=%.3f'%(d.get('solve_seconds') or 0), '|'.join(n[:60] for n in d.get('notes',[]))[:200])
")"
  done; done; done
done
