B=.dev/krylov; R=$OUT/ab2; mkdir -p $R
run() { timeout 100 $B bench --json --problem poisson2d --sizes 1e3,1e4,1e5 --method cg --variant fused --precision f32,f64 --check-mode device --runs 5 "$@"; }
for rep in 1 2 3 4 5 6; do
  KRYLOV_SHADER_DIR=exp-fused run --iterations 2000 > $R/old-$rep.jsonl 2> $R/old-$rep.err
  run --iterations 2000 > $R/new-$rep.jsonl 2> $R/new-$rep.err
  KRYLOV_SHADER_DIR=exp-fused run --iterations 30 > $R/old30-$rep.jsonl 2> $R/old30-$rep.err
  run --iterations 30 > $R/new30-$rep.jsonl 2> $R/new30-$rep.err
done
