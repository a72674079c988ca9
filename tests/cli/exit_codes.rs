//! Usage errors (exit 2) and non-convergence (exit 3).

use serde_json::Value;

use super::common::cli::{data_arg as data, krylov, krylov_line};

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["solve", "--method", "conjugate-residual", "--device", "cpu"][..],
        &["solve", "--variant", "turbo", "--device", "cpu"],
        &["solve", "--precision", "f16", "--device", "cpu"],
        &["solve", "--device", "tpu"],
        &["solve", "--frobnicate"],
        &["solve", "--max-iter", "many"],
        &["solve", "--generate", "poisson2d:8", &data("bcsstk01.mtx")],
        &["transmogrify"],
        &["spmv", "--precision", "f16"],
        &["info", "--jsn"],
        &[],
    ] {
        let run = krylov(args);
        run.assert_code(2);
        assert!(
            run.stdout.is_empty(),
            "usage errors go to stderr\n{}",
            run.context()
        );
        // With no subcommand at all, clap prints the help instead of an `error:` line.
        if !args.is_empty() {
            assert!(run.stderr.contains("error"), "{}", run.context());
        }
    }
}

#[test]
fn non_converging_solve_exits_3() {
    let run = krylov_line("solve --generate poisson2d:16 --device cpu --max-iter 3 --json");
    run.assert_code(3);
    let r = run.json();
    let ctx = run.context();
    assert_eq!(r["converged"], Value::Bool(false), "{ctx}");
    assert_eq!(r["reason"], "max_iterations", "{ctx}");
    assert_eq!(r["iterations"], 3, "{ctx}");
    assert_eq!(r["history"].as_array().map(Vec::len), Some(4), "{ctx}");
    let rel = r["relative_residual"].as_f64().expect("relative_residual");
    assert!(rel.is_finite() && rel > 1e-6, "{ctx}");
    if !run.stderr.is_empty() {
        run.assert_one_error_line(&["not converged"]);
    }

    // Without --json: the summary says so, still exit 3.
    let run = krylov_line("solve --generate poisson2d:16 --device cpu --max-iter 3");
    run.assert_code(3);
    assert!(run.stdout.contains("NOT converged"), "{}", run.context());

    // GMRES counts inner iterations over restarts.
    let run = krylov_line(
        "solve --generate convdiff3d:6:x --method gmres --restart 2 --max-iter 3 --device cpu \
         --json",
    );
    run.assert_code(3);
    let r = run.json();
    assert_eq!(r["reason"], "max_iterations", "{}", run.context());
    assert_eq!(
        r["history"].as_array().map(Vec::len),
        Some(4),
        "{}",
        run.context()
    );
}

#[test]
fn the_fused_variant_is_cgs_and_gmress_only() {
    for method in ["bicgstab", "bicg"] {
        krylov_line(&format!(
            "solve --generate poisson2d:8 --device cpu --method {method} --variant fused"
        ))
        .assert_input_error(&["fused", "CG"]);
    }
    for method in ["cg", "bicgstab"] {
        krylov_line(&format!(
            "solve --generate poisson2d:8 --device cpu --method {method} --variant p1"
        ))
        .assert_input_error(&["p1", "GMRES"]);
    }
    krylov_line("solve --generate poisson2d:8 --device cpu --method bicgstab --variant workgroup")
        .assert_input_error(&["workgroup", "CG's and GMRES's"]);
}
