set -u
k=.dev/krylov-main
for spec in "poisson2d:1000 f64" "poisson2d:3162 f32" "poisson2d:100 f64"; do
  set -- $spec
  for cfg in "--method cagmres --s-step 5 --restart 30 --basis monomial" "--method cagmres --s-step 8 --restart 32 --basis monomial" "--method gmres --variant pipelined --gs cgs2 --restart 30"; do
    KRYLOV_PROFILE=1 $k solve --generate $1 --precision $2 --device gpu --rtol 0 --atol 1e-300 --max-iter 304 $cfg --json > /tmp/p.json 2>/dev/null || true
    python3 -c "
import json,sys
r=json.load(open('/tmp/p.json'))
print('$1 $2 $cfg', 'it', r['iterations_recorded'], 'us/it %.1f' % (1e6*r['loop_seconds']/r['iterations_recorded']))
for k in sorted(r['kernel_times'], key=lambda k: -k.get('seconds', k.get('total_seconds', 0)) if isinstance(k, dict) else 0)[:8]: print('   ', k)
"
    # untimed
    $k solve --generate $1 --precision $2 --device gpu --rtol 0 --atol 1e-300 --max-iter 304 $cfg --json > /tmp/q.json 2>/dev/null || true
    python3 -c "
import json
r=json.load(open('/tmp/q.json')); print('   untimed us/it %.1f' % (1e6*r['loop_seconds']/r['iterations_recorded']))"
  done
done
