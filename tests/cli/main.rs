//! End-to-end tests of the `krylov` command line: output formats, files written, every
//! method × variant on the CPU, one-line errors with exit code 1, usage errors (exit 2),
//! non-convergence (exit 3), `info`, and `spmv` on the GPU when an adapter exists.
//!
//! Grouped by concern: the default problem, output formats and files (`output`), every method
//! × variant on the CPU (`methods`), bad input (`input_errors`), exit codes 2 and 3
//! (`exit_codes`), `info` and `spmv` (`info_spmv`). Running the binary is `common::cli`.

#[path = "../common/mod.rs"]
mod common;

mod batch;
mod devices;
mod exit_codes;
mod info_spmv;
mod input_errors;
mod methods;
mod output;
mod precision;

use std::fs;
use std::path::Path;

use common::cli::{krylov, words};
use serde_json::Value;

/// `krylov solve --device cpu --json <args>`: must exit 0 with a converged report whose true
/// relative residual meets `rtol` (with the 0.1 % slack of the convergence check).
fn solve_ok(args: &[&str], rtol: f64) -> Value {
    let mut all = vec!["solve", "--device", "cpu", "--json"];
    all.extend_from_slice(args);
    let rtol_s = format!("{rtol:e}");
    all.extend_from_slice(&["--rtol", &rtol_s]);
    let run = krylov(&all);
    run.assert_code(0);
    let r = run.json();
    let ctx = run.context();
    assert_eq!(r["converged"], Value::Bool(true), "{ctx}");
    assert_eq!(r["reason"], "converged", "{ctx}");
    assert_eq!(r["device"]["kind"], "cpu", "{ctx}");
    let rel = r["relative_residual"]
        .as_f64()
        .expect("relative_residual is a number");
    assert!(rel.is_finite(), "relative residual {rel:e}\n{ctx}");
    assert_meets_rtol(rel, rtol, &format!("relative residual\n{ctx}"));
    let iterations = r["iterations"].as_u64().expect("iterations") as usize;
    let history = r["history"].as_array().expect("history is an array");
    assert_eq!(history.len(), iterations + 1, "history length\n{ctx}");
    // ‖b − Ax‖∞ of the returned x lies between ‖r‖₂/√n and ‖r‖₂ (to rounding).
    let inf = r["residual_inf"]
        .as_f64()
        .expect("residual_inf is a number");
    let two = rel * r["b_norm"].as_f64().expect("b_norm");
    let n = r["n"].as_f64().expect("n");
    assert!(
        inf <= two * (1.0 + 1e-6) + 1e-300 && inf >= two / n.sqrt() * (1.0 - 1e-6),
        "residual_inf {inf:e} vs |r|_2 {two:e}\n{ctx}"
    );
    r
}

/// A relative residual meets `rtol` with the 0.1 % slack of the convergence check.
#[track_caller]
fn assert_meets_rtol(rel: f64, rtol: f64, what: &str) {
    assert!(
        rel <= rtol * (1.0 + 1e-3),
        "{rel:e} > rtol {rtol:e}: {what}"
    );
}

/// Reads a Matrix Market `array` vector written by `--out` (n x 1), independently of the library.
fn read_mtx_vector(path: &Path) -> Vec<f64> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let banner = lines.next().expect("banner").to_lowercase();
    assert!(
        banner.starts_with("%%matrixmarket matrix array real"),
        "banner: {banner}"
    );
    let mut data = lines
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('%'));
    let size: Vec<usize> = data
        .next()
        .expect("size line")
        .split_whitespace()
        .map(|t| t.parse().expect("size"))
        .collect();
    assert_eq!(size.len(), 2, "size line");
    assert_eq!(size[1], 1, "a vector has one column");
    let values: Vec<f64> = data.map(|l| l.parse::<f64>().expect("value")).collect();
    assert_eq!(values.len(), size[0], "number of values");
    values
}

/// [`solve_ok`] with the arguments `files` (paths, kept whole) then those of `line`.
fn solve_ok_on(files: &[&str], line: &str, rtol: f64) -> Value {
    let mut args = files.to_vec();
    args.extend(words(line));
    solve_ok(&args, rtol)
}

/// Whether `krylov info` lists an adapter (the GPU-only checks return early without one).
fn has_gpu_adapter() -> bool {
    common::cli::krylov_line("info --json").json()["adapters"]
        .as_array()
        .is_some_and(|a| !a.is_empty())
}

/// `krylov solve --device gpu --json <line>`: must exit 0; its report.
fn solve_on_gpu(line: &str) -> Value {
    let run = common::cli::krylov_line(&format!("solve --device gpu --json {line}"));
    run.assert_code(0);
    run.json()
}

const VARIANTS: [&str; 2] = ["classical", "pipelined"];

fn check_method(r: &Value, method: &str, variant: &str, precision: &str) {
    assert_eq!(r["method"], method, "{r}");
    assert_eq!(r["variant"], variant, "{r}");
    assert_eq!(r["precision"], precision, "{r}");
}
