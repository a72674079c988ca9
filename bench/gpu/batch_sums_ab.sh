#!/usr/bin/env bash
# A/B of two release binaries on `krylov batch` (.dev-c/krylov-old.gz against .dev-c/krylov.gz):
# 1000 systems of n = 1024 and 100 of n = 1e4, f32 and f64, three rounds, and one system for
# 2000 iterations. Usage (device machine, from the repository root, OUT set): bash bench/gpu/batch_sums_ab.sh
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; . bench/gpu/device_env.sh
mkdir -p .dev $OUT/ab; gunzip -c .dev-c/krylov.gz > .dev/krylov; gunzip -c .dev-c/krylov-old.gz > .dev/krylov-old; chmod +x .dev/*
for rep in 1 2 3; do for b in krylov-old krylov; do for prec in f32 f64; do for case in 32:1000 100:100; do k=${case%%:*}; c=${case#*:};
  .dev/$b batch --generate poisson2d:$k --count $c --precond none --precision $prec --device gpu --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('$b $prec n=$k^2 x$c', {k:v for k,v in d.items() if not isinstance(v,(list,dict))})" >> $OUT/ab/batch.txt; done; done; done; done
for b in krylov-old krylov; do for prec in f32 f64; do for k in 32 100; do .dev/$b batch --generate poisson2d:$k --count 1 --precond none --precision $prec --device gpu --json --rtol 0 --max-iter 2000 --batch 250 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('$b single $prec $k', {k:v for k,v in d.items() if not isinstance(v,(list,dict))})" >> $OUT/ab/batch.txt; done; done; done
head -c 3000 $OUT/ab/batch.txt
