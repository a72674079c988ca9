#!/usr/bin/env python3
"""Replays the performance model's predictions and `--format auto`'s pick on measured
times, without a GPU: `krylov predict --profile PROFILE` (a profile is read on any machine
with --profile) for every matrix of a list, the statistics rule's format from
`krylov solve --format auto` with no profile, the tie rule of model::predict::best_or_rule
(the rule's format when predicted within --tie of the fastest), against the measured µs of
a model_validate.py table (model_validation.md). For a calibration whose validation could
not run in the same device call, or to see what another tie tolerance would have picked.
python3 standard library only.

  model_replay.py KRYLOV PROFILE MATRICES MEASURED_MD [--tie 0.10] [--target discrete-gpu]
  (run from bench/; the rule needs a GPU adapter, lavapipe will do: --target, passed as
  KRYLOV_FORMAT_RULE, makes it decide as on the measured device, default a discrete GPU)
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import tempfile

from model_validate import REPO, load_matrices


def measured(md):
    """Measured µs per (matrix, format) of the pipelined rows of a model_validation.md (tables
    since 2026-11-30 have a variant column after the method)."""
    out = collections.defaultdict(dict)
    for line in open(md):
        p = [x.strip() for x in line.split("|")]
        if len(p) > 8 and p[2].isdigit():
            with_variant = len(p) > 10
            if with_variant and p[5] != "pipelined":
                continue
            fmt, us = (p[6], p[8]) if with_variant else (p[5], p[7])
            try:
                out[p[1]][fmt] = float(us)
            except ValueError:
                pass
    return out


def main():
    ap = argparse.ArgumentParser()
    for a in ["krylov", "profile", "matrices", "measured_md"]:
        ap.add_argument(a)
    ap.add_argument("--tie", type=float, default=0.10)
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--target", default="discrete-gpu", choices=["discrete-gpu", "gpu", "cpu"])
    args = ap.parse_args()
    krylov = os.path.abspath(args.krylov)
    meas = measured(args.measured_md)
    no_profile = dict(os.environ, KRYLOV_PROFILE_DIR=tempfile.mkdtemp(),
                      KRYLOV_FORMAT_RULE=args.target)
    errs, hits, n = [], 0, 0
    for label, margs, method in load_matrices(args.matrices):
        pr = subprocess.run([krylov, "predict", *margs, "--json", "--precision", "f32",
                             "--method", method, "--check-mode", "device",
                             "--batch", str(args.batch), "--profile", os.path.abspath(args.profile)],
                            cwd=REPO, capture_output=True, text=True, check=True)
        preds = {p["format"]: p["seconds_per_iteration"] * 1e6
                 for p in json.loads(pr.stdout)["predictions"]
                 if p["variant"] == "pipelined" and p["method"] == method and not p["refused"]}
        sv = subprocess.run([krylov, "solve", *margs, "--json", "--precision", "f32", "--device", "gpu",
                             "--method", method, "--format", "auto", "--max-iter", "1",
                             "--reorder", "none"],
                            cwd=REPO, capture_output=True, text=True, env=no_profile)
        rule = json.loads([l for l in sv.stdout.splitlines() if l.startswith("{")][-1])["format"]
        m = meas.get(label, {})
        if not m:
            continue
        errs += [abs(preds[f] - m[f]) / m[f] for f in preds if f in m]
        fastest = min(preds, key=preds.get)
        pick = rule if rule in preds and preds[rule] <= (1 + args.tie) * preds[fastest] else fastest
        best = min(m, key=m.get)
        ratio = m.get(pick, float("nan")) / m[best]
        hits += ratio <= 1.05
        n += 1
        print(f"{label:24s} auto {pick:6s} (model {fastest}, rule {rule}) fastest {best:6s} "
              f"{ratio:.2f}  " + " ".join(f"{f}:{preds[f]:.1f}/{m.get(f, float('nan')):.1f}"
                                          for f in sorted(preds, key=preds.get)), flush=True)
    errs.sort()
    print(f"{len(errs)} cases: median |error| {100 * statistics.median(errs):.1f}%, worst "
          f"{100 * errs[-1]:.1f}%, within 30%: {100 * sum(e <= .3 for e in errs) / len(errs):.0f}%; "
          f"auto within 5% of the fastest: {hits} of {n} (ties within {100 * args.tie:.0f}%)")


if __name__ == "__main__":
    main()
