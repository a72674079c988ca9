# Where the host's submitting time goes in two-device solves (issue 19): the report's
# devices.queue_submit_seconds (time inside wgpu's finish + Queue::submit) against
# devices.submit_seconds. Run from the repository root on the device tool's two-GPU machine
# (results: run2/; its cg-poisson2d files are the 7072 runs, the 3162 ones were overwritten
# before the file names carried the size) with the release binary gzipped in .dev-q/ and the Vulkan loader in .gl/.
set -u
gunzip -kf .dev-q/krylov.gz; chmod +x .dev-q/krylov; B=.dev-q/krylov
. bench/gpu/device_env.sh
O=$OUT/q; mkdir -p $O
nvidia-smi -L > $O/info.txt
for spec in gmres:poisson2d:3162:f64 gmres:laplace3d:216:f32 cg:poisson2d:3162:f64 cg:poisson2d:7072:f64 cg:laplace3d:216:f32 bicg:convdiff2d:1000:f64; do
  IFS=: read -r method prob k prec <<<"$spec"
  for mode in one d1 d2; do
    [ $mode = d1 ] && [ $method != cg ] && continue
    case $mode in one) dev=(--device gpu --format csr);; d1) dev=(--devices 1);; d2) dev=(--devices 0,1);; esac
    [ $method = bicg ] && [ $mode = d2 ] && dev=(--devices 0,1 --precond ilu0)
    [ $method = bicg ] && [ $mode = one ] && dev=(--device gpu --format csr --precond ilu0)
    timeout 150 $B solve --generate $prob:$k --precision $prec --method $method "${dev[@]}" --rtol 0 --atol 0 --max-iter 200 --json > $O/$method-$prob$k-$prec-$mode.json 2>$O/$method-$prob$k-$prec-$mode.err
    echo "$spec $mode rc=$?"
  done
done
python3 - $O > $O/summary.txt <<'PY'
import json,sys,glob,os
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    try: r=json.load(open(f))
    except Exception as e: print(os.path.basename(f),'bad',e); continue
    it=max(r['iterations'],1); us=r['loop_seconds']/it*1e6
    d=r.get('devices'); extra=''
    if d:
        extra='wait %s exch %.3f submit %.3f queue_submit %.3f (%.0f us/it submitting, %.0f in queue submit)'%(
            [round(p['wait_seconds'],3) for p in d['devices']], d['exchange_seconds'], d['submit_seconds'], d['queue_submit_seconds'],
            d['submit_seconds']/it*1e6, d['queue_submit_seconds']/it*1e6)
    print('%-40s it=%d loop=%.3f us/it=%.0f submits/it=%.2f %s'%(os.path.basename(f),it,r['loop_seconds'],us,r['loop_counts']['submits']/it,extra))
PY
cat $O/summary.txt
