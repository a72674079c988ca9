//! The embedded default problem, output formats and the files written (--out, --history).

use std::fs;

use serde_json::Value;

use super::common::cli::{data_arg as data, krylov, path_str, temp_dir};
use super::{assert_meets_rtol, read_mtx_vector, solve_ok};

#[test]
fn default_problem_json_report() {
    let out = temp_dir("default").join("x.mtx");
    let run = krylov(&[
        "solve",
        "--device",
        "cpu",
        "--json",
        "--out",
        &path_str(&out),
    ]);
    run.assert_code(0);
    let r = run.json();
    let ctx = run.context();
    assert!(r.is_object(), "{ctx}");
    for field in [
        "method",
        "variant",
        "precision",
        "format",
        "device",
        "device_reason",
        "n",
        "nnz",
        "iterations",
        "converged",
        "reason",
        "relative_residual",
        "dispatches_per_iteration",
        "transfers_per_iteration",
        "reductions_per_iteration",
        "syncs_per_iteration",
        "cycles",
        "syncs_per_cycle",
        "seconds",
        "history",
    ] {
        assert!(r.get(field).is_some(), "missing field `{field}`\n{ctx}");
    }
    assert_eq!(r["method"], "cg", "{ctx}");
    assert_eq!(r["variant"], "pipelined", "{ctx}");
    assert_eq!(r["precision"], "f64", "{ctx}");
    assert_eq!(r["format"], "csr", "{ctx}");
    assert_eq!(
        r["device"],
        serde_json::json!({"kind": "cpu", "name": "CPU reference", "backend": "host", "software": false}),
        "{ctx}"
    );
    assert_eq!(
        r["device_reason"], "asked for the CPU (--device cpu)",
        "{ctx}"
    );
    assert_eq!(r["n"], 65536, "{ctx}");
    // 5-point stencil on a 256 x 256 grid: 5 n - 4 * 256 entries.
    assert_eq!(r["nnz"], 5 * 65536 - 4 * 256, "{ctx}");
    assert_eq!(r["converged"], Value::Bool(true), "{ctx}");
    assert_eq!(r["reason"], "converged", "{ctx}");
    assert_eq!(r["dispatches_per_iteration"].as_f64(), Some(0.0), "{ctx}");
    assert_eq!(r["transfers_per_iteration"].as_f64(), Some(0.0), "{ctx}");
    // The CPU reference of CG counts no reductions; it has no restart cycles.
    assert_eq!(r["reductions_per_iteration"].as_f64(), Some(0.0), "{ctx}");
    assert_eq!(r["syncs_per_iteration"].as_f64(), Some(0.0), "{ctx}");
    assert_eq!(r["cycles"], Value::Null, "{ctx}");
    assert_eq!(r["syncs_per_cycle"], Value::Null, "{ctx}");
    let seconds = r["seconds"].as_f64().expect("seconds");
    assert!(seconds.is_finite() && seconds >= 0.0, "{ctx}");

    let iterations = r["iterations"].as_u64().expect("iterations") as usize;
    assert!(iterations > 0, "{ctx}");
    let history: Vec<f64> = r["history"]
        .as_array()
        .expect("history array")
        .iter()
        .map(|v| v.as_f64().expect("history entries are numbers"))
        .collect();
    assert_eq!(history.len(), iterations + 1, "{ctx}");

    // b = A·1 and x0 = 0, so the first history entry is ‖b‖₂.
    let a = krylov_wgpu::matrix::generators::from_spec::<f64>("poisson2d:256").unwrap();
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let b_norm = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(
        (history[0] - b_norm).abs() <= 1e-10 * b_norm,
        "history[0] = {} is not the initial residual ‖b‖ = {b_norm}\n{ctx}",
        history[0]
    );
    if let Some(reported) = r.get("b_norm").and_then(Value::as_f64) {
        assert!(
            (reported - b_norm).abs() <= 1e-12 * b_norm,
            "b_norm {reported} vs {b_norm}"
        );
    }

    // relative_residual is the TRUE residual of the x written by --out.
    let rel = r["relative_residual"].as_f64().expect("relative_residual");
    assert_meets_rtol(rel, 1e-6, &format!("relative residual\n{ctx}"));
    let x = read_mtx_vector(&out);
    assert_eq!(x.len(), 65536);
    let ax = a.mul_vec(&x).unwrap();
    let true_rel = b
        .iter()
        .zip(&ax)
        .map(|(bi, ai)| (bi - ai).powi(2))
        .sum::<f64>()
        .sqrt()
        / b_norm;
    assert!(
        (true_rel - rel).abs() <= 1e-6 * rel.max(1e-300) + 1e-15,
        "reported relative_residual {rel:e} is not the true residual {true_rel:e}\n{ctx}"
    );
    // And the tracked residual at the end agrees roughly with the true one.
    let last = history[iterations] / b_norm;
    assert_meets_rtol(last, 1e-6, &format!("last history entry\n{ctx}"));
}

#[test]
fn human_readable_output_and_files() {
    let dir = temp_dir("human");
    let out = dir.join("x.mtx");
    let hist = dir.join("h.csv");
    let run = krylov(&[
        "solve",
        "--generate",
        "poisson2d:32",
        "--device",
        "cpu",
        "--rtol",
        "1e-10",
        "--out",
        &path_str(&out),
        "--history",
        &path_str(&hist),
    ]);
    run.assert_code(0);
    let ctx = run.context();
    assert!(
        !run.stdout.trim_start().starts_with('{'),
        "no JSON without --json\n{ctx}"
    );
    assert!(
        run.stdout.contains("poisson2d:32"),
        "names the problem\n{ctx}"
    );
    assert!(run.stdout.contains("n = 1024"), "{ctx}");
    assert!(run.stdout.contains("converged after"), "{ctx}");
    assert!(!run.stdout.contains("NOT converged"), "{ctx}");
    assert!(run.stdout.contains("relative residual"), "{ctx}");
    assert!(run.stdout.contains("RMS error"), "{ctx}");
    assert!(!run.stderr.contains("error"), "{ctx}");

    // x ≈ 1 (b = A·1).
    let x = read_mtx_vector(&out);
    assert_eq!(x.len(), 1024);
    let max_err = x.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
    assert!(
        max_err < 1e-6,
        "x is not close to all ones: max |x - 1| = {max_err:e}\n{ctx}"
    );

    // The history CSV: header + iterations + 1 rows. Get the iteration count from the same
    // solve in JSON (deterministic on the CPU).
    let r = solve_ok(&["--generate", "poisson2d:32"], 1e-10);
    let iterations = r["iterations"].as_u64().unwrap() as usize;
    let csv = fs::read_to_string(&hist).expect("history written");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("iteration,residual,relative_residual"),
        "CSV header"
    );
    let rows: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        rows.len(),
        iterations + 1,
        "CSV rows vs iterations {iterations}"
    );
    let b_norm = r["b_norm"].as_f64();
    for (k, row) in rows.iter().enumerate() {
        let cols: Vec<&str> = row.split(',').collect();
        assert_eq!(cols.len(), 3, "row {k}: {row}");
        assert_eq!(
            cols[0].parse::<usize>().expect("iteration"),
            k,
            "row {k}: {row}"
        );
        let res: f64 = cols[1].parse().expect("residual");
        let rel: f64 = cols[2].parse().expect("relative residual");
        assert!(
            res.is_finite() && rel.is_finite() && res >= 0.0,
            "row {k}: {row}"
        );
        if let Some(bn) = b_norm {
            assert!(
                (rel * bn - res).abs() <= 1e-12 * res.max(1e-300),
                "row {k}: {row}"
            );
        }
    }
    let first_rel: f64 = rows[0].split(',').nth(2).unwrap().parse().unwrap();
    assert!(
        (first_rel - 1.0).abs() < 1e-12,
        "x0 = 0, so the first relative residual is 1"
    );
    let last_rel: f64 = rows[iterations].split(',').nth(2).unwrap().parse().unwrap();
    assert_meets_rtol(last_rel, 1e-10, "last relative residual");
}

#[test]
fn out_and_history_for_user_rhs() {
    // With --rhs, there is no known exact solution: solution_error is null, and A·x ≈ b.
    let dir = temp_dir("rhs");
    let out = dir.join("x.mtx");
    let r = solve_ok(
        &[
            &data("mesh1e1.mtx"),
            "--rhs",
            &data("mesh1e1_rhs.mtx"),
            "--method",
            "cg",
            "--variant",
            "classical",
            "--out",
            &path_str(&out),
        ],
        1e-10,
    );
    assert_eq!(r["n"], 48);
    if let Some(err) = r.get("solution_error") {
        assert!(
            err.is_null(),
            "no exact solution is known with --rhs: {err}"
        );
    }
    let x = read_mtx_vector(&out);
    assert_eq!(x.len(), 48);
}
