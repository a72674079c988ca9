//! `krylov info` (text and JSON) and `krylov spmv` on the GPU.

use serde_json::Value;

use super::common::cli::{data_arg as data, krylov};

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

/// True (after a note) when `krylov info` lists no adapter, so a GPU test has nothing to
/// run; with `KRYLOV_REQUIRE_GPU=1` (CI) a missing adapter fails the test instead.
fn no_adapter_here(list: &[Value], test: &str) -> bool {
    if !list.is_empty() {
        return false;
    }
    assert!(
        std::env::var("KRYLOV_REQUIRE_GPU").as_deref() != Ok("1"),
        "KRYLOV_REQUIRE_GPU=1 but `krylov info --json` lists no adapter"
    );
    eprintln!("no GPU adapter: {test} does nothing here");
    true
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
    if no_adapter_here(&list, "spmv_on_gpu") {
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

/// `krylov bench` on matrices the user names (`--generate`, `--mtx`) in several formats: a
/// row per matrix × format with exact counts, the file's name as the problem, and a format
/// over the padding budget a note that does not stop the others.
#[test]
fn bench_rows_per_named_matrix_and_format() {
    if no_adapter_here(&adapters(), "bench_rows_per_named_matrix_and_format") {
        return;
    }
    let matrix = data("nos6.mtx");
    let run = krylov(&[
        "bench",
        "--generate",
        "random-spd:300:5",
        "--mtx",
        &matrix,
        "--formats",
        "csr,dia,sell",
        "--method",
        "cg",
        "--variant",
        "pipelined",
        "--check-mode",
        "device",
        "--iterations",
        "4",
        "--runs",
        "2",
        "--bandwidth-n",
        "0",
        "--json",
    ]);
    run.assert_code(0);
    let ctx = run.context();
    let rows: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .filter(|r: &Value| r.get("us_per_iteration").is_some())
        .collect();
    let got: Vec<(&str, &str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["problem"].as_str().unwrap(),
                r["format"].as_str().unwrap(),
                r["n"].as_u64().unwrap(),
            )
        })
        .collect();
    // A random sparsity pattern is no band: DIA is over the padding budget there.
    assert_eq!(
        got,
        [
            ("random-spd:300:5", "csr", 300),
            ("random-spd:300:5", "sell", 300),
            ("nos6.mtx", "csr", 675),
            ("nos6.mtx", "dia", 675),
            ("nos6.mtx", "sell", 675),
        ],
        "{ctx}"
    );
    for r in &rows {
        assert_eq!(r["iterations"], 4, "{ctx}");
        assert_eq!(r["iterations_done"], 4, "{ctx}");
        assert_eq!(r["us_runs"].as_array().unwrap().len(), 2, "{ctx}");
        assert_eq!(r["dispatches_per_iteration"], 2.0, "{ctx}");
        assert!(r["us_per_iteration"].as_f64().unwrap() > 0.0, "{ctx}");
    }
    assert!(
        run.stderr
            .contains("random-spd:300:5 n=300 f32 dia cg pipelined: format dia refused"),
        "{ctx}"
    );
}
