//! End-to-end tests of the `krylov` command line: output formats, files written, every
//! method × variant on the CPU, one-line errors with exit code 1, usage errors (exit 2),
//! non-convergence (exit 3), `info`, and `spmv` on the GPU when an adapter exists.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A private (0700) runtime directory for the child processes, so the Vulkan loader does not
/// complain about a missing or foreign `XDG_RUNTIME_DIR`.
fn runtime_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("cli-xdg-runtime-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("create runtime dir");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("chmod 0700");
        }
        dir
    })
}

/// A fresh empty directory for one test's files.
fn temp_dir(tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cli-{tag}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// Path of a file in tests/data, as a string for the command line.
fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .display()
        .to_string()
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// What a run of `krylov` produced.
struct Run {
    args: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn context(&self) -> String {
        format!(
            "`krylov {}` exited with {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args, self.code, self.stdout, self.stderr
        )
    }

    fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "wrong exit code\n{}", self.context());
        self
    }

    /// stdout parsed as exactly one JSON value on one line.
    fn json(&self) -> Value {
        let text = self.stdout.trim_end_matches('\n');
        assert!(!text.is_empty(), "no JSON on stdout\n{}", self.context());
        assert_eq!(
            text.lines().count(),
            1,
            "JSON must be one line\n{}",
            self.context()
        );
        serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", self.context()))
    }

    /// Exit code 1, nothing on stdout, and exactly one stderr line `error: ...` containing
    /// every one of `needles` (case-insensitive).
    fn assert_input_error(&self, needles: &[&str]) {
        self.assert_code(1);
        assert!(
            self.stdout.is_empty(),
            "stdout must be empty on error\n{}",
            self.context()
        );
        self.assert_one_error_line(needles);
    }

    fn assert_one_error_line(&self, needles: &[&str]) {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "stderr must be exactly one line\n{}",
            self.context()
        );
        assert!(
            lines[0].starts_with("error: "),
            "stderr must start with `error: `\n{}",
            self.context()
        );
        assert!(
            !self.stderr.contains("panicked"),
            "the CLI panicked\n{}",
            self.context()
        );
        let lower = lines[0].to_lowercase();
        for needle in needles {
            assert!(
                lower.contains(&needle.to_lowercase()),
                "stderr should mention `{needle}`\n{}",
                self.context()
            );
        }
    }
}

/// Runs `krylov args...` with a private XDG_RUNTIME_DIR.
fn krylov(args: &[&str]) -> Run {
    let output = assert_cmd::Command::cargo_bin("krylov")
        .expect("the krylov binary is built")
        .args(args)
        .env("XDG_RUNTIME_DIR", runtime_dir())
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("run krylov");
    Run {
        args: args.join(" "),
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

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
    assert!(
        rel.is_finite() && rel <= rtol * (1.0 + 1e-3),
        "relative residual {rel:e} > rtol {rtol:e}\n{ctx}"
    );
    let iterations = r["iterations"].as_u64().expect("iterations") as usize;
    let history = r["history"].as_array().expect("history is an array");
    assert_eq!(history.len(), iterations + 1, "history length\n{ctx}");
    r
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

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, text).expect("write fixture");
    path_str(&path)
}

// ---------------------------------------------------------------------------------------------
// The embedded default problem, output formats and files
// ---------------------------------------------------------------------------------------------

#[test]
fn default_problem_json_report() {
    let dir = temp_dir("default");
    let out = dir.join("x.mtx");
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
    assert!(
        rel <= 1e-6 * (1.0 + 1e-3),
        "relative residual {rel:e}\n{ctx}"
    );
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
    assert!(
        last <= 1e-6 * (1.0 + 1e-3),
        "last history entry {last:e} above rtol\n{ctx}"
    );
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
    assert!(
        last_rel <= 1e-10 * (1.0 + 1e-3),
        "last relative residual {last_rel:e}"
    );
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

// ---------------------------------------------------------------------------------------------
// Every method × variant on the CPU
// ---------------------------------------------------------------------------------------------

const VARIANTS: [&str; 2] = ["classical", "pipelined"];

fn check_method(r: &Value, method: &str, variant: &str, precision: &str) {
    assert_eq!(r["method"], method, "{r}");
    assert_eq!(r["variant"], variant, "{r}");
    assert_eq!(r["precision"], precision, "{r}");
}

#[test]
fn cg_all_variants_and_preconditioners() {
    for variant in VARIANTS {
        for precond in ["none", "jacobi"] {
            for (precision, rtol) in [("f64", 1e-10), ("f32", 1e-4)] {
                let r = solve_ok(
                    &[
                        "--generate",
                        "poisson2d:16",
                        "--method",
                        "cg",
                        "--variant",
                        variant,
                        "--precond",
                        precond,
                        "--precision",
                        precision,
                    ],
                    rtol,
                );
                check_method(&r, "cg", variant, precision);
                assert_eq!(r["n"], 256);
                let err = r["solution_error"]
                    .as_f64()
                    .expect("solution_error with b = A·1");
                assert!(err < if precision == "f64" { 1e-7 } else { 1e-2 }, "{r}");
            }
        }
    }
}

#[test]
fn nonsymmetric_methods_on_convection_diffusion() {
    for method in ["bicgstab", "gmres", "bicg", "jacobi"] {
        for variant in VARIANTS {
            for (precision, rtol) in [("f64", 1e-8), ("f32", 1e-4)] {
                let r = solve_ok(
                    &[
                        "--generate",
                        "convdiff3d:6:x",
                        "--method",
                        method,
                        "--variant",
                        variant,
                        "--precision",
                        precision,
                        "--restart",
                        "20",
                    ],
                    rtol,
                );
                check_method(&r, method, variant, precision);
                assert_eq!(r["n"], 216);
            }
        }
    }
}

#[test]
fn preconditioned_nonsymmetric_methods() {
    for method in ["bicgstab", "gmres", "bicg"] {
        for variant in VARIANTS {
            let r = solve_ok(
                &[
                    "--generate",
                    "convdiff3d:6:circular:0.1",
                    "--method",
                    method,
                    "--variant",
                    variant,
                    "--precond",
                    "jacobi",
                ],
                1e-8,
            );
            check_method(&r, method, variant, "f64");
        }
    }
}

#[test]
fn gmres_gram_schmidt_options() {
    for gs in ["mgs", "cgs", "cgs2"] {
        for variant in VARIANTS {
            let r = solve_ok(
                &[
                    "--generate",
                    "convdiff3d:6:diagonal",
                    "--method",
                    "gmres",
                    "--variant",
                    variant,
                    "--gs",
                    gs,
                    "--restart",
                    "10",
                ],
                1e-8,
            );
            check_method(&r, "gmres", variant, "f64");
        }
    }
}

#[test]
fn real_world_nonsymmetric_matrices() {
    // pores_1 (n = 30): full GMRES (restart >= n).
    for variant in VARIANTS {
        let r = solve_ok(
            &[
                &data("pores_1.mtx"),
                "--method",
                "gmres",
                "--variant",
                variant,
                "--restart",
                "30",
            ],
            1e-6,
        );
        check_method(&r, "gmres", variant, "f64");
        assert_eq!(r["n"], 30);
    }
    // sherman4 with its own right-hand side.
    for method in ["bicgstab", "gmres"] {
        for variant in VARIANTS {
            let r = solve_ok(
                &[
                    &data("sherman4.mtx"),
                    "--rhs",
                    &data("sherman4_rhs.mtx"),
                    "--method",
                    method,
                    "--variant",
                    variant,
                    "--precond",
                    "jacobi",
                    "--restart",
                    "50",
                ],
                1e-6,
            );
            check_method(&r, method, variant, "f64");
            assert_eq!(r["n"], 1104);
        }
    }
}

#[test]
fn gzip_matrix_and_symmetric_storage() {
    let r = solve_ok(
        &[
            &data("bcsstk01.mtx.gz"),
            "--method",
            "cg",
            "--precond",
            "jacobi",
        ],
        1e-8,
    );
    assert_eq!(r["n"], 48);
    assert_eq!(r["nnz"], 400);
}

// ---------------------------------------------------------------------------------------------
// Bad input: exit 1, empty stdout, one `error:` line naming the problem
// ---------------------------------------------------------------------------------------------

#[test]
fn missing_file() {
    let dir = temp_dir("missing");
    let path = path_str(&dir.join("does-not-exist.mtx"));
    krylov(&["solve", &path, "--device", "cpu"]).assert_input_error(&["does-not-exist.mtx"]);
    krylov(&["solve", &path, "--device", "cpu", "--json"])
        .assert_input_error(&["does-not-exist.mtx"]);
    // A missing right-hand side file.
    let rhs = path_str(&dir.join("no-rhs.mtx"));
    krylov(&[
        "solve",
        &data("bcsstk01.mtx"),
        "--rhs",
        &rhs,
        "--device",
        "cpu",
    ])
    .assert_input_error(&["no-rhs.mtx"]);
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
        let path = write(&dir, name, text);
        krylov(&["solve", &path, "--device", "cpu", "--method", "gmres"])
            .assert_input_error(needles);
    }
    // A malformed right-hand side is reported the same way.
    let rhs = write(
        &dir,
        "bad_rhs.mtx",
        "%%MatrixMarket matrix array real general\n48 1\n1.0\n2.0\n",
    );
    krylov(&[
        "solve",
        &data("bcsstk01.mtx"),
        "--rhs",
        &rhs,
        "--device",
        "cpu",
    ])
    .assert_input_error(&["bad_rhs.mtx"]);
}

#[test]
fn complex_matrix_is_rejected() {
    let dir = temp_dir("complex");
    let path = write(
        &dir,
        "complex.mtx",
        "%%MatrixMarket matrix coordinate complex general\n2 2 2\n1 1 1.0 0.5\n2 2 1.0 -0.5\n",
    );
    krylov(&["solve", &path, "--device", "cpu", "--method", "gmres"])
        .assert_input_error(&["complex"]);
}

#[test]
fn non_square_matrix() {
    let dir = temp_dir("nonsquare");
    let path = write(
        &dir,
        "rect.mtx",
        "%%MatrixMarket matrix coordinate real general\n3 2 3\n1 1 1.0\n2 2 1.0\n3 1 1.0\n",
    );
    krylov(&["solve", &path, "--device", "cpu", "--method", "gmres"])
        .assert_input_error(&["not square"]);
}

#[test]
fn rhs_of_wrong_length() {
    krylov(&[
        "solve",
        &data("pores_1.mtx"),
        "--rhs",
        &data("sherman4_rhs.mtx"),
        "--method",
        "bicgstab",
        "--device",
        "cpu",
    ])
    .assert_input_error(&["right-hand side", "30", "1104"]);
}

#[test]
fn cg_on_nonsymmetric_matrix() {
    krylov(&[
        "solve",
        &data("pores_1.mtx"),
        "--method",
        "cg",
        "--device",
        "cpu",
    ])
    .assert_input_error(&["symmetric"]);
}

#[test]
fn jacobi_on_zero_diagonal() {
    krylov(&[
        "solve",
        &data("west0479.mtx"),
        "--method",
        "gmres",
        "--precond",
        "jacobi",
        "--device",
        "cpu",
    ])
    .assert_input_error(&["zero diagonal"]);
    krylov(&[
        "solve",
        &data("west0479.mtx"),
        "--method",
        "jacobi",
        "--device",
        "cpu",
        "--json",
    ])
    .assert_input_error(&["zero diagonal"]);
}

#[test]
fn invalid_option_values() {
    let base = ["solve", "--generate", "poisson2d:8", "--device", "cpu"];
    let with = |extra: &[&str]| {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        krylov(&v)
    };
    with(&["--rtol=-1e-6"]).assert_input_error(&["rtol"]);
    with(&["--atol=-1"]).assert_input_error(&["atol"]);
    with(&["--rtol", "NaN"]).assert_input_error(&["rtol"]);
    with(&["--rtol", "inf"]).assert_input_error(&["rtol"]);
    with(&["--method", "gmres", "--restart", "0"]).assert_input_error(&["restart"]);
}

#[test]
fn negative_tolerance_as_separate_argument() {
    // `--rtol -1e-6` (value as its own argument) is a bad value, not a usage error: it must
    // be reported like `--rtol=-1e-6` (exit 1, naming rtol), not as "unexpected argument".
    let base = ["solve", "--generate", "poisson2d:8", "--device", "cpu"];
    for (flag, value) in [("--rtol", "-1e-6"), ("--atol", "-1")] {
        let mut v = base.to_vec();
        v.extend_from_slice(&[flag, value]);
        krylov(&v).assert_input_error(&[&flag[2..]]);
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
        krylov(&["solve", "--generate", spec, "--device", "cpu"])
            .assert_input_error(&["bad matrix spec", needle]);
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
    krylov(&[
        "solve",
        &data("pores_1.mtx"),
        "--rhs",
        &rhs,
        "--method",
        "gmres",
        "--device",
        "cpu",
    ])
    .assert_input_error(&["non-finite"]);

    // --out / --history into a directory that does not exist: an I/O error naming the path.
    let out = path_str(&dir.join("no-such-dir").join("x.mtx"));
    krylov(&[
        "solve",
        "--generate",
        "poisson2d:8",
        "--device",
        "cpu",
        "--out",
        &out,
    ])
    .assert_input_error(&["no-such-dir"]);
    let hist = path_str(&dir.join("no-such-dir").join("h.csv"));
    krylov(&[
        "solve",
        "--generate",
        "poisson2d:8",
        "--device",
        "cpu",
        "--json",
        "--history",
        &hist,
    ])
    .assert_input_error(&["no-such-dir"]);
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
    let run = krylov(&[
        "solve",
        "--generate",
        "poisson2d:8",
        "--device",
        "gpu",
        "--json",
    ]);
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

// ---------------------------------------------------------------------------------------------
// Usage errors (exit 2) and non-convergence (exit 3)
// ---------------------------------------------------------------------------------------------

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["solve", "--method", "conjugate-residual", "--device", "cpu"][..],
        &["solve", "--variant", "fused", "--device", "cpu"],
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
    let run = krylov(&[
        "solve",
        "--generate",
        "poisson2d:16",
        "--device",
        "cpu",
        "--max-iter",
        "3",
        "--json",
    ]);
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
    let run = krylov(&[
        "solve",
        "--generate",
        "poisson2d:16",
        "--device",
        "cpu",
        "--max-iter",
        "3",
    ]);
    run.assert_code(3);
    assert!(run.stdout.contains("NOT converged"), "{}", run.context());

    // GMRES counts inner iterations over restarts.
    let run = krylov(&[
        "solve",
        "--generate",
        "convdiff3d:6:x",
        "--method",
        "gmres",
        "--restart",
        "2",
        "--max-iter",
        "3",
        "--device",
        "cpu",
        "--json",
    ]);
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

// ---------------------------------------------------------------------------------------------
// info and spmv
// ---------------------------------------------------------------------------------------------

fn adapters() -> Vec<Value> {
    let run = krylov(&["info", "--json"]);
    run.assert_code(0);
    match &run.json()["adapters"] {
        Value::Array(a) => a.clone(),
        other => panic!("`krylov info --json` must list `adapters`, got {other}"),
    }
}

#[test]
fn info_text_and_json() {
    let run = krylov(&["info"]);
    run.assert_code(0);
    assert!(!run.stdout.trim().is_empty(), "{}", run.context());
    let list = adapters();
    if list.is_empty() {
        assert!(run.stdout.contains("no GPU adapter"), "{}", run.context());
    } else {
        for a in &list {
            assert!(a["name"].is_string(), "adapter entry without a name: {a}");
            assert!(
                a["shader_f64"].is_boolean(),
                "adapter entry without shader_f64: {a}"
            );
        }
        let first = list[0]["name"].as_str().unwrap();
        assert!(run.stdout.contains(first), "{}", run.context());
    }
}

/// The adapter `krylov spmv` will open (KRYLOV_ADAPTER: an index or a name substring).
fn chosen_adapter(list: &[Value]) -> &Value {
    if let Ok(want) = std::env::var("KRYLOV_ADAPTER") {
        let want = want.trim().to_lowercase();
        if !want.is_empty() {
            if let Ok(i) = want.parse::<usize>()
                && let Some(a) = list.iter().find(|a| a["index"].as_u64() == Some(i as u64))
            {
                return a;
            }
            if let Some(a) = list.iter().find(|a| {
                a["name"]
                    .as_str()
                    .is_some_and(|n| n.to_lowercase().contains(&want))
            }) {
                return a;
            }
        }
    }
    &list[0]
}

#[test]
fn spmv_on_gpu() {
    let list = adapters();
    if list.is_empty() {
        assert!(
            std::env::var("KRYLOV_REQUIRE_GPU").as_deref() != Ok("1"),
            "KRYLOV_REQUIRE_GPU=1 but `krylov info --json` lists no adapter"
        );
        eprintln!("no GPU adapter: spmv_on_gpu does nothing here");
        return;
    }
    let adapter = chosen_adapter(&list);
    let matrix = data("bcsstk01.mtx");
    for precision in ["f32", "f64"] {
        let run = krylov(&[
            "spmv",
            &matrix,
            "--precision",
            precision,
            "--repeat",
            "3",
            "--json",
        ]);
        if precision == "f64" && adapter["shader_f64"] == Value::Bool(false) {
            run.assert_input_error(&["f64"]);
            continue;
        }
        run.assert_code(0);
        let r = run.json();
        let ctx = run.context();
        assert_eq!(r["n"], 48, "{ctx}");
        assert_eq!(r["nnz"], 400, "{ctx}");
        assert_eq!(r["precision"], precision, "{ctx}");
        assert_eq!(r["device"]["kind"], "gpu", "{ctx}");
        let err = r["relative_error"].as_f64().expect("relative_error");
        let tol = if precision == "f64" { 1e-12 } else { 1e-5 };
        assert!(err <= tol, "relative error {err:e}\n{ctx}");

        // Plain text too.
        let run = krylov(&["spmv", &matrix, "--precision", precision, "--repeat", "2"]);
        run.assert_code(0);
        assert!(run.stdout.contains("relative error"), "{}", run.context());
    }
}
