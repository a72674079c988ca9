# CA-GMRES's restart residual read back with the next cycle's blocks (issue 17): short solves,
# old (18b13f3) and new binary alternating, loop seconds and round trips; then cagmres.sh.
# Run as: for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; bash bench/results/h200-2026-11-27-fused-restart/run.sh
# (the Vulkan loader and libglvnd in .gl/, the binaries in .dev-c/: carry [".gl", ".dev-c"]).
. bench/gpu/device_env.sh
gunzip -c .dev-c/krylov.gz > /tmp/k-before && gunzip -c .dev-c/krylov-new.gz > /tmp/k-after && chmod +x /tmp/k-before /tmp/k-after
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
for prob in convdiff3d:22:circular convdiff3d:46:circular poisson2d:100; do
for cfg in "--method gmres --variant pipelined --gs cgs2 --restart 30" "--method cagmres --s-step 5 --restart 30" "--method cagmres --s-step 5 --restart 30 --basis monomial"; do
for rep in 1 2 3; do
for b in before after; do
  /tmp/k-$b solve --generate $prob --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 $cfg --json > $OUT/r.json 2>/dev/null
  python3 -c "
import json; r=json.load(open('$OUT/r.json')); c=r['loop_counts']
print('$prob', '$(echo $cfg | awk '{print $2 $NF}')', '$b', $rep, r['iterations'], r.get('cycles'), 'loop %.4f s' % r['loop_seconds'], 'readbacks', c['readbacks'], 'submits', c['submits'], 'launches', c['dispatches'])" | tee -a $OUT/short.txt
done; done; done; done
rm -f $OUT/r.json
bash bench/gpu/cagmres.sh /tmp/k-after $OUT/f64 "100 316 1000" "22 46 100" f64 > /dev/null 2>&1
rm -f $OUT/f64/err.txt; gzip $OUT/f64/cagmres.jsonl
