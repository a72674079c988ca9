#!/usr/bin/env python3
"""Offline replay of a model change on an existing validation run (issue 18): shifts every
prediction of ROWS (a model_validate.py rows.jsonl) by -OVERHEAD seconds per launch of an
iteration (pipelined CG: 2, pipelined BiCGStab: 4) and re-scores it, with and without the tie
rule of `--format auto` (formats predicted within TIE of the fastest fall to the statistics
rule, whose picks come from PICKS: `label format` lines, e.g. from `krylov solve --format
auto` without a profile). An estimate on the rows' own measurements, not a validation: the
overhead a calibration measures is its own.

  model_replay.py ROWS PICKS [--overhead-us 2.5,3,3.5] [--tie 0.05]

With --krylov BIN --profile P --matrices FILE (the run's profile and matrix list), the rows'
predictions are first replaced by those of BIN's `krylov predict` on the same matrices with
the run's profile (no GPU is opened), once per gather weight of --gamma (issue 18's gather
term: BIN's model with the profile's gather_weights set to that γ for every format; "profile"
keeps the profile's own, γ = 1 where it has none). Overheads then apply on top (use
--overhead-us 0: run 4's profile already subtracts its own).

  model_replay.py ROWS PICKS --overhead-us 0 --krylov .dev/krylov-model \
      --profile DIR/profile/profile-….json --matrices bench/model_matrices_gpu.txt \
      --gamma 0,0.25,0.5,1
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile

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


def repredict(rows, krylov, profile_path, matrices, gamma, batch):
    """The rows with predicted_s from `krylov predict` under gather weight `gamma` (None: the
    profile's own); the excess each format's SpMV got is kept in gather_excess."""
    prof = json.load(open(profile_path))
    if gamma is not None:
        prof["gather_weights"] = {f: gamma for f in
                                  ("csr", "ell", "dia", "bcsr1", "bcsr2", "bcsr4", "bcsr8", "sell")}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(prof, f)
        path = f.name
    new = {}
    try:
        for line in open(matrices):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            label, margs, method = parts[0], parts[1:-1], parts[-1]
            out = subprocess.run([krylov, "predict", *margs, "--json", "--precision", "f32",
                                  "--method", method, "--check-mode", "device",
                                  "--batch", str(batch), "--profile", path],
                                 capture_output=True, text=True, check=True).stdout
            pred = json.loads([l for l in out.splitlines() if l.startswith("{")][-1])
            for p in pred["predictions"]:
                if p["variant"] == "pipelined" and p["method"] == method:
                    new[(label, p["format"])] = p
    finally:
        os.unlink(path)
    out = []
    for r in rows:
        p = new.get((r["matrix"], r["format"]))
        r = dict(r)
        if p is not None and r.get("predicted_s") is not None:
            r["predicted_s"] = p["seconds_per_iteration"]
            r["gather_excess"] = p.get("gather_excess_bytes", 0)
        out.append(r)
    return out


def report(label, rows, picks, overhead, tie):
    for use_rule in (False, True):
        s = score(rows, picks, overhead * 1e-6, tie, use_rule)
        print(f"{label}, tie rule {'on ' if use_rule else 'off'}: "
              f"median {100 * s['median']:.1f}%, worst {100 * s['worst']:.0f}%, "
              f"within 30% {100 * s['within30']:.0f}%, auto within 5% "
              f"{s['auto_ok']} of {s['matrices']}; misses: {', '.join(s['misses'])}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("picks")
    ap.add_argument("--overhead-us", default="0,2.5,3,3.5")
    ap.add_argument("--tie", type=float, default=0.05)
    ap.add_argument("--krylov", help="re-predict with this binary (needs --profile, --matrices)")
    ap.add_argument("--profile")
    ap.add_argument("--matrices")
    ap.add_argument("--gamma", default="profile",
                    help="comma-separated gather weights, 'profile' for the profile's own")
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--cases", action="store_true",
                    help="print every case whose error moved by more than 5 points")
    args = ap.parse_args()
    rows = [json.loads(l) for l in open(args.rows)]
    rows = [r for r in rows if "matrix" in r]
    picks = dict(l.split()[:2] for l in open(args.picks) if l.strip())
    if args.krylov:
        o = float(args.overhead_us.split(",")[0])
        report(f"recorded predictions, overhead {o:.1f} us", rows, picks, o, args.tie)
        for g in args.gamma.split(","):
            gamma = None if g == "profile" else float(g)
            new = repredict(rows, args.krylov, args.profile, args.matrices, gamma, args.batch)
            report(f"re-predicted, gamma {g}, overhead {o:.1f} us", new, picks, o, args.tie)
            if args.cases:
                for a, b in zip(rows, new):
                    if a.get("measured_s") and b.get("predicted_s") and a.get("predicted_s"):
                        ea = (a["predicted_s"] - a["measured_s"]) / a["measured_s"]
                        eb = (b["predicted_s"] - b["measured_s"]) / b["measured_s"]
                        if abs(abs(eb) - abs(ea)) > 0.05:
                            print(f"  {a['matrix']} {a['format']}: {100 * ea:+.0f}% -> "
                                  f"{100 * eb:+.0f}% (excess {b.get('gather_excess', 0)} B)")
        return
    for o in map(float, args.overhead_us.split(",")):
        report(f"overhead {o:.1f} us", rows, picks, o, args.tie)


if __name__ == "__main__":
    main()
