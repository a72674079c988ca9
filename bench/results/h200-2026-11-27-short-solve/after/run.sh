# Short solves before/after the engine's first staging buffer (issue 17): loop seconds.
. bench/gpu/device_env.sh
gunzip -c .dev-c/krylov.gz > /tmp/k-before && gunzip -c .dev-c/krylov-new.gz > /tmp/k-after && chmod +x /tmp/k-before /tmp/k-after
for prob in convdiff3d:22:circular convdiff3d:46:circular; do
for cfg in "--method gmres --variant pipelined --gs cgs2 --restart 30" "--method cagmres --s-step 5 --restart 30"; do
for rep in 1 2 3; do
for b in before after; do
  /tmp/k-$b solve --generate $prob --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 $cfg --json > $OUT/r.json 2>/dev/null
  python3 -c "
import json; r=json.load(open('$OUT/r.json')); print('$prob', '$(echo $cfg | awk '{print $2}')', '$b', $rep, r['iterations'], 'loop %.4f s' % r['loop_seconds'], 'total %.4f s' % r['seconds'])" | tee -a $OUT/short.txt
done; done; done; done
rm -f $OUT/r.json
bash bench/gpu/cagmres.sh /tmp/k-after $OUT/f64 "100 316 1000" "22 46 100" f64 > /dev/null 2>&1
rm -f $OUT/f64/err.txt; gzip $OUT/f64/cagmres.jsonl
