mkdir -p .dev && for b in krylov krylov-old; do gunzip -c .dev-c/$b.gz > .dev/$b && chmod +x .dev/$b; done
. bench/gpu/device_env.sh
for r in 1 2; do for b in krylov-old krylov; do
  KRYLOV_BIN=.dev/$b OUT=$OUT/ab/$b.r$r ITERS=150 LIMITS="- 240000000 96000000" CONFIGS="--method cagmres --s-step 15 --restart 30" bash bench/gpu/pool_parts_profile.sh > /dev/null 2>&1
  grep "^limit" $OUT/ab/$b.r$r/profile.txt | sed "s/^/$b r$r: /" | cut -c1-150
done; done
for b in krylov-old krylov; do
  DIST_ITERS=300 DIST_RUNS="convdiff2d:10000:f32:cagmres:15 convdiff2d:7072:f32:cagmres:15" DIST_MODES="one" bash bench/gpu/dist_where.sh .dev/$b $OUT/ab/e8-$b 2>/dev/null
  python3 bench/gpu/dist_where.py $OUT/ab/e8-$b | grep cagmres | sed "s/^/$b /"
done
rm -f $OUT/ab/*/r?.json; cd $OUT && tar czf ab.tgz ab && rm -rf ab
