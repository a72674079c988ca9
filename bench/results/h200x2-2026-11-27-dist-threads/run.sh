# Each device's submits and waits on a thread of its own (issue 19): before (one thread
# submits to both devices; the binary of ../h200x2-2026-11-27-queue-submit/run2) and after
# (Host::phase with rayon: each device's submits 1-2 and its wait for the sent entries, then
# its submit 3 and its wait for the partial sums, as one task per device; not committed:
# slower), taking turns, two rounds. Repository root, device tool's two-GPU machine; binaries gzipped
# in .dev-t/, the Vulkan loader in .gl/.
set -u
for b in before after; do gunzip -kf .dev-t/krylov-$b.gz; chmod +x .dev-t/krylov-$b; done
. bench/gpu/device_env.sh
O=$OUT/t; mkdir -p $O
nvidia-smi -L > $O/info.txt
for round in 1 2; do
  for spec in cg:poisson2d:7072:f64 cg:laplace3d:216:f32 gmres:poisson2d:3162:f64 gmres:laplace3d:216:f32; do
    IFS=: read -r method prob k prec <<<"$spec"
    for b in before after; do
      timeout 150 .dev-t/krylov-$b solve --generate $prob:$k --precision $prec --method $method --devices 0,1 --rtol 0 --atol 0 --max-iter 200 --json > $O/$method-$prob$k-$prec-$b-$round.json 2>$O/$method-$prob$k-$prec-$b-$round.err
      echo "$spec $b $round rc=$?"
    done
  done
done
python3 - $O > $O/summary.txt <<'PY'
import json,sys,glob,os
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    try: r=json.load(open(f))
    except Exception as e: print(os.path.basename(f),'bad',e); continue
    it=max(r['iterations'],1); d=r['devices']
    print('%-42s us/it=%5.0f  wait/dev %s  submit %.0f us/it (queue %.0f)  exchange %.0f us/it'%(os.path.basename(f),r['loop_seconds']/it*1e6,
        [round(p['wait_seconds']/it*1e6) for p in d['devices']], d['submit_seconds']/it*1e6, d['queue_submit_seconds']/it*1e6, d['exchange_seconds']/it*1e6))
PY
cat $O/summary.txt
