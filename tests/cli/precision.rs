//! `--precision mixed`, `--no-f64` and `--allow-mixed`: f64 accuracy from f32 solves on the
//! CPU reference and on the GPU, and what an f32 solve that cannot reach rtol says.

use serde_json::Value;

use super::common::cli::{data_arg as data, krylov_line};
use super::{assert_meets_rtol, solve_ok};

#[test]
fn mixed_on_the_cpu_reaches_what_f32_alone_cannot() {
    let line = "--generate poisson2d:32 --precision mixed";
    let r = solve_ok(&super::common::cli::words(line), 1e-11);
    let refinement = &r["refinement"];
    assert_eq!(refinement["outer_precision"], "f64", "{r}");
    assert_eq!(refinement["inner_precision"], "f32", "{r}");
    assert!(refinement["outer_iterations"].as_u64().unwrap() >= 2, "{r}");

    // f32 alone stops at the residual gap, says what it attained and points to mixed.
    let run = krylov_line(
        "solve --generate poisson2d:32 --precision f32 --rtol 1e-11 --device cpu --json",
    );
    run.assert_code(3);
    let r = run.json();
    assert_eq!(r["reason"], "residual_gap", "{}", run.context());
    let detail = r["reason_detail"].as_str().unwrap();
    assert!(
        detail.contains("f32 attained") && detail.contains("--precision mixed"),
        "{detail}"
    );
}

#[test]
fn mixed_on_a_gpu_without_f64_refines_in_double_single() {
    if !super::has_gpu_adapter() {
        return;
    }
    let sherman4 = data("sherman4.mtx");
    let base = format!(
        "solve {sherman4} --method bicgstab --precond ilu0 --rtol 1e-10 --device gpu --json"
    );
    let run = krylov_line(&format!("{base} --precision mixed --no-f64"));
    run.assert_code(0);
    let r = run.json();
    let ctx = run.context();
    assert_eq!(r["device"]["kind"], "gpu", "{ctx}");
    assert_eq!(r["refinement"]["outer_precision"], "double-single", "{ctx}");
    assert_meets_rtol(r["relative_residual"].as_f64().unwrap(), 1e-10, &ctx);

    // f64 without f64 kernels: an error naming the feature and the way out, unless mixed is
    // allowed — then mixed runs on the GPU and the first note says why.
    let run = krylov_line(&format!("{base} --no-f64"));
    run.assert_one_error_line(&["SHADER_F64", "--allow-mixed"]);
    let run = krylov_line(&format!("{base} --no-f64 --allow-mixed"));
    run.assert_code(0);
    let r = run.json();
    assert_eq!(
        r["refinement"]["outer_precision"],
        "double-single",
        "{}",
        run.context()
    );
    let first_note = &r["notes"][0];
    assert!(
        first_note
            .as_str()
            .is_some_and(|n| n.contains("--allow-mixed")),
        "{}",
        run.context()
    );
    assert_eq!(r["converged"], Value::Bool(true), "{}", run.context());
}
