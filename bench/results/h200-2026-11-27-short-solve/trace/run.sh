. bench/gpu/device_env.sh
gunzip -c .dev-c/krylov-trace.gz > /tmp/k && chmod +x /tmp/k
cfg="--method cagmres --s-step 5 --restart 30"
KRYLOV_TRACE=1 /tmp/k solve --generate convdiff3d:22:circular --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 $cfg --json > /dev/null 2> $OUT/ca.trace
KRYLOV_TRACE=1 /tmp/k solve --generate convdiff3d:22:circular --device gpu --precision f64 --rtol 1e-8 --max-iter 4000 --method gmres --variant pipelined --gs cgs2 --restart 30 --json > /dev/null 2> $OUT/gm.trace
KRYLOV_TRACE=1 /tmp/k solve --generate poisson2d:100 --device gpu --precision f32 --rtol 0 --max-iter 30 --method cg --json > /dev/null 2> $OUT/cg.trace
