set -u
for f in .gl/*.deb; do dpkg -x $f / ; done; ldconfig
. bench/gpu/device_env.sh
mkdir -p .dev && for b in old new; do gunzip -c .dev-c/krylov-$b.gz > .dev/krylov-$b; chmod +x .dev/krylov-$b; done
O=$OUT/ab; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/info.txt
run() { # tag bin args...
  local tag=$1 bin=$2; shift 2
  timeout 120 .dev/krylov-$bin solve "$@" --device gpu --format csr --rtol 0 --atol 0 --json > $O/$tag.json 2> $O/$tag.err
  python3 -c "
import json; r=json.load(open('$O/$tag.json')); print('$tag', r['iterations'], round(r['loop_seconds']/r['iterations']*1e6,1), 'us/it', r['notes'][:3] if 'held in two' in str(r['notes']) else '')" 2>/dev/null || echo "$tag failed: $(head -c 300 $O/$tag.err)"
}
for r in 1 2 3; do
  for b in old new; do
    run p1e6-f64-$b-$r $b --generate poisson2d:1000 --method cagmres --precision f64 --max-iter 1000
    run c1e7-f32-$b-$r $b --generate convdiff2d:3163 --method cagmres --precision f32 --max-iter 1000
  done
done
for r in 1; do
  run p1e7-f64-ca-new-$r new --generate poisson2d:3163 --method cagmres --precision f64 --max-iter 1000
  run p1e7-f64-gmres-new-$r new --generate poisson2d:3163 --method gmres --precision f64 --max-iter 1000
done
run p1e7-f64-ca-old old --generate poisson2d:3163 --method cagmres --precision f64 --max-iter 1000
cd $OUT && tar czf ab.tgz ab && rm -rf ab
