B=.dev/krylov; R=$OUT/ab; mkdir -p $R
run() { timeout 100 $B bench --json --problem poisson2d --sizes 1e3,1e4,1e5 --method cg --variant fused --precision f32,f64 --check-mode device --iterations 2000 --runs 5 "$@"; }
for rep in 1 2; do
  KRYLOV_SHADER_DIR=exp-fused run > $R/old-$rep.jsonl 2> $R/old-$rep.err
  run > $R/new-$rep.jsonl 2> $R/new-$rep.err
done
for g in 64 128 256 512; do run --max-groups $g > $R/g$g.jsonl 2> $R/g$g.err; done
for w in 64 128 512; do run --workgroup-size $w > $R/w$w.jsonl 2> $R/w$w.err; done
timeout 100 $B bench --json --problem poisson2d --sizes 1e3,1e4,1e5 --method cg --variant pipelined --precision f32,f64 --check-mode device --iterations 2000 --runs 5 > $R/pipelined.jsonl 2> $R/pipelined.err
