//! `krylov predict`, `krylov solve --format auto --variant auto` and `krylov calibrate` with
//! profiles in a private directory (never the user's cache).

use super::{current_device, profile_dir_with, synthetic_profile};
use std::path::Path;

use super::common::cli::{krylov_env, krylov_env_within, path_str, temp_dir};
use krylov_wgpu::Precision;
use krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET;
use krylov_wgpu::matrix::generators;
use krylov_wgpu::model::kernels::Shape;
use krylov_wgpu::model::{DeviceIdentity, PredictRequest, Profile, predict};
use krylov_wgpu::solvers::{CheckMode, Method, Variant};
#[test]
fn predict_ranks_every_format_from_the_devices_profile() {
    let Some(device) = current_device() else {
        return;
    };
    let profile = synthetic_profile(device);
    let dir = profile_dir_with(&profile);
    let env = [("KRYLOV_PROFILE_DIR", dir.to_str().unwrap())];
    let run = krylov_env(
        &[
            "predict",
            "--generate",
            "poisson2d:32",
            "--json",
            "--method",
            "cg",
        ],
        &env,
    );
    run.assert_code(0);
    let v = run.json();
    let preds = v["predictions"].as_array().unwrap();
    // 8 formats, 2 precisions, 3 variants (classical, pipelined, fused).
    assert_eq!(preds.len(), 8 * 2 * 3, "{}", run.context());
    let times: Vec<f64> = preds
        .iter()
        .filter(|p| p["refused"].is_null())
        .map(|p| p["seconds_per_iteration"].as_f64().unwrap())
        .collect();
    assert!(times.len() >= 20, "{}", run.context());
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "ranked");
    // The same numbers as the library's prediction.
    let a = generators::poisson_2d_fd::<f64>(32);
    let lib = predict(
        &profile,
        &a,
        &PredictRequest::all(Some(Method::Cg), CheckMode::Device, DEFAULT_PADDING_BUDGET),
    );
    let first = &lib[0];
    assert_eq!(preds[0]["format"], first.format.as_str());
    let t = preds[0]["seconds_per_iteration"].as_f64().unwrap();
    assert!((t / first.seconds_per_iteration - 1.0).abs() < 1e-12);
    // The text table lists the same first row.
    let text = krylov_env(
        &["predict", "--generate", "poisson2d:32", "--top", "3"],
        &env,
    );
    text.assert_code(0);
    assert_eq!(text.stdout.lines().count(), 2 + 3, "{}", text.context());
    assert!(text.stdout.contains("rank format"), "{}", text.context());
}

#[test]
fn solve_auto_uses_the_model_and_reports_its_prediction() {
    let Some(device) = current_device() else {
        return;
    };
    // Throughputs of a GPU (the synthetic profile's ×100): at 4356 rows fused CG's one launch
    // outweighs its product's extra gathers.
    let mut profile = synthetic_profile(device);
    for fit in profile.kernels.values_mut() {
        fit.curve.nu *= 100.0;
    }
    let dir = profile_dir_with(&profile);
    let env = [("KRYLOV_PROFILE_DIR", dir.to_str().unwrap())];
    let args = [
        "solve",
        "--generate",
        // 4356 rows (21 stored entries per thread of 1024): past what the one-workgroup variant
        // takes, where the model decides.
        "poisson2d:66",
        "--device",
        "gpu",
        "--precision",
        "f32",
        "--json",
        "--format",
        "auto",
        "--variant",
        "auto",
    ];
    let run = krylov_env(&args, &env);
    run.assert_code(0);
    let r = run.json();
    let reason = r["format_reason"].as_str().unwrap();
    assert!(reason.starts_with("auto: model (profile of"), "{reason}");
    let a = generators::poisson_2d_fd::<f64>(66);
    let req = PredictRequest {
        precisions: vec![Precision::F32],
        ..PredictRequest::all(Some(Method::Cg), CheckMode::Device, DEFAULT_PADDING_BUDGET)
    };
    let predictions = predict(&profile, &a, &req);
    let best = &predictions[0];
    // The model's choice: its fastest prediction, or a format predicted within the tie
    // tolerance of it, which the statistics rule picked (the reason says so).
    assert_eq!(
        r["format"],
        r["model_choice"]["format"],
        "{}",
        run.context()
    );
    assert_eq!(r["model_choice"]["variant"], best.variant.as_str());
    let chosen = predictions
        .iter()
        .find(|p| p.format.as_str() == r["format"] && p.variant == best.variant)
        .expect("the chosen format is predicted");
    assert!(
        chosen.format == best.format
            || (chosen.seconds_per_iteration
                <= best.seconds_per_iteration * (1.0 + krylov_wgpu::model::predict::TIE_TOLERANCE)
                && reason.contains("a tie")),
        "{reason}"
    );
    // The profile describes fused CG (one launch where pipelined has two, on the same
    // curves): the model's choice runs, with no rule overriding it.
    assert_eq!(best.variant, Variant::Fused);
    assert_eq!(r["variant"], "fused", "{}", run.context());
    let predicted = r["predicted_seconds_per_iteration"].as_f64().unwrap();
    assert!(predicted > 0.0);
    assert!(r["measured_seconds_per_iteration"].as_f64().unwrap() > 0.0);
    let notes = r["notes"].to_string();
    assert!(notes.contains("variant auto: fused (model"), "{notes}");
    assert!(!notes.contains("in place of"), "{notes}");

    // A profile calibrated before the model described fused CG: the model weighs pipelined
    // and classical, and the variant rule runs fused in place of its pipelined, saying why.
    let mut older = profile.clone();
    older
        .kernels
        .retain(|k, _| !k.starts_with("update_spmv_dot_cg"));
    // The JSON report of the solve with `p`, whose model chose pipelined CG.
    let chose_pipelined = |p: &Profile, args: &[&str]| {
        let dir = profile_dir_with(p);
        let run = krylov_env(args, &[("KRYLOV_PROFILE_DIR", dir.to_str().unwrap())]);
        run.assert_code(0);
        let r = run.json();
        let context = run.context();
        assert_eq!(r["model_choice"]["variant"], "pipelined", "{context}");
        (r, context)
    };
    let (r, context) = chose_pipelined(&older, &args);
    assert_eq!(r["variant"], "fused", "{context}");
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("fused in place of the model's pipelined")
            && notes.contains("krylov calibrate"),
        "{notes}"
    );
    // A full profile in which fused CG's product is slow: the model runs pipelined CG. A quick
    // one (no loop residuals, so it cannot price a launch) leaves that choice to the rule.
    let mut slow = profile.clone();
    for (key, fit) in slow.kernels.iter_mut() {
        if key.starts_with("update_spmv_dot_cg") {
            fit.curve.nu /= 2000.0;
        }
    }
    for (quick, ran) in [(false, "pipelined"), (true, "fused")] {
        slow.quick = quick;
        let (r, context) = chose_pipelined(&slow, &args);
        assert_eq!(r["variant"], ran, "quick {quick}: {context}");
        let notes = r["notes"].to_string();
        assert_eq!(notes.contains("quick calibration"), quick, "{notes}");
    }
    // Mixed precision: the reliable updates are pipelined CG's, so fused is no candidate.
    let mut mixed = args.to_vec();
    mixed[6] = "mixed";
    let (r, context) = chose_pipelined(&profile, &mixed);
    assert_eq!(r["variant"], "pipelined", "{context}");

    // Without a profile: the rules, as before, and no prediction.
    let run = krylov_env(&args, &[]);
    run.assert_code(0);
    let r = run.json();
    assert!(!r["format_reason"].as_str().unwrap().contains("model"));
    assert!(r.get("predicted_seconds_per_iteration").is_none());
    assert_eq!(r["variant"], "fused");
    assert!(
        r["notes"]
            .to_string()
            .contains("variant auto: fused (n = 4356")
    );

    // A small system (576 rows) runs in one workgroup before the model is asked for the
    // variant (the model does not describe it); the model still picks the format.
    let mut small = args.to_vec();
    small[2] = "poisson2d:24";
    let dir = profile_dir_with(&profile);
    let run = krylov_env(&small, &[("KRYLOV_PROFILE_DIR", dir.to_str().unwrap())]);
    run.assert_code(0);
    let r = run.json();
    assert_eq!(r["variant"], "workgroup", "{}", run.context());
    assert!(
        r["format_reason"]
            .as_str()
            .unwrap()
            .starts_with("auto: model")
    );
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("variant auto: workgroup (n = 576, "),
        "{notes}"
    );
}

/// GMRES with `--format auto --variant auto` and a profile that describes it: the model
/// weighs pipelined, fused and p(1)-GMRES in every format and its choice runs; p(1) beyond
/// its longest cycle is no candidate; a profile without GMRES's curves leaves both choices
/// to the rules.
#[test]
fn solve_auto_weighs_the_gmres_variants_by_the_model() {
    let Some(device) = current_device() else {
        return;
    };
    let mut profile = synthetic_profile(device);
    for fit in profile.kernels.values_mut() {
        fit.curve.nu *= 100.0;
    }
    // 4356 rows: beyond one-workgroup GMRES.
    let args = |restart: &'static str| {
        [
            "solve",
            "--generate",
            "poisson2d:66",
            "--rtol",
            "1e-4",
            "--device",
            "gpu",
            "--precision",
            "f32",
            "--json",
            "--method",
            "gmres",
            "--restart",
            restart,
            "--format",
            "auto",
            "--variant",
            "auto",
        ]
    };
    let solve = |p: &Profile, restart| {
        let dir = profile_dir_with(p);
        let run = krylov_env(
            &args(restart),
            &[("KRYLOV_PROFILE_DIR", dir.to_str().unwrap())],
        );
        run.assert_code(0);
        (run.json(), run.context())
    };
    let a = generators::poisson_2d_fd::<f64>(66);
    for (restart, m) in [("30", 30), ("200", 200)] {
        let (r, context) = solve(&profile, restart);
        let req = PredictRequest {
            precisions: vec![Precision::F32],
            shape: Shape {
                batch: 32,
                restart: m,
            },
            ..PredictRequest::all(
                Some(Method::Gmres),
                CheckMode::Device,
                DEFAULT_PADDING_BUDGET,
            )
        };
        let predictions = predict(&profile, &a, &req);
        let best = &predictions[0];
        assert!(best.refused.is_none());
        // The same curves for every variant: p(1)'s one launch per step is the fastest
        // where it runs; with a cycle of 200 steps it is refused and fused (two launches)
        // is.
        let (expected, refused_p1) = match m {
            30 => (Variant::P1, false),
            _ => (Variant::Fused, true),
        };
        assert_eq!(best.variant, expected, "restart {m}");
        let too_long = |p: &krylov_wgpu::model::Prediction| {
            p.refused
                .as_deref()
                .is_some_and(|why| why.contains("p1 GMRES runs cycles of at most 128 steps"))
        };
        assert_eq!(predictions.iter().any(too_long), refused_p1);
        assert_eq!(r["model_choice"]["variant"], expected.as_str(), "{context}");
        assert_eq!(r["variant"], expected.as_str(), "{context}");
        assert_eq!(r["format"], r["model_choice"]["format"], "{context}");
        assert!(
            r["format_reason"]
                .as_str()
                .unwrap()
                .starts_with("auto: model (profile of"),
            "{context}"
        );
        let notes = r["notes"].to_string();
        assert!(
            notes.contains(&format!("variant auto: {expected} (model")),
            "{notes}"
        );
        assert!(r["predicted_seconds_per_iteration"].as_f64().unwrap() > 0.0);
    }
    // A profile calibrated before the model described GMRES: the rules decide (p1 by the
    // variant rule at this size), and the report names no prediction.
    let mut older = profile.clone();
    older.kernels.retain(|k, _| !k.starts_with("gmres_"));
    let (r, context) = solve(&older, "30");
    assert!(
        !r["format_reason"].as_str().unwrap().contains("model"),
        "{context}"
    );
    assert!(
        r.get("predicted_seconds_per_iteration").is_none(),
        "{context}"
    );
    assert_eq!(r["variant"], "p1", "{context}");
    let notes = r["notes"].to_string();
    assert!(notes.contains("variant auto: p1 ("), "{notes}");
}

#[test]
fn bad_profiles_are_rejected_with_advice_and_never_panic() {
    let Some(device) = current_device() else {
        return;
    };
    // A corrupted default profile.
    let dir = temp_dir("corrupt-profile");
    std::fs::write(
        dir.join(Profile::file_name(&device)),
        "{\"schema_version\": 1, ",
    )
    .unwrap();
    let env = [("KRYLOV_PROFILE_DIR", dir.to_str().unwrap())];
    let run = krylov_env(&["predict", "--generate", "poisson2d:8"], &env);
    run.assert_input_error(&["not a valid profile", "krylov calibrate"]);
    // `solve --format auto` warns and falls back to the rules.
    let solve = [
        "solve",
        "--generate",
        "poisson2d:8",
        "--device",
        "gpu",
        "--precision",
        "f32",
        "--json",
    ];
    let run = krylov_env(&solve, &env);
    run.assert_code(0);
    assert!(run.stderr.contains("warning:"), "{}", run.context());
    assert!(run.stderr.contains("krylov calibrate"), "{}", run.context());
    assert!(!run.stderr.contains("panicked"), "{}", run.context());
    // An explicit corrupted profile is an error.
    let bad = path_str(&dir.join(Profile::file_name(&device)));
    let mut explicit: Vec<&str> = solve.to_vec();
    explicit.extend(["--profile", &bad]);
    krylov_env(&explicit, &[]).assert_input_error(&["krylov calibrate"]);

    // Another device's (or driver's) profile: refused for a solve on this device, usable for
    // predicting that device.
    let foreign = synthetic_profile(DeviceIdentity {
        driver_info: format!("{} (another version)", device.driver_info),
        ..device.clone()
    });
    let path = temp_dir("foreign").join("other.json");
    foreign.save(&path).unwrap();
    let other = path_str(&path);
    let mut explicit: Vec<&str> = solve.to_vec();
    explicit.extend(["--profile", &other]);
    krylov_env(&explicit, &[]).assert_input_error(&["not on this device", "krylov calibrate"]);
    krylov_env(
        &["predict", "--generate", "poisson2d:8", "--profile", &other],
        &[],
    )
    .assert_code(0);
    // A profile of a newer schema.
    let mut v = serde_json::to_value(&foreign).unwrap();
    v["schema_version"] = 99.into();
    std::fs::write(&path, v.to_string()).unwrap();
    krylov_env(
        &["predict", "--generate", "poisson2d:8", "--profile", &other],
        &[],
    )
    .assert_input_error(&["schema version 99", "krylov calibrate"]);
    // No profile at all.
    krylov_env(&["predict", "--generate", "poisson2d:8"], &[])
        .assert_input_error(&["no device profile", "krylov calibrate"]);
}

#[test]
fn calibrate_quick_writes_a_profile_that_loads_and_predicts() {
    let Some(device) = current_device() else {
        return;
    };
    let dir = temp_dir("calibrate");
    // The quick calibration times every format on several matrices: 100–120 s on a loaded
    // 2-core lavapipe machine (CI once killed it at 120 s after 113 s of measuring).
    let run = krylov_env_within(
        &["calibrate", "--quick", "--json"],
        &[("KRYLOV_PROFILE_DIR", dir.to_str().unwrap())],
        600,
    );
    run.assert_code(0);
    let v = run.json();
    let path = Path::new(v["path"].as_str().unwrap()).to_path_buf();
    assert_eq!(path, dir.join(Profile::file_name(&device)));
    let profile = Profile::load_for(&path, &device).unwrap();
    assert!(profile.quick);
    for key in [
        "update_cg",
        "spmv_dot_cg:csr",
        "update_spmv_dot_cg:csr",
        "spmv:csr",
        "axpy",
        "dot",
        "xpay",
    ] {
        let fit = &profile.kernels[key];
        assert!(fit.curve.is_valid(), "{key}: {fit:?}");
        assert!(fit.samples.len() >= 3, "{key}: {fit:?}");
    }
    // Both are differences of medians of wall times (a launch in a chain of 100 against a
    // lone launch and its read-back), clamped at zero: on a loaded 2-core lavapipe machine a
    // lone launch has measured no slower than a chained one, so zero is a valid outcome
    // (one CI run failed on `round_trip_seconds > 0`); NaN and negatives are not.
    for (what, c) in [
        ("dispatch", profile.dispatch_seconds),
        ("round trip", profile.round_trip_seconds),
    ] {
        assert!(c.is_finite() && c >= 0.0, "{what}: {c}");
    }
    // The stencils' rows of 5 and 7 and the hub rows give CSR's chain step (≥ 0;
    // `Profile::load` rejects a negative one).
    assert!(
        profile.chain_step_seconds.contains_key("csr"),
        "{:?}",
        profile.chain_step_seconds
    );
    // Loop residuals come from full calibrations only (30-iteration loops; `quick` times 6).
    assert!(
        profile.launch_residuals.is_empty(),
        "{:?}",
        profile.launch_residuals
    );
    let run = krylov_env(
        &[
            "predict",
            "--generate",
            "poisson2d:40",
            "--json",
            "--method",
            "cg",
        ],
        &[("KRYLOV_PROFILE_DIR", dir.to_str().unwrap())],
    );
    run.assert_code(0);
    let p = &run.json()["predictions"][0];
    assert!(p["seconds_per_iteration"].as_f64().unwrap() > 0.0, "{p}");
    // A 5-point stencil: no thread loops over more than 5 terms in any format but BCSR.
    assert!((1..=5).contains(&p["spmv_chain"].as_u64().unwrap()), "{p}");
}
