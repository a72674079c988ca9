# (Saved as bench/results/h100-2026-11-27-ca-f32-1e7/run.sh; ran on an H100.) 2D Poisson at 1e7 in f32 (issue 17's roofline goal): 18b13f3 ("before") and d308201
# ("after", every change timed in bench/results/h200-2026-11-27-fused-restart/) alternating, to solution (rtol 1e-6 from x = 0,
# at most 1200 iterations), then bench/gpu/cagmres.sh with the new binary at 1e7 f32.
. bench/gpu/device_env.sh
gunzip -c .dev-c/krylov.gz > /tmp/k-before; gunzip -c .dev-c/krylov-pred.gz > /tmp/k-after; chmod +x /tmp/k-before /tmp/k-after
for cfg in "--method cagmres --s-step 5 --restart 30" "--method gmres --variant pipelined --gs cgs2 --restart 30"; do
for rep in 1 2; do
for b in before after; do
  /tmp/k-$b solve --generate poisson2d:3162 --device gpu --precision f32 --rtol 1e-6 --max-iter 1200 $cfg --json > $OUT/r.json 2>/dev/null
  python3 -c "
import json; r=json.load(open('$OUT/r.json')); c=r['loop_counts']
print('poisson2d:3162 f32', '$(echo $cfg | awk '{print $2 $4 $6 $8}')', '$b', $rep, r['iterations'], 'recorded', r['iterations_recorded'], 'loop %.1f ms' % (1e3*r['loop_seconds']), 'us/it %.0f' % (1e6*r['loop_seconds']/r['iterations']), r['reason'])" | tee -a $OUT/f32.txt
done; done; done
rm -f $OUT/r.json
bash bench/gpu/cagmres.sh /tmp/k-after $OUT/f32 "3162" " " f32 > /dev/null 2>&1
rm -f $OUT/f32/err.txt; gzip $OUT/f32/cagmres.jsonl
