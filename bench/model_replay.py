#!/usr/bin/env python3
"""Offline replay of a model change on an existing validation run (issue 18): shifts every
prediction of ROWS (a model_validate.py rows.jsonl) by -OVERHEAD seconds per launch of an
iteration (pipelined CG: 2, pipelined BiCGStab: 4) and re-scores it, with and without the tie
rule of `--format auto` (formats predicted within TIE of the fastest fall to the statistics
rule, whose picks come from PICKS: `label format` lines, e.g. from `krylov solve --format
auto` without a profile). An estimate on the rows' own measurements, not a validation: the
overhead a calibration measures is its own.

  model_replay.py ROWS PICKS [--overhead-us 2.5,3,3.5] [--tie 0.05]
"""

import argparse
import json
import statistics

LAUNCHES = {"cg": 2, "bicgstab": 4}


def score(rows, picks, overhead, tie, use_rule):
    errs, by = [], {}
    for r in rows:
        if r.get("predicted_s") is None:
            continue
        p = r["predicted_s"] - overhead * LAUNCHES[r["method"]]
        by.setdefault(r["matrix"], []).append((p, r))
        if r.get("measured_s"):
            errs.append(abs(p - r["measured_s"]) / r["measured_s"])
    ok, misses = 0, []
    for m, preds in by.items():
        measured = {r["format"]: r["measured_s"] for _, r in preds if r.get("measured_s")}
        if not measured:
            continue
        preds.sort(key=lambda x: x[0])
        fastest, pick = preds[0][0], preds[0][1]["format"]
        rule = picks.get(m)
        if use_rule and rule and pick != rule:
            if any(r["format"] == rule and p <= fastest * (1 + tie) for p, r in preds):
                pick = rule
        ratio = measured.get(pick, float("nan")) / min(measured.values())
        ok += ratio <= 1.05
        if not ratio <= 1.05:
            misses.append(f"{m} {pick} {ratio:.2f}")
    errs.sort()
    return {
        "median": statistics.median(errs), "worst": errs[-1],
        "within30": sum(e <= 0.3 for e in errs) / len(errs),
        "auto_ok": ok, "matrices": len(by), "misses": misses,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("picks")
    ap.add_argument("--overhead-us", default="0,2.5,3,3.5")
    ap.add_argument("--tie", type=float, default=0.05)
    args = ap.parse_args()
    rows = [json.loads(l) for l in open(args.rows)]
    rows = [r for r in rows if "matrix" in r]
    picks = dict(l.split()[:2] for l in open(args.picks) if l.strip())
    for o in map(float, args.overhead_us.split(",")):
        for use_rule in (False, True):
            s = score(rows, picks, o * 1e-6, args.tie, use_rule)
            print(f"overhead {o:.1f} us, tie rule {'on ' if use_rule else 'off'}: "
                  f"median {100 * s['median']:.1f}%, worst {100 * s['worst']:.0f}%, "
                  f"within 30% {100 * s['within30']:.0f}%, auto within 5% "
                  f"{s['auto_ok']} of {s['matrices']}; misses: {', '.join(s['misses'])}")


if __name__ == "__main__":
    main()
