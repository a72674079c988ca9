"""Markdown tables from bench/gpu/cagmres.sh's JSON lines: per-iteration time (whole cycles,
rtol 0) and time to solution (rtol 1e-8), with reductions and host syncs per iteration."""
import json
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
per_it, tts = [], []
for r in rows:
    if "error" in r:
        print(f"- {r['label']} `{r['args']}`: error {r['error'].strip()[-200:]}")
        continue
    rep = r["report"]
    n = rep["n"]
    us = 1e6 * rep["loop_seconds"] / max(rep["iterations_recorded"], 1)
    line = (n, r["label"], us, rep["iterations"], rep.get("reductions_per_iteration", 0.0),
            rep.get("syncs_per_iteration", 0.0), rep["dispatches_per_iteration"],
            rep["loop_seconds"], rep["reason"], rep["relative_residual"])
    (per_it if "--rtol 0 " in r["args"] else tts).append((r["args"].split()[1], line))

print("| problem | n | solver | µs/iteration | reductions/it | syncs/it | launches/it |")
print("|---|---|---|---|---|---|---|")
for prob, (n, label, us, it, red, syn, dis, _, _, _) in per_it:
    print(f"| {prob} | {n} | {label} | {us:.1f} | {red:.2f} | {syn:.3f} | {dis:.2f} |")
print()
print("| problem | n | solver | iterations | seconds | stop | true rel. residual |")
print("|---|---|---|---|---|---|---|")
for prob, (n, label, us, it, red, syn, dis, secs, reason, rel) in tts:
    print(f"| {prob} | {n} | {label} | {it} | {secs:.4f} | {reason} | {rel:.1e} |")
