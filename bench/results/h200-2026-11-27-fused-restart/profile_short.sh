# Where a short Newton-basis CA-GMRES solve's time goes (issue 17): 3D conv.-diff. 1e4, f64,
# rtol 1e-8, profiled (KRYLOV_PROFILE=1) and untimed, CA(8, 64) and CA(5, 30) against
# pipelined GMRES(60) and (30). Needs /tmp/k-after (run.sh unpacks it).
. bench/gpu/device_env.sh
for cfg in "--method cagmres --s-step 8 --restart 64" "--method gmres --variant pipelined --gs cgs2 --restart 64" "--method cagmres --s-step 5 --restart 30" "--method gmres --variant pipelined --gs cgs2 --restart 30"; do
  KRYLOV_PROFILE=1 /tmp/k-after solve --generate convdiff3d:22:circular --precision f64 --device gpu --rtol 1e-8 $cfg --json > $OUT/p.json 2>/dev/null
  /tmp/k-after solve --generate convdiff3d:22:circular --precision f64 --device gpu --rtol 1e-8 $cfg --json > $OUT/q.json 2>/dev/null
  python3 - $OUT/p.json $OUT/q.json "$cfg" <<'PY' | tee -a $OUT/profile_short.txt
import json, sys
p, q = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
it = p["iterations_recorded"]
print(sys.argv[3], "it", p["iterations"], "recorded", it, "profiled loop ms %.2f" % (1e3 * p["loop_seconds"]), "untimed loop ms %.2f" % (1e3 * q["loop_seconds"]), "counts", q["loop_counts"])
tot = sum(k["seconds"] for k in p["kernel_times"])
print("    kernels total ms %.2f" % (1e3 * tot))
for k in sorted(p["kernel_times"], key=lambda k: -k["seconds"])[:10]:
    print("    %-22s calls %5d  us/call %8.1f  ms %8.3f" % (k["name"], k["calls"], 1e6 * k["seconds"] / k["calls"], 1e3 * k["seconds"]))
PY
done
rm -f $OUT/p.json $OUT/q.json
