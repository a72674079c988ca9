set -u
for f in .dev-dist/*.gz; do gunzip -kf "$f"; chmod +x "${f%.gz}"; done
. bench/gpu/device_env.sh
O=$OUT/distg; mkdir -p $O
for bin in before after; do
  B=.dev-dist/krylov; [ $bin = before ] && B=.dev-dist/krylov-before
  for spec in poisson2d:3162:f64 laplace3d:216:f32; do
    IFS=: read -r prob k prec <<<"$spec"
    for mode in one d2; do
      case $mode in one) dev=(--device gpu --format csr);; d2) dev=(--devices 0,1);; esac
      timeout 120 $B solve --generate $prob:$k --precision $prec --method gmres "${dev[@]}" --rtol 0 --atol 0 --max-iter 200 --json > $O/$bin-$prob-$prec-$mode.json 2>$O/$bin-$prob-$prec-$mode.err
      echo "$bin $spec $mode rc=$?"
    done
  done
done
KRYLOV_PROFILE=1 timeout 120 .dev-dist/krylov solve --generate poisson2d:3162 --precision f64 --method gmres --devices 0,1 --rtol 0 --atol 0 --max-iter 60 --json > $O/profile-d2.json 2>$O/profile-d2.err
python3 - $O <<'PY'
import json,sys,glob,os
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    try: r=json.load(open(f))
    except Exception as e: print(os.path.basename(f),'bad',e); continue
    us=r['loop_seconds']/max(r['iterations'],1)*1e6
    d=r.get('devices')
    extra=''
    if d:
        extra='wait %s exch %.3f submit %.3f'%([round(p['wait_seconds'],3) for p in d['devices']], d['exchange_seconds'], d.get('submit_seconds',-1))
        kt=[sum(k['seconds'] for k in p['kernel_times']) for p in d['devices']]
        if any(kt): extra+=' kernels/dev %s'%[round(x,4) for x in kt]
    print('%-45s it=%d loop=%.3f us/it=%.0f subm/it=%.2f %s'%(os.path.basename(f),r['iterations'],r['loop_seconds'],us,r['loop_counts']['submits']/max(r['iterations'],1),extra))
PY
cd $OUT && tar czf distg.tgz distg && rm -rf distg
