#!/usr/bin/env bash
# Robustness sweep: every shared matrix (tests/data) × method × preconditioner × precision,
# one `krylov solve --json` each, on the device the binary picks (`--device gpu`). One JSON
# line per solve in $2/sweep.jsonl: exit code, seconds, the error line, and the report's
# stop. Then bench/gpu/sweep_summary.py says what failed how, and flags any convergence the
# true residual contradicts and any exit other than 0 (converged) or 3 (not converged).
#   bash bench/gpu/sweep.sh KRYLOV_BIN OUT_DIR
set -u
bin=$1
out=$2
mkdir -p "$out"
jsonl=$out/sweep.jsonl
: > "$jsonl"
for m in tests/data/*.mtx; do
    case $m in *_rhs.mtx) continue ;; esac
    for method in ${METHODS:-cg bicgstab gmres cagmres bicg}; do
        for pc in ${PRECONDS:-none jacobi ilu0}; do
            for prec in ${PRECISIONS:-f64 f32 mixed}; do
                start=$(date +%s.%N)
                res=$(timeout 120 "$bin" solve "$m" --device gpu --method "$method" --precond "$pc" \
                    --precision "$prec" --max-iter 3000 --json 2> "$out/err.txt")
                rc=$?
                end=$(date +%s.%N)
                printf '%s\n' "$res" | grep '^{' | tail -1 > "$out/report.json"
                python3 - "$m" "$method" "$pc" "$prec" "$rc" "$start" "$end" "$out" >> "$jsonl" <<'P'
import json, sys
m, method, pc, prec, rc, start, end, out = sys.argv[1:]
text = open(out + "/report.json").read().strip()
rep = json.loads(text) if text else None
err = open(out + "/err.txt").read().strip().splitlines()
keep = ("converged", "reason", "relative_residual", "iterations", "restarts", "restart_log",
        "format", "equilibration", "reordering", "notes")
print(json.dumps({"matrix": m, "method": method, "precond": pc, "precision": prec, "rc": int(rc),
                  "seconds": round(float(end) - float(start), 3),
                  "error": err[-1] if err else "",
                  "report": {k: rep.get(k) for k in keep} if rep else None}))
P
            done
        done
    done
done
rm -f "$out/report.json" "$out/err.txt"
python3 bench/gpu/sweep_summary.py "$jsonl" | tee "$out/summary.txt"
