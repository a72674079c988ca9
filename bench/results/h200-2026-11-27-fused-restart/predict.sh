# The last cycle records only the blocks the cycle before predicts it needs (issue 17):
# d4688cf ("arn") and the prediction of the last cycle's blocks ("pred") alternating, loop ms.
. bench/gpu/device_env.sh
for b in arn pred; do gunzip -c .dev-c/krylov-$b.gz > /tmp/k-$b; chmod +x /tmp/k-$b; done
for prob in convdiff3d:22:circular convdiff3d:46:circular poisson2d:100 convdiff3d:100:circular; do
for cfg in "--method cagmres --s-step 8 --restart 64" "--method cagmres --s-step 4 --restart 60" "--method cagmres --s-step 5 --restart 30" "--method gmres --variant pipelined --gs cgs2 --restart 64" "--method gmres --variant pipelined --gs cgs2 --restart 30"; do
for rep in 1 2 3; do
for b in arn pred; do
  /tmp/k-$b solve --generate $prob --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 $cfg --json > $OUT/r.json 2>/dev/null
  python3 -c "
import json; r=json.load(open('$OUT/r.json')); c=r['loop_counts']
print('$prob', '$(echo $cfg | awk '{print $2 $4 $6 $8}')', '$b', $rep, r['iterations'], 'loop %.2f ms' % (1e3*r['loop_seconds']), 'launches', c['dispatches'], 'reductions', c['reductions'], 'recorded', r['iterations_recorded'], 'readbacks', c['readbacks'])" >> $OUT/predict.txt
done; done; done; done
rm -f $OUT/r.json
python3 - $OUT/predict.txt <<'PY'
import collections, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    p = l.split(); d[(p[0], p[1], p[2])].append((float(p[6]), p[4], p[9], p[11], p[13], p[15]))
for k, v in d.items():
    print(*k, 'it', v[0][1], ' '.join('%.2f' % x[0] for x in v), 'launches', v[0][2], 'reductions', v[0][3], 'recorded', v[0][4], 'readbacks', v[0][5])
PY
