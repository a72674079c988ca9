. bench/gpu/device_env.sh
gunzip -c .dev-c/krylov-new.gz > /tmp/k && chmod +x /tmp/k
D=$PWD/.dev-c/sd
KRYLOV_BIN=/tmp/k OUT=$OUT/prof VARIANTS="new: chol:$D/chol" SPECS="convdiff3d:22:circular f64;poisson2d:1000 f64;poisson2d:3162 f32" bash bench/gpu/cagmres_profile.sh > /dev/null 2>&1
rm -f $OUT/prof/*.json
for prob in convdiff3d:22:circular convdiff3d:46:circular; do
for rep in 1 2 3; do
for v in new chol; do
  dir=""; [ $v = chol ] && dir=$D/chol
  for cfg in "--method cagmres --s-step 5 --restart 30" "--method gmres --variant pipelined --gs cgs2 --restart 30"; do
  KRYLOV_SHADER_DIR=$dir /tmp/k solve --generate $prob --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 $cfg --json > $OUT/r.json 2>/dev/null
  python3 -c "
import json; r=json.load(open('$OUT/r.json')); print('$prob', '$(echo $cfg | awk '{print $2}')', '$v', $rep, r['iterations'], 'loop %.4f s' % r['loop_seconds'])" | tee -a $OUT/short.txt
  done
done; done; done
rm -f $OUT/r.json
