# The deferred cycle's read-back buffer made at set-up (issue 17): a576720 ("after") against
# the same plus Engine::reserve_read_back ("stg"), alternating, loop ms of short solves.
. bench/gpu/device_env.sh
for b in after stg; do gunzip -c .dev-c/krylov-$( [ $b = after ] && echo new || echo stg ).gz > /tmp/k-$b; chmod +x /tmp/k-$b; done
for prob in convdiff3d:22:circular convdiff3d:46:circular; do
for cfg in "--method cagmres --s-step 8 --restart 64" "--method cagmres --s-step 4 --restart 60" "--method cagmres --s-step 5 --restart 30" "--method gmres --variant pipelined --gs cgs2 --restart 60"; do
for rep in 1 2 3; do
for b in after stg; do
  /tmp/k-$b solve --generate $prob --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 $cfg --json > $OUT/r.json 2>/dev/null
  python3 -c "
import json; r=json.load(open('$OUT/r.json')); c=r['loop_counts']
print('$prob', '$(echo $cfg | awk '{print $2 $4 $6}')', '$b', $rep, r['iterations'], 'loop %.2f ms' % (1e3*r['loop_seconds']), 'readbacks', c['readbacks'], 'bytes', c['bytes_read_back'])" | tee -a $OUT/staging.txt
done; done; done; done
rm -f $OUT/r.json
