//! Bad input: exit 1, empty stdout, one `error:` line naming the problem.

use std::path::Path;

use super::common::cli::{data_arg as data, krylov, krylov_line, path_str, temp_dir, write};

/// `krylov solve --device cpu <args>` fails on its input: exit 1, nothing on stdout, one
/// `error:` line naming every one of `needles`.
fn assert_cpu_solve_rejects(args: &[&str], needles: &[&str]) {
    let mut all = vec!["solve", "--device", "cpu"];
    all.extend_from_slice(args);
    krylov(&all).assert_input_error(needles);
}

/// A matrix file holding `text`, written to `dir/name`, is rejected by GMRES on the CPU.
fn assert_matrix_file_rejected(dir: &Path, name: &str, text: &str, needles: &[&str]) {
    let path = write(dir, name, text);
    assert_cpu_solve_rejects(&[&path, "--method", "gmres"], needles);
}

#[test]
fn missing_file() {
    let dir = temp_dir("missing");
    let path = path_str(&dir.join("does-not-exist.mtx"));
    assert_cpu_solve_rejects(&[&path], &["does-not-exist.mtx"]);
    assert_cpu_solve_rejects(&[&path, "--json"], &["does-not-exist.mtx"]);
    // A missing right-hand side file.
    let rhs = path_str(&dir.join("no-rhs.mtx"));
    let bcsstk01 = data("bcsstk01.mtx");
    assert_cpu_solve_rejects(&[&bcsstk01, "--rhs", &rhs], &["no-rhs.mtx"]);
}

#[test]
fn malformed_matrix_market_files() {
    let dir = temp_dir("malformed");
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            "bad_banner.mtx",
            "%%MatrixMarket tensor coordinate real general\n2 2 2\n1 1 1.0\n2 2 1.0\n",
            &["bad_banner.mtx", "banner"],
        ),
        (
            "no_banner.mtx",
            "2 2 2\n1 1 1.0\n2 2 1.0\n",
            &["no_banner.mtx", "banner"],
        ),
        (
            "truncated.mtx",
            "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n2 2 1.0\n",
            &["truncated.mtx", "truncated"],
        ),
        (
            "nan.mtx",
            "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 NaN\n2 2 1.0\n",
            &["nan.mtx", "non-finite"],
        ),
        (
            "out_of_range.mtx",
            "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n2 2 1.0\n3 5 1.0\n",
            &["out_of_range.mtx", "out of range"],
        ),
    ];
    for (name, text, needles) in cases {
        assert_matrix_file_rejected(&dir, name, text, needles);
    }
    // A malformed right-hand side is reported the same way.
    let rhs = write(
        &dir,
        "bad_rhs.mtx",
        "%%MatrixMarket matrix array real general\n48 1\n1.0\n2.0\n",
    );
    let bcsstk01 = data("bcsstk01.mtx");
    assert_cpu_solve_rejects(&[&bcsstk01, "--rhs", &rhs], &["bad_rhs.mtx"]);
}

#[test]
fn complex_matrix_is_rejected() {
    assert_matrix_file_rejected(
        &temp_dir("complex"),
        "complex.mtx",
        "%%MatrixMarket matrix coordinate complex general\n2 2 2\n1 1 1.0 0.5\n2 2 1.0 -0.5\n",
        &["complex"],
    );
}

#[test]
fn non_square_matrix() {
    assert_matrix_file_rejected(
        &temp_dir("nonsquare"),
        "rect.mtx",
        "%%MatrixMarket matrix coordinate real general\n3 2 3\n1 1 1.0\n2 2 1.0\n3 1 1.0\n",
        &["not square"],
    );
}

#[test]
fn rhs_of_wrong_length() {
    let (pores_1, rhs) = (data("pores_1.mtx"), data("sherman4_rhs.mtx"));
    assert_cpu_solve_rejects(
        &[&pores_1, "--rhs", &rhs, "--method", "bicgstab"],
        &["right-hand side", "30", "1104"],
    );
}

#[test]
fn cg_on_nonsymmetric_matrix() {
    let pores_1 = data("pores_1.mtx");
    assert_cpu_solve_rejects(&[&pores_1, "--method", "cg"], &["symmetric"]);
}

#[test]
fn jacobi_on_zero_diagonal() {
    let west0479 = data("west0479.mtx");
    assert_cpu_solve_rejects(
        &[
            &west0479,
            "--method",
            "gmres",
            "--precond",
            "jacobi",
            "--reorder",
            "none",
        ],
        &["zero diagonal"],
    );
    assert_cpu_solve_rejects(
        &[&west0479, "--method", "jacobi", "--json"],
        &["zero diagonal"],
    );
}

#[test]
fn invalid_option_values() {
    for (extra, needle) in [
        (&["--rtol=-1e-6"][..], "rtol"),
        (&["--atol=-1"], "atol"),
        (&["--rtol", "NaN"], "rtol"),
        (&["--rtol", "inf"], "rtol"),
        (&["--method", "gmres", "--restart", "0"], "restart"),
    ] {
        let mut args = vec!["--generate", "poisson2d:8"];
        args.extend_from_slice(extra);
        assert_cpu_solve_rejects(&args, &[needle]);
    }
}

#[test]
fn negative_tolerance_as_separate_argument() {
    // `--rtol -1e-6` (value as its own argument) is a bad value, not a usage error: it must
    // be reported like `--rtol=-1e-6` (exit 1, naming rtol), not as "unexpected argument".
    for (flag, value) in [("--rtol", "-1e-6"), ("--atol", "-1")] {
        let args = ["--generate", "poisson2d:8", flag, value];
        assert_cpu_solve_rejects(&args, &[&flag[2..]]);
    }
}

#[test]
fn bad_generate_specs() {
    for (spec, needle) in [
        ("bogus:12", "bogus"),
        ("poisson2d:0", "positive"),
        ("poisson2d:abc", "abc"),
        ("poisson2d", "argument"),
        ("convdiff3d:6:sideways", "sideways"),
    ] {
        assert_cpu_solve_rejects(&["--generate", spec], &["bad matrix spec", needle]);
    }
}

#[test]
fn bad_rhs_values_and_unwritable_output() {
    let dir = temp_dir("rhs-values");
    let mut text = String::from("%%MatrixMarket matrix array real general\n30 1\n");
    for i in 0..30 {
        text.push_str(if i == 7 { "NaN\n" } else { "1.0\n" });
    }
    let rhs = write(&dir, "nan_rhs.mtx", &text);
    let pores_1 = data("pores_1.mtx");
    assert_cpu_solve_rejects(
        &[&pores_1, "--rhs", &rhs, "--method", "gmres"],
        &["non-finite"],
    );

    // --out / --history into a directory that does not exist: an I/O error naming the path.
    let out = path_str(&dir.join("no-such-dir").join("x.mtx"));
    assert_cpu_solve_rejects(
        &["--generate", "poisson2d:8", "--out", &out],
        &["no-such-dir"],
    );
    let hist = path_str(&dir.join("no-such-dir").join("h.csv"));
    assert_cpu_solve_rejects(
        &["--generate", "poisson2d:8", "--json", "--history", &hist],
        &["no-such-dir"],
    );
}

#[test]
fn spmv_bad_input() {
    // The matrix is read before any GPU is opened, so these hold with or without an adapter.
    let dir = temp_dir("spmv-bad");
    let missing = path_str(&dir.join("absent.mtx"));
    krylov(&["spmv", &missing]).assert_input_error(&["absent.mtx"]);
    krylov(&["spmv", "--generate", "poisson2d:x3"]).assert_input_error(&["bad matrix spec"]);
    let bad = write(
        &dir,
        "trunc.mtx",
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n",
    );
    krylov(&["spmv", &bad, "--json"]).assert_input_error(&["trunc.mtx", "truncated"]);
}

#[test]
fn device_gpu_request_is_one_line() {
    // Whatever the state of the GPU solvers, `--device gpu` either solves or fails with one
    // `error:` line (exit 1); it never panics or prints a multi-line message.
    let run = krylov_line("solve --generate poisson2d:8 --device gpu --json");
    match run.code {
        Some(0) => {
            let r = run.json();
            assert_eq!(r["device"]["kind"], "gpu", "{}", run.context());
            assert!(
                r["device_reason"]
                    .as_str()
                    .is_some_and(|s| s.contains("--device gpu")),
                "{}",
                run.context()
            );
        }
        _ => run.assert_input_error(&[]),
    }
}

/// `krylov bench`'s launch flags are applied (they were once parsed and ignored), so a value
/// the kernels cannot take is an input error before any adapter is opened.
#[test]
fn bench_launch_flags_are_checked() {
    krylov(&["bench", "--workgroup-size", "100"]).assert_input_error(&["--workgroup-size 100"]);
    krylov(&["bench", "--max-groups", "0"]).assert_input_error(&["--max-groups"]);
    krylov(&["bench", "--subgroups", "maybe"]).assert_input_error(&["--subgroups maybe"]);
}
