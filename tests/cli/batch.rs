//! `krylov batch`: a folder of matrices, one matrix with a block of right-hand sides, the
//! generated variants, `--one-by-one`, and the errors (CPU twin here; the GPU kernels are
//! tested against it in tests/gpu_batch.rs).

use std::fs;

use serde_json::Value;

use super::common::cli::{data_arg, krylov, path_str, temp_dir, write};

#[test]
fn a_folder_of_matrices_with_their_right_hand_sides() {
    let dir = temp_dir("batch-folder");
    for f in [
        "bcsstk01.mtx.gz",
        "494_bus.mtx",
        "mesh1e1.mtx",
        "mesh1e1_rhs.mtx",
    ] {
        fs::copy(super::common::data(f), dir.join(f)).unwrap();
    }
    let run = krylov(&[
        "batch",
        &path_str(&dir),
        "--device",
        "cpu",
        "--json",
        "--rtol",
        "1e-9",
    ]);
    run.assert_code(0);
    let r = run.json();
    let ctx = run.context();
    assert_eq!(r["systems"], 3, "{ctx}");
    assert_eq!(r["all_converged"], Value::Bool(true), "{ctx}");
    let names: Vec<&str> = r["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        names[0].ends_with("494_bus.mtx") && names[2].ends_with("mesh1e1.mtx"),
        "{ctx}"
    );
    let cols = r["columns"].as_array().unwrap();
    assert_eq!(cols.len(), 3);
    for c in cols {
        assert!(
            c["relative_residual"].as_f64().unwrap() <= 1e-9 * 1.001,
            "{ctx}"
        );
    }
    // mesh1e1 took its shipped right-hand side, not A·1.
    let shipped =
        krylov_wgpu::matrix::read_vector::<f64>(super::common::data("mesh1e1_rhs.mtx")).unwrap();
    let norm = shipped.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(
        (cols[2]["b_norm"].as_f64().unwrap() - norm).abs() <= 1e-12 * norm,
        "{ctx}"
    );
}

#[test]
fn one_matrix_with_a_block_of_right_hand_sides() {
    let dir = temp_dir("batch-rhs");
    let mut text = String::from("%%MatrixMarket matrix array real general\n494 5\n");
    for j in 0..5 {
        for i in 0..494 {
            text.push_str(&format!(
                "{}\n",
                1.0 + j as f64 + 0.01 * ((i * (j + 1)) as f64).sin()
            ));
        }
    }
    let rhs = write(&dir, "B.mtx", &text);
    let run = krylov(&[
        "batch",
        &data_arg("494_bus.mtx"),
        "--rhs",
        &rhs,
        "--device",
        "cpu",
        "--json",
    ]);
    run.assert_code(0);
    let r = run.json();
    assert_eq!(r["columns_total"], 5, "{}", run.context());
    let rhs_index: Vec<u64> = r["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["rhs"].as_u64().unwrap())
        .collect();
    assert_eq!(rhs_index, vec![0, 1, 2, 3, 4]);
}

#[test]
fn generated_variants_and_the_one_by_one_baseline() {
    let run = krylov(&[
        "batch",
        "--generate",
        "poisson2d:40",
        "--count",
        "9",
        "--device",
        "cpu",
        "--json",
    ]);
    run.assert_code(0);
    let r = run.json();
    assert_eq!(r["systems"], 9);
    let its: Vec<u64> = r["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["iterations"].as_u64().unwrap())
        .collect();
    // A + (k mod 7)·0.01·I: the shifted ones converge in fewer iterations; #7 repeats #0.
    assert!(its[6] < its[0] && its[7] == its[0], "{its:?}");
    let base = krylov(&[
        "batch",
        "--generate",
        "poisson2d:40",
        "--count",
        "9",
        "--device",
        "cpu",
        "--one-by-one",
        "--json",
    ]);
    base.assert_code(0);
    let b = base.json();
    assert_eq!(b["mode"], "one-by-one");
    assert_eq!(b["converged"], 9);
}

#[test]
fn batch_errors_are_one_line() {
    krylov(&["batch", &data_arg("west0479.mtx"), "--device", "cpu"])
        .assert_one_error_line(&["not symmetric", "bicgstab"]);
    let empty = temp_dir("batch-empty");
    krylov(&["batch", &path_str(&empty), "--device", "cpu"]).assert_one_error_line(&["no .mtx"]);
    krylov(&["batch", "--generate", "poisson2d:4", "--count", "0"])
        .assert_one_error_line(&["--count"]);
    krylov(&[
        "batch",
        "--generate",
        "poisson2d:4",
        "--precond",
        "ilu0",
        "--device",
        "cpu",
    ])
    .assert_one_error_line(&["jacobi or none"]);
    let dir = temp_dir("batch-bad-rhs");
    let rhs = write(
        &dir,
        "B.mtx",
        "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n",
    );
    krylov(&[
        "batch",
        &data_arg("494_bus.mtx"),
        "--rhs",
        &rhs,
        "--device",
        "cpu",
    ])
    .assert_one_error_line(&["system 0", "right-hand side"]);
}

#[test]
fn a_batch_that_does_not_converge_exits_3_with_its_report() {
    let run = krylov(&[
        "batch",
        "--generate",
        "poisson2d:20",
        "--count",
        "3",
        "--max-iter",
        "5",
        "--device",
        "cpu",
        "--json",
    ]);
    run.assert_code(3);
    let r = run.json();
    assert_eq!(r["converged"], 0);
    assert_eq!(r["columns"][0]["reason"], "max_iterations");
}
