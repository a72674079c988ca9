#!/usr/bin/env bash
# `--variant auto` on the small shared SPD matrices and 2D Poisson around the one-workgroup
# variant's limit (16 stored entries per thread): which variant each solve ran, and why.
# Usage (device machine, from the repository root, the binary in .dev/): bash bench/gpu/workgroup_auto.sh
for m in bcsstk01 mesh1e1 nos6 494_bus Trefethen_2000 ani4 bcsstk21; do for p in f32 f64; do .dev/krylov solve tests/data/$m.mtx --device gpu --precision $p --precond jacobi --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('$m', d['n'], d['nnz'], '$p', d['variant'], d['format'], d['iterations'], d['converged'], '%.2f ms solve'%(d['seconds']*1e3), '%.2f us/it'%(d['loop_seconds']/max(1,d['iterations'])*1e6))"; done; done
for k in 40 57 58 70; do .dev/krylov solve --generate poisson2d:$k --device gpu --precision f32 --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('poisson2d:$k', d['n'], d['nnz'], d['variant'], d['format'], d['iterations'], d['converged'], [n for n in d['notes'] if 'variant' in n])"; done
