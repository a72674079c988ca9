//! Every method × variant (× preconditioner, precision, Gram–Schmidt) on the CPU, on generated
//! and shipped matrices.

use super::common::cli::data_arg as data;
use super::{VARIANTS, check_method, has_gpu_adapter, solve_ok, solve_ok_on, solve_on_gpu};

#[test]
fn cg_all_variants_and_preconditioners() {
    for variant in VARIANTS.iter().copied().chain(["fused"]) {
        for precond in ["none", "jacobi"] {
            for (precision, rtol) in [("f64", 1e-10), ("f32", 1e-4)] {
                let line = format!(
                    "--generate poisson2d:16 --method cg --variant {variant} --precond {precond} \
                     --precision {precision}"
                );
                let r = solve_ok_on(&[], &line, rtol);
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
                let line = format!(
                    "--generate convdiff3d:6:x --method {method} --variant {variant} \
                     --precision {precision} --restart 20"
                );
                let r = solve_ok_on(&[], &line, rtol);
                check_method(&r, method, variant, precision);
                assert_eq!(r["n"], 216);
            }
        }
    }
    // Fused GMRES (pipelined GMRES's step in two GPU launches; the CPU runs its twin).
    for (precision, rtol) in [("f64", 1e-8), ("f32", 1e-4)] {
        let line = format!(
            "--generate convdiff3d:6:x --method gmres --variant fused --precision {precision} \
             --restart 20"
        );
        let r = solve_ok_on(&[], &line, rtol);
        check_method(&r, "gmres", "fused", precision);
    }
    // p(1)-GMRES (one GPU launch per step; the CPU runs its twin).
    for (precision, rtol) in [("f64", 1e-8), ("f32", 1e-4)] {
        let line = format!(
            "--generate convdiff3d:6:x --method gmres --variant p1 --precision {precision} \
             --restart 20"
        );
        let r = solve_ok_on(&[], &line, rtol);
        check_method(&r, "gmres", "p1", precision);
    }
    // One-workgroup GMRES (a whole cycle per GPU launch; the CPU runs pipelined GMRES).
    for (precision, rtol) in [("f64", 1e-8), ("f32", 1e-4)] {
        let line = format!(
            "--generate convdiff3d:6:x --method gmres --variant workgroup --precision \
             {precision} --restart 20"
        );
        let r = solve_ok_on(&[], &line, rtol);
        check_method(&r, "gmres", "workgroup", precision);
    }
}

#[test]
fn preconditioned_nonsymmetric_methods() {
    for method in ["bicgstab", "gmres", "bicg"] {
        for variant in VARIANTS {
            let line = format!(
                "--generate convdiff3d:6:circular:0.1 --method {method} --variant {variant} \
                 --precond jacobi"
            );
            let r = solve_ok_on(&[], &line, 1e-8);
            check_method(&r, method, variant, "f64");
        }
    }
}

#[test]
fn gmres_gram_schmidt_options() {
    for gs in ["mgs", "cgs", "cgs2"] {
        for variant in VARIANTS {
            let line = format!(
                "--generate convdiff3d:6:diagonal --method gmres --variant {variant} --gs {gs} \
                 --restart 10"
            );
            let r = solve_ok_on(&[], &line, 1e-8);
            check_method(&r, "gmres", variant, "f64");
        }
    }
}

#[test]
fn real_world_nonsymmetric_matrices() {
    // pores_1 (n = 30): full GMRES (restart >= n).
    let pores_1 = data("pores_1.mtx");
    for variant in VARIANTS {
        let line = format!("--method gmres --variant {variant} --restart 30");
        let r = solve_ok_on(&[&pores_1], &line, 1e-6);
        check_method(&r, "gmres", variant, "f64");
        assert_eq!(r["n"], 30);
    }
    // sherman4 with its own right-hand side.
    let (sherman4, rhs) = (data("sherman4.mtx"), data("sherman4_rhs.mtx"));
    for method in ["bicgstab", "gmres"] {
        for variant in VARIANTS {
            let line =
                format!("--method {method} --variant {variant} --precond jacobi --restart 50");
            let r = solve_ok_on(&[&sherman4, "--rhs", &rhs], &line, 1e-6);
            check_method(&r, method, variant, "f64");
            assert_eq!(r["n"], 1104);
        }
    }
}

#[test]
fn gzip_matrix_and_symmetric_storage() {
    let gz = data("bcsstk01.mtx.gz");
    let r = solve_ok_on(&[&gz], "--method cg --precond jacobi", 1e-8);
    assert_eq!(r["n"], 48);
    assert_eq!(r["nnz"], 400);
}

#[test]
fn ca_gmres_from_the_command_line_reports_its_counts() {
    // CPU reference: every TSQR, and with a preconditioner on the right.
    for tsqr in ["cholqr2", "cgs2", "svqr", "caqr"] {
        let line = format!(
            "--generate convdiff3d:6:x --method cagmres --s-step 4 --restart 20 --tsqr {tsqr}"
        );
        let r = solve_ok_on(&[], &line, 1e-8);
        assert_eq!(r["method"], "cagmres", "{r}");
        let ca = &r["cagmres"];
        assert_eq!(ca["options"]["s"], 4, "{r}");
        assert_eq!(ca["options"]["tsqr"], tsqr, "{r}");
        assert!(
            ca["cycles"].as_array().is_some_and(|c| !c.is_empty()),
            "{r}"
        );
        assert!(r["reductions_per_iteration"].as_f64().unwrap() > 0.0, "{r}");
    }
    let r = solve_ok_on(
        &[],
        "--generate convdiff3d:6:circular:0.1 --method cagmres --precond ilu0",
        1e-8,
    );
    assert_eq!(r["preconditioner"]["kind"], "ilu0", "{r}");
    // m not a multiple of s: one clear line.
    let run = super::common::cli::krylov_line(
        "solve --generate poisson2d:8 --method cagmres --s-step 4 --restart 30 --device cpu",
    );
    run.assert_one_error_line(&["multiple of s = 4"]);
}

#[test]
fn ca_gmres_on_the_gpu_needs_fewer_reductions_than_pipelined_gmres() {
    if !has_gpu_adapter() {
        return;
    }
    let run_on =
        |extra: &str| solve_on_gpu(&format!("--generate poisson2d:32 --rtol 1e-8 {extra}"));
    let ca = run_on("--method cagmres --s-step 5 --restart 30");
    let gm = run_on("--method gmres --variant pipelined --restart 30");
    assert_eq!(ca["device"]["kind"], "gpu", "{ca}");
    assert_eq!(ca["converged"], true, "{ca}");
    let (rc, rg) = (
        ca["reductions_per_iteration"].as_f64().unwrap(),
        gm["reductions_per_iteration"].as_f64().unwrap(),
    );
    assert!(rc < 0.6 * rg, "CA {rc} vs pipelined GMRES {rg}");
    assert!(ca["syncs_per_cycle"].as_f64().is_some(), "{ca}");
}

/// `--method auto` (the default): CG for a symmetric matrix with a positive diagonal, GMRES
/// for a nonsymmetric one and for a symmetric one with a non-positive diagonal entry, each
/// with its note; a symmetric matrix with a positive diagonal that CG finds indefinite
/// (2D Poisson shifted by 2: eigenvalues in (−2, 6), diagonal 2) is solved again with GMRES,
/// and says so; `--method cg` on a nonsymmetric matrix stays an error naming the way out.
#[test]
fn method_auto_takes_cg_or_gmres_and_recovers_from_an_indefinite_matrix() {
    let notes = |r: &serde_json::Value| -> Vec<String> {
        r["notes"]
            .as_array()
            .expect("notes")
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    let spd = solve_ok_on(&[&data("bcsstk01.mtx")], "", 1e-8);
    assert_eq!(spd["method"], "cg", "{spd}");
    assert!(
        notes(&spd)
            .iter()
            .any(|n| n.starts_with("method auto: A is symmetric"))
    );
    let nonsym = solve_ok_on(&[&data("sherman4.mtx")], "", 1e-6);
    assert_eq!(nonsym["method"], "gmres", "{nonsym}");
    assert!(
        notes(&nonsym).contains(&"method auto: A is not symmetric: GMRES".to_string()),
        "{nonsym}"
    );
    // Shifted 5-point Laplacian on a 12 × 12 grid.
    let (k, shift) = (12usize, 2.0);
    let mut entries = Vec::new();
    for i in 0..k {
        for j in 0..k {
            let r = i * k + j + 1;
            entries.push(format!("{r} {r} {}", 4.0 - shift));
            for (di, dj) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
                let (ni, nj) = (i as i64 + di, j as i64 + dj);
                if (0..k as i64).contains(&ni) && (0..k as i64).contains(&nj) {
                    entries.push(format!("{r} {} -1", ni as usize * k + nj as usize + 1));
                }
            }
        }
    }
    let text = format!(
        "%%MatrixMarket matrix coordinate real general\n{n} {n} {}\n{}\n",
        entries.len(),
        entries.join("\n"),
        n = k * k
    );
    let dir = super::common::cli::temp_dir("method-auto");
    let indefinite = super::common::cli::write(&dir, "shifted.mtx", &text);
    let r = solve_ok_on(&[&indefinite], "", 1e-6);
    assert_eq!(r["method"], "gmres", "{r}");
    let n = notes(&r);
    assert!(
        n.iter()
            .any(|n| n.starts_with("method auto: CG found <p, Ap> <= 0")
                && n.ends_with("solved again with GMRES")),
        "{r}"
    );
    // A negative diagonal entry: GMRES at once.
    let negative = text.replacen("1 1 2", "1 1 -2", 1);
    let negative = super::common::cli::write(&dir, "negative.mtx", &negative);
    let r = solve_ok_on(&[&negative], "", 1e-6);
    assert_eq!(r["method"], "gmres", "{r}");
    assert!(
        notes(&r)
            .iter()
            .any(|n| n.contains("a_00 = -2e0 is not positive")),
        "{r}"
    );
    super::common::cli::krylov(&["solve", &data("sherman4.mtx"), "--method", "cg"])
        .assert_one_error_line(&["not symmetric", "--method gmres, bicgstab or auto"]);
}

/// `--precond auto` (the default): west0479 (a chemical-engineering matrix GMRES(30) does
/// not solve unpreconditioned: stagnation after 750 steps) is solved again with ILUT and
/// converges, saying so; `--precond none` keeps the named failure (exit 3), and so does a
/// solve that reaches an iteration limit the user set.
#[test]
fn precond_auto_solves_a_stagnating_system_again_with_ilut() {
    let r = solve_ok_on(&[&data("west0479.mtx")], "", 1e-6);
    assert_eq!(r["method"], "gmres", "{r}");
    assert_eq!(r["preconditioner"]["kind"], "ilut", "{r}");
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n
            .starts_with("precond auto: gmres without a preconditioner stopped (stagnation)")
            && n.contains(", at iteration ")
            && n.ends_with("solved again with ilut")),
        "{r}"
    );
    // Mixed-precision refinement stalls without a preconditioner (its f32 inner solves
    // stagnate) and is solved again alike.
    let r = solve_ok_on(&[&data("west0479.mtx")], "--precision mixed", 1e-6);
    assert_eq!(r["preconditioner"]["kind"], "ilut", "{r}");
    assert!(r["refinement"].is_object(), "{r}");
    assert!(
        r["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("precond auto: gmres without a preconditioner stopped (stagnation)")),
        "{r}"
    );
    let west = data("west0479.mtx");
    let fails = |extra: &[&str]| {
        let mut args = vec!["solve", west.as_str(), "--device", "cpu", "--json"];
        args.extend_from_slice(extra);
        let run = super::common::cli::krylov(&args);
        run.assert_code(3);
        run.json()
    };
    assert_eq!(fails(&["--precond", "none"])["reason"], "stagnation");
    let r = fails(&["--max-iter", "20"]);
    assert_eq!(r["reason"], "max_iterations", "{r}");
    assert!(r["preconditioner"].is_null(), "{r}");
}

/// `--precond auto`'s guard: a solve without a preconditioner whose residual falls too
/// slowly to reach the tolerance within twice the default limit (reservoir3d: a two-phase
/// black-oil Jacobian, permeabilities over 5–7 decades) is stopped early — not after all
/// 10 000 iterations — and solved again with ILUT; a slow solve that gets there
/// (unpreconditioned CG on bcsstk21, 2983 iterations) is left alone.
#[test]
fn precond_auto_stops_a_hopeless_solve_early() {
    let r = solve_ok(&["--generate", "reservoir3d:20:10:8"], 1e-6);
    assert_eq!(r["preconditioner"]["kind"], "ilut", "{r}");
    let note = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with("precond auto: gmres without a preconditioner was stopped early"))
        .unwrap_or_else(|| panic!("no guard note: {r}"));
    let at: usize = note
        .split("at iteration ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    assert!((900..5000).contains(&at), "{note}");
    let r = solve_ok(&[&data("bcsstk21.mtx")], 1e-6);
    assert_eq!(r["method"], "cg", "{r}");
    assert!(r["preconditioner"].is_null(), "{r}");
    assert!(r["iterations"].as_u64().unwrap() > 2000, "{r}");
}

/// `--variant auto` for GMRES on a GPU: one workgroup up to 1024 rows (512 rows of a 3D
/// convection–diffusion stencil), p(1)-GMRES above (1728 rows), and fused GMRES for a
/// restart beyond the 128 steps both keep in workgroup memory.
#[test]
fn gmres_auto_variant_takes_one_workgroup_for_a_small_system() {
    if !has_gpu_adapter() {
        return;
    }
    let run_on = |extra: &str| solve_on_gpu(&format!("--rtol 1e-8 --format csr {extra}"));
    let small = run_on("--generate convdiff3d:8:x");
    assert_eq!(small["method"], "gmres", "{small}");
    assert_eq!(small["variant"], "workgroup", "{small}");
    assert!(
        small["notes"]
            .to_string()
            .contains("variant auto: workgroup (n = 512 ≤ 1024"),
        "{small}"
    );
    let larger = run_on("--generate convdiff3d:12:x");
    assert_eq!(larger["variant"], "p1", "{larger}");
    // Beyond one workgroup's and p(1)-GMRES's 128 steps a cycle: fused GMRES.
    let long = run_on("--generate convdiff3d:8:x --restart 200");
    assert_eq!(long["variant"], "fused", "{long}");
}
