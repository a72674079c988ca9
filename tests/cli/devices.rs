//! `krylov solve --devices`: CG, BiCGStab and GMRES over two logical devices on the first adapter
//! and BiCG with its two recurrences on two (tests/gpu_dist/ checks the solvers against one
//! device), and the refusals.

use serde_json::Value;

use super::common::cli::krylov;

/// Whether a GPU adapter exists (with KRYLOV_REQUIRE_GPU=1 its absence fails).
fn have_gpu() -> bool {
    if super::common::context().is_some() {
        return true;
    }
    eprintln!("no GPU adapter: the --devices runs do nothing here");
    false
}

#[test]
fn cg_bicgstab_and_gmres_on_two_logical_devices() {
    if !have_gpu() {
        return;
    }
    for (method, matrix) in [
        ("cg", "poisson2d:24"),
        ("bicgstab", "convdiff2d:24"),
        ("gmres", "convdiff2d:24"),
    ] {
        let run = krylov(&[
            "solve",
            "--generate",
            matrix,
            "--method",
            method,
            "--precision",
            "f32",
            "--precond",
            "jacobi",
            "--rtol",
            "1e-5",
            "--devices",
            "0,0",
            "--json",
        ]);
        run.assert_code(0);
        let r = run.json();
        let ctx = run.context();
        assert_eq!(r["converged"], Value::Bool(true), "{ctx}");
        assert_eq!(r["method"], method, "{ctx}");
        assert!(
            r["relative_residual"].as_f64().unwrap() <= 1e-5 * 1.001,
            "{ctx}"
        );
        let devices = r["devices"]["devices"].as_array().expect("devices");
        assert_eq!(devices.len(), 2, "{ctx}");
        let rows: u64 = devices.iter().map(|d| d["rows"].as_u64().unwrap()).sum();
        assert_eq!(rows, 576, "{ctx}");
        // A 24 × 24 grid in two blocks: each reads one grid line of the other per product.
        let products = if method == "bicgstab" { 2 } else { 1 };
        assert_eq!(
            r["devices"]["exchange_values_per_iteration"],
            48 * products,
            "{ctx}"
        );
        let err = r["solution_error"].as_f64().unwrap();
        assert!(err < 1e-3, "{ctx}");
    }
    // The text summary names each device's block.
    let run = krylov(&[
        "solve",
        "--generate",
        "poisson2d:12",
        "--precision",
        "f32",
        "--devices",
        "0,0",
    ]);
    run.assert_code(0);
    assert!(
        run.stdout.contains("device 1:") && run.stdout.contains("exchange:"),
        "{}",
        run.context()
    );
}

#[test]
fn bicg_with_ilu_on_two_logical_devices() {
    if !have_gpu() {
        return;
    }
    let run = krylov(&[
        "solve",
        "--generate",
        "convdiff3d:8:circular",
        "--method",
        "bicg",
        "--precision",
        "f32",
        "--precond",
        "ilu0",
        "--trisolve",
        "sweeps:3",
        "--rtol",
        "1e-5",
        "--devices",
        "0,0",
        "--json",
    ]);
    run.assert_code(0);
    let r = run.json();
    let ctx = run.context();
    assert_eq!(r["converged"], Value::Bool(true), "{ctx}");
    assert_eq!(r["method"], "bicg", "{ctx}");
    assert_eq!(r["preconditioner"]["kind"], "ilu0", "{ctx}");
    // Both devices hold all 512 rows; p~ and r~ cross each iteration.
    let devices = r["devices"]["devices"].as_array().expect("devices");
    assert_eq!(devices.len(), 2, "{ctx}");
    assert!(devices.iter().all(|d| d["rows"] == 512), "{ctx}");
    assert_eq!(r["devices"]["exchange_values_per_iteration"], 1024, "{ctx}");
    // sweeps:3 on both sides: 14 + 6 + 6 launches per iteration, two fewer on the first.
    let j = r["iterations"].as_u64().unwrap();
    assert_eq!(r["loop_counts"]["dispatches"], 26 * j - 2, "{ctx}");
}

#[test]
fn what_several_devices_do_not_run_is_one_clear_error() {
    let base = ["solve", "--generate", "poisson2d:8", "--devices", "0,0"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        krylov(&a)
    };
    with(&["--method", "cagmres", "--tsqr", "caqr"]).assert_input_error(&["cholqr2", "caqr"]);
    with(&["--precision", "mixed"]).assert_input_error(&["--devices", "mixed"]);
    with(&["--device", "cpu"]).assert_input_error(&["--devices", "--device cpu"]);
    with(&["--precond", "ilu0"]).assert_input_error(&["--precond none or jacobi"]);
    // --mpi in a build without the `mpi` feature says how to get one; beside --devices it
    // is a usage error.
    #[cfg(not(feature = "mpi"))]
    krylov(&["solve", "--generate", "poisson2d:8", "--mpi"])
        .assert_input_error(&["--features mpi", "mpirun -np 2"]);
    krylov(&[
        "solve",
        "--generate",
        "poisson2d:8",
        "--mpi",
        "--devices",
        "2",
    ])
    .assert_code(2);
    // Not a count or a list: a usage error (exit 2).
    krylov(&["solve", "--devices", "two"]).assert_code(2);
    krylov(&["solve", "--devices", "0"]).assert_code(2);
    if have_gpu() {
        // BiCG's two recurrences need exactly two devices.
        krylov(&[
            "solve",
            "--generate",
            "poisson2d:8",
            "--method",
            "bicg",
            "--devices",
            "0,0,0",
        ])
        .assert_input_error(&["two devices"]);
        krylov(&["solve", "--generate", "poisson2d:8", "--devices", "64"])
            .assert_input_error(&["--devices 64", "--devices 0,0"]);
    }
}

#[test]
fn heat_leaves_the_solve_as_it_was() {
    if !have_gpu() {
        return;
    }
    // --heat keeps hardware GPUs busy during the set-up (none on lavapipe); the solve is the
    // same, on one device and on two.
    for devices in [&["--device", "gpu"][..], &["--devices", "0,0"][..]] {
        let run = |heat: bool| {
            let mut args = vec![
                "solve",
                "--generate",
                "poisson2d:20",
                "--precision",
                "f32",
                "--rtol",
                "1e-5",
                "--json",
            ];
            args.extend_from_slice(devices);
            if heat {
                args.push("--heat");
            }
            let run = krylov(&args);
            run.assert_code(0);
            run.json()
        };
        let (cold, hot) = (run(false), run(true));
        assert_eq!(hot["converged"], Value::Bool(true), "{devices:?}");
        assert_eq!(hot["iterations"], cold["iterations"], "{devices:?}");
        assert_eq!(hot["counts"], cold["counts"], "{devices:?}");
        assert_eq!(
            hot["relative_residual"], cold["relative_residual"],
            "{devices:?}"
        );
    }
}
