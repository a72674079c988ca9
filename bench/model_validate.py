#!/usr/bin/env python3
"""Validation of the performance model (issue 18): predicted against measured time per
iteration, per matrix, storage format and solver variant, and how often `--format auto` (the
model's pick) lands within 5% of the measured-fastest format — with several variants
(`--variant pipelined,fused`), how often `--format auto --variant auto` lands within 5% of the
measured-fastest (format, variant).

Used by bench/model_validate.sh (which calibrates first); python3 standard library only.

  model_validate.py KRYLOV OUTDIR [--iters N] [--runs R] [--variant pipelined[,fused,p1]]
                    [--matrices FILE] [--formats csr,ell,...]

Per matrix: one `krylov predict --json`, then the measurement of each variant the method has
(fused: CG and GMRES; p1: GMRES; GMRES(30) timed over whole cycles: --iters a multiple of 30), then one `krylov solve --format auto --json` to record the model's pick. Writes OUTDIR/rows.jsonl and
OUTDIR/model_validation.md.

The measurement (--protocol):
- `bench` (default): R `krylov bench --json` processes per matrix, each timing one run of
  exactly N iterations in one batch (device mode, rtol = atol = 0) of every format, in an
  order rotated from one process to the next, with the heater keeping the clocks up
  between runs as during the calibration; the measured time per iteration is the median of
  the R runs (--stat min: the fastest). This is the steady state the model describes.
- `solve` (runs 1-6 of BENCHMARKS.md): R rounds of one `krylov solve --json` process per
  format, interleaved, no heater; each loop is the first of a fresh process, so at small
  sizes the runs of one format spread by up to 40 % (clocks, first submits).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# (label, krylov matrix arguments, method): the shared matrices and generators at several sizes.
DEFAULT_MATRICES = [
    ("494_bus", ["tests/data/494_bus.mtx"], "cg"),
    ("nos6", ["tests/data/nos6.mtx"], "cg"),
    ("bcsstk21", ["tests/data/bcsstk21.mtx"], "cg"),
    ("Trefethen_2000", ["tests/data/Trefethen_2000.mtx"], "cg"),
    ("jpwh_991", ["tests/data/jpwh_991.mtx"], "bicgstab"),
    ("sherman4", ["tests/data/sherman4.mtx"], "bicgstab"),
    ("add32", ["tests/data/add32.mtx"], "bicgstab"),
    ("pde2961", ["tests/data/pde2961.mtx"], "bicgstab"),
    ("poisson2d:64", ["--generate", "poisson2d:64"], "cg"),
    ("poisson2d:200", ["--generate", "poisson2d:200"], "cg"),
    ("laplace3d:20", ["--generate", "laplace3d:20"], "cg"),
    ("laplace3d:40", ["--generate", "laplace3d:40"], "cg"),
    ("fem2d:127", ["--generate", "fem2d:127"], "cg"),
    ("convdiff3d:24:circular", ["--generate", "convdiff3d:24:circular"], "bicgstab"),
    ("random-spd:20000:7", ["--generate", "random-spd:20000:7"], "cg"),
]

FORMATS = ["csr", "ell", "dia", "bcsr1", "bcsr2", "bcsr4", "bcsr8", "sell"]

# The variants the model describes per method (src/model/kernels.rs, MODELLED).
MODELLED = {
    "cg": ("pipelined", "classical", "fused"),
    "bicgstab": ("pipelined", "classical"),
    "gmres": ("pipelined", "fused", "p1"),
}


def run_json(cmd):
    """Runs a krylov command that prints one JSON object; exit 3 (not converged) is fine."""
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        return None, p.stderr.strip().splitlines()[-1:] or ["exit %d" % p.returncode]
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return None, ["no JSON"]
    return json.loads(lines[-1]), None


def load_matrices(path):
    if not path:
        return DEFAULT_MATRICES
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts and not parts[0].startswith("#"):
                out.append((parts[0], parts[1:-1], parts[-1]))
    return out


def bench_times(krylov, margs, method, variant, formats, args):
    """Times per iteration of every format from R heated `krylov bench` processes, one run
    of every format each, the formats' order rotated from one process to the next: a drift
    of the machine within a process (clocks, temperature) then hits every format alike."""
    source = margs if margs[:1] == ["--generate"] else ["--mtx", *margs]
    times = {fmt: [] for fmt in formats}
    notes = {fmt: None for fmt in formats}
    for r in range(args.runs):
        order = [f for f in formats[r % len(formats):] + formats[:r % len(formats)]
                 if not notes[f]]
        if not order:
            break
        cmd = [krylov, "bench", *source, "--json", "--precision", "f32", "--method", method,
               "--variant", variant, "--check-mode", "device",
               "--iterations", str(args.iters), "--runs", "1", "--bandwidth-n", "0",
               "--formats", ",".join(order)]
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        seen = set()
        for line in p.stdout.splitlines():
            row = json.loads(line) if line.startswith("{") else {}
            fmt = row.get("format")
            if fmt not in times:
                continue
            seen.add(fmt)
            if row["iterations_done"] < args.iters:
                notes[fmt] = "stopped after %d iterations (%s)" % (row["iterations_done"],
                                                                   row["reason"])
            elif row["iterations_done"] < row["iterations"]:
                # A restart abandoned a batch: its skipped launches are in the loop's time.
                notes[fmt] = "ran %d of %d recorded iterations (%s)" % (
                    row["iterations_done"], row["iterations"],
                    "; ".join(row.get("restart_log", [])) or row["reason"])
            else:
                times[fmt].extend(us * 1e-6 for us in row["us_runs"])
        for fmt in order:
            if fmt not in seen and not notes[fmt]:
                why = [l for l in p.stderr.splitlines() if f" {fmt} " in l] or \
                      p.stderr.strip().splitlines()[-1:] or ["exit %d" % p.returncode]
                notes[fmt] = why[-1].split(f" {variant}: ", 1)[-1]
    return times, notes


def solve_times(solve, formats, args):
    """Times per iteration of every format from one `krylov solve` process per run."""
    # Runs interleave the formats (csr, ell, …, csr, ell, …), so that a slow spell of
    # the machine (clocks, another process) hits every format alike, not one format's runs.
    times = {fmt: [] for fmt in formats}
    notes = {fmt: None for fmt in formats}
    for _ in range(args.runs):
        for fmt in formats:
            if notes[fmt]:
                continue
            r, err = run_json(solve + ["--format", fmt])
            if r is None:
                notes[fmt] = " ".join(err)
            elif r["iterations"] < args.iters:
                notes[fmt] = "stopped after %d iterations (%s)" % (r["iterations"], r["reason"])
            elif r["iterations"] < r["iterations_recorded"]:
                notes[fmt] = "ran %d of %d recorded iterations (%s)" % (
                    r["iterations"], r["iterations_recorded"],
                    "; ".join(r.get("restart_log", [])) or r["reason"])
            else:
                times[fmt].append(r["loop_seconds"] / r["iterations_recorded"])
    return times, notes


def solve_command(krylov, margs, method, variant, args):
    """`krylov solve` of exactly `args.iters` iterations in one batch (device mode)."""
    return [krylov, "solve", *margs, "--json", "--precision", "f32", "--device", "gpu",
            "--method", method, "--variant", variant, "--check-mode", "device",
            "--rtol", "0", "--atol", "0", "--max-iter", str(args.iters),
            "--batch", str(args.iters), "--reorder", "none"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("krylov")
    ap.add_argument("outdir")
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--variant", default="pipelined")
    ap.add_argument("--matrices")
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--profile", help="profile file (default: the calibrated device's)")
    ap.add_argument("--stat", choices=["min", "median"], default=None,
                    help="default: median with --protocol bench, min with solve")
    ap.add_argument("--protocol", choices=["bench", "solve"], default="bench")
    args = ap.parse_args()
    if args.stat is None:
        args.stat = "median" if args.protocol == "bench" else "min"
    krylov = os.path.abspath(args.krylov)
    formats = args.formats.split(",")
    os.makedirs(args.outdir, exist_ok=True)
    prof = ["--profile", os.path.abspath(args.profile)] if args.profile else []
    rows = []
    picks = []
    variants = args.variant.split(",")
    for label, margs, method in load_matrices(args.matrices):
        pred, err = run_json([krylov, "predict", *margs, "--json", "--precision", "f32",
                              "--method", method, "--check-mode", "device",
                              "--batch", str(args.iters), *prof])
        if pred is None:
            print(f"{label}: predict failed: {err}", file=sys.stderr)
            continue
        mine = [v for v in variants if v in MODELLED.get(method, ())]
        measured = {}
        for variant in mine:
            predicted = {p["format"]: p for p in pred["predictions"]
                         if p["variant"] == variant and p["method"] == method}
            solve = solve_command(krylov, margs, method, variant, args)
            if args.protocol == "bench":
                times, notes = bench_times(krylov, margs, method, variant, formats, args)
            else:
                times, notes = solve_times(solve, formats, args)
            for fmt in formats:
                times_f, note = times[fmt], notes[fmt]
                p = predicted.get(fmt, {})
                row = {
                    "matrix": label, "method": method, "variant": variant, "format": fmt,
                    "n": pred["n"], "nnz": pred["nnz"],
                    "predicted_s": p.get("seconds_per_iteration"),
                    "refused": p.get("refused"),
                    "measured_s": (min(times_f) if args.stat == "min"
                                   else statistics.median(times_f))
                    if times_f and not note else None,
                    "runs_s": times_f, "note": note,
                }
                if row["predicted_s"] and row["measured_s"]:
                    row["rel_error"] = (row["predicted_s"] - row["measured_s"]) / row["measured_s"]
                    measured[(fmt, variant)] = row["measured_s"]
                rows.append(row)
                print(json.dumps(row), flush=True)
        # The model's pick: the format alone with one variant, format and variant with several.
        pick_variant = "auto" if len(mine) > 1 else mine[0]
        auto, err = run_json(solve_command(krylov, margs, method, pick_variant, args)
                             + ["--format", "auto", *prof])
        if auto is not None and measured:
            best = min(measured, key=measured.get)
            pick = (auto["format"], auto["variant"])
            picks.append({
                "matrix": label, "auto": " ".join(pick), "best": " ".join(best),
                "auto_reason": auto.get("format_reason", ""),
                "auto_notes": auto.get("notes", []),
                "ratio": measured.get(pick, float("nan")) / measured[best],
                "predicted_s": auto.get("predicted_seconds_per_iteration"),
            })
    with open(os.path.join(args.outdir, "rows.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
        for p in picks:
            f.write(json.dumps({"pick": p}) + "\n")
    md = table(rows, picks, args)
    with open(os.path.join(args.outdir, "model_validation.md"), "w") as f:
        f.write(md)
    print(md)


def table(rows, picks, args):
    out = ["| matrix | n | nnz | method | variant | format | predicted µs | measured µs | error |",
           "|---|---:|---:|---|---|---|---:|---:|---:|"]
    for r in rows:
        pred = "%.1f" % (r["predicted_s"] * 1e6) if r["predicted_s"] else "—"
        meas = "%.1f" % (r["measured_s"] * 1e6) if r["measured_s"] else "—"
        if "rel_error" in r:
            err = "%+.0f%%" % (100 * r["rel_error"])
        else:
            err = r["refused"] or r["note"] or "—"
            err = err[:60]
        out.append(f"| {r['matrix']} | {r['n']} | {r['nnz']} | {r['method']} | {r['variant']} "
                   f"| {r['format']} "
                   f"| {pred} | {meas} | {err} |")
    out.append("")
    for variant in [None] + sorted({r["variant"] for r in rows}):
        mine = [r for r in rows if variant is None or r["variant"] == variant]
        errs = sorted(abs(r["rel_error"]) for r in mine if "rel_error" in r)
        if not errs:
            continue
        within10 = sum(e <= 0.10 for e in errs) / len(errs)
        within30 = sum(e <= 0.30 for e in errs) / len(errs)
        out.append(f"{len(errs)} (matrix, format) cases, {variant or args.variant} variant, f32, "
                   f"{args.iters} iterations per batch, {args.stat} of {args.runs} runs "
                   f"(protocol {args.protocol}): "
                   f"median |error| {100 * statistics.median(errs):.1f}%, "
                   f"worst {100 * errs[-1]:.1f}%; within 10%: {100 * within10:.0f}%, "
                   f"within 30%: {100 * within30:.0f}%.")
        out.append("")
    out.append("")
    out.append("| matrix | auto picked | measured fastest | auto time / fastest |")
    out.append("|---|---|---|---:|")
    for p in picks:
        out.append(f"| {p['matrix']} | {p['auto']} | {p['best']} | {p['ratio']:.2f} |")
    if picks:
        ok = sum(p["ratio"] <= 1.05 for p in picks)
        out.append("")
        out.append(f"auto within 5% of the measured-fastest {'(format, variant)' if ',' in args.variant else 'format'}: {ok} of {len(picks)} "
                   f"matrices ({100 * ok / len(picks):.0f}%).")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
