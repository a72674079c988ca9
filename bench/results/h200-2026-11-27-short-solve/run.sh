# Where the fixed cost of a short GMRES solve goes (issue 17): GPU kernel time vs loop time,
# SM clock sampled beside.
. bench/gpu/device_env.sh
gunzip -c .dev-c/krylov.gz > /tmp/krylov && chmod +x /tmp/krylov
k=/tmp/krylov
(nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv,noheader -lms 20 > $OUT/clocks.csv) &
sp=$!
for rep in 1 2 3; do
  for cfg in "--method gmres --variant pipelined --gs cgs2 --restart 30" "--method cagmres --s-step 5 --restart 30"; do
    $k solve --generate convdiff3d:22:circular --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 $cfg --json > $OUT/q.json 2>/dev/null
    KRYLOV_PROFILE=1 $k solve --generate convdiff3d:22:circular --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 $cfg --json > $OUT/p.json 2>/dev/null
    python3 - "$rep $cfg" <<'PY'
import json, sys, os
o = os.environ["OUT"]
q = json.load(open(o + "/q.json")); p = json.load(open(o + "/p.json"))
kt = sum(k["seconds"] for k in p["kernel_times"])
print(sys.argv[1], "| untimed loop %.4f s, %d it (%d rec) | profiled loop %.4f s, kernels %.4f s" % (q["loop_seconds"], q["iterations"], q["iterations_recorded"], p["loop_seconds"], kt))
for k in sorted(p["kernel_times"], key=lambda k: -k["seconds"])[:5]:
    print("    %-22s calls %5d  us/call %8.1f" % (k["name"], k["calls"], 1e6 * k["seconds"] / k["calls"]))
PY
  done
done
# The same solve twice in one process is not possible from the CLI; a 1e6 solve just before
# keeps the clocks up for the next process's start.
$k solve --generate convdiff3d:100:circular --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 --method gmres --json > /dev/null 2>&1; $k solve --generate convdiff3d:22:circular --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 --method gmres --variant pipelined --gs cgs2 --restart 30 --json > $OUT/after-big.json 2>/dev/null
python3 -c "
import json; q=json.load(open('$OUT/after-big.json')); print('after a 1e6 solve: loop %.4f s' % q['loop_seconds'])"
kill $sp
rm -f $OUT/q.json $OUT/p.json
