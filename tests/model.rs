//! The performance model (issue 18) against the real thing: its SpMV layouts against the
//! GPU uploads, its launch counts against the dispatch counters of real solves, and the
//! `calibrate` / `predict` / `solve --format auto` command lines with profiles in a private
//! directory (never the user's cache).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::cli::{krylov_env, krylov_env_within, path_str, temp_dir};
use krylov_wgpu::gpu::GpuMatrix;
use krylov_wgpu::gpu::format::{DEFAULT_PADDING_BUDGET, sell_c};
use krylov_wgpu::matrix::{Csr, generators};
use krylov_wgpu::model::calibrate::dense_blocks;
use krylov_wgpu::model::kernels::{Curve, MODELLED, Shape, SpmvBytes, curve_key, iteration_plan};
use krylov_wgpu::model::profile::SCHEMA_VERSION;
use krylov_wgpu::model::{
    DeviceIdentity, Fit, LayoutParams, MODEL_FORMATS, PredictRequest, Profile, Sample, Sigmoid,
    device_identity, predict, spmv_layout,
};
use krylov_wgpu::solvers::{CheckMode, Format, Method, SolveOptions, Variant, solve_gpu};
use krylov_wgpu::{KrylovError, Precision};

fn matrices() -> Vec<(String, Csr<f64>)> {
    vec![
        ("poisson2d:12".into(), generators::poisson_2d_fd(12)),
        (
            "laplace3d:7".into(),
            generators::from_spec("laplace3d:7").unwrap(),
        ),
        (
            "random:300:6".into(),
            generators::from_spec("random:300:6").unwrap(),
        ),
        (
            "poisson2d:3 ⊗ 8×8".into(),
            dense_blocks(&generators::poisson_2d_fd(3), 8).unwrap(),
        ),
    ]
}

#[test]
fn the_layouts_bytes_are_those_of_the_gpu_uploads_in_every_format() {
    let Some(engine) = common::engine() else {
        return;
    };
    let params = LayoutParams {
        workgroup_size: engine.tuning().workgroup_size as usize,
        sell_c: sell_c(&engine),
        max_padding: DEFAULT_PADDING_BUDGET,
    };
    let mut uploaded = 0;
    for (name, a) in matrices() {
        let a32: Csr<f32> = a.cast().unwrap();
        for format in MODEL_FORMATS {
            let layout = spmv_layout(&a, format, &params);
            match GpuMatrix::upload_with(&engine, &a32, format, DEFAULT_PADDING_BUDGET) {
                Ok(m) => {
                    let l = layout.unwrap_or_else(|e| panic!("{name} {format}: {e}"));
                    assert_eq!(m.bytes(), l.matrix_bytes(4), "{name} {format}");
                    assert_eq!(m.stored_elements(), l.stored, "{name} {format}");
                    assert_eq!(m.index_bytes(), l.index_bytes, "{name} {format}");
                    assert_eq!(u64::from(m.passes()), l.passes, "{name} {format}");
                    uploaded += 1;
                }
                Err(KrylovError::FormatRefused { .. }) => {
                    assert!(layout.is_err(), "{name} {format}: the upload refused it");
                }
                Err(e) => panic!("{name} {format}: {e}"),
            }
        }
    }
    assert!(uploaded >= 24, "only {uploaded} uploads");
}

#[test]
fn the_launch_counts_are_those_of_real_solves() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a: Csr<f32> = generators::poisson_2d_fd(16);
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let batch = 4;
    // GMRES(6): two whole cycles in 12 steps.
    let shape = Shape { batch, restart: 6 };
    for (method, variant) in MODELLED {
        for mode in [CheckMode::Device, CheckMode::Paper] {
            let Some(plan) = iteration_plan(
                method,
                variant,
                mode,
                a.nrows(),
                SpmvBytes::plain(1000.0),
                4,
                shape,
            ) else {
                // GMRES is modelled in device mode only.
                assert!(method == Method::Gmres && mode == CheckMode::Paper);
                continue;
            };
            let opts = SolveOptions {
                method,
                variant,
                check_mode: mode,
                rtol: 0.0,
                atol: 0.0,
                max_iter: 12,
                batch,
                restart: shape.restart,
                format: Format::Csr,
                ..Default::default()
            };
            let r = solve_gpu(&engine, &a, &b, None, &opts, &mut ())
                .unwrap()
                .report;
            let tag = format!("{variant} {method} {mode}");
            let j = r.iterations_recorded as f64;
            let reads = r.loop_counts.readbacks as f64 / j;
            match mode {
                CheckMode::Device => {
                    assert_eq!(r.iterations, 12, "{tag}");
                    assert_eq!(r.dispatches_per_iteration, plan.dispatches(), "{tag}");
                    assert_eq!(reads, plan.round_trips, "{tag}");
                }
                // `paper` loops skip a launch or add a readback at their ends.
                CheckMode::Paper => {
                    let d = (r.dispatches_per_iteration - plan.dispatches()).abs();
                    assert!(d <= 2.0 / j, "{tag}: {}", r.dispatches_per_iteration);
                    assert!(
                        (reads - plan.round_trips).abs() <= 2.0 / j,
                        "{tag}: {reads}"
                    );
                }
            }
        }
    }
}

/// Calibration divides each kernel's loop time by its launches in the plan: a GMRES loop's
/// timestamped launches per kernel name are the plan's, cycle by cycle (not the final
/// residual nor the Gram matrix behind `orthogonality_loss`).
#[test]
fn gmres_loops_time_the_launches_their_plans_list() {
    let Some(engine) = common::engine_with(krylov_wgpu::gpu::Tuning {
        profile: true,
        ..Default::default()
    }) else {
        return;
    };
    if !engine.profiling() {
        return;
    }
    let a: Csr<f32> = generators::poisson_2d_fd(16);
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let shape = Shape {
        batch: 1,
        restart: 5,
    };
    for variant in [Variant::Pipelined, Variant::Fused, Variant::P1] {
        let plan = iteration_plan(
            Method::Gmres,
            variant,
            CheckMode::Device,
            a.nrows(),
            SpmvBytes::plain(1000.0),
            4,
            shape,
        )
        .unwrap();
        let opts = SolveOptions {
            method: Method::Gmres,
            variant,
            rtol: 0.0,
            atol: 0.0,
            max_iter: 15, // three cycles
            restart: shape.restart,
            format: Format::Csr,
            ..Default::default()
        };
        let r = solve_gpu(&engine, &a, &b, None, &opts, &mut ())
            .unwrap()
            .report;
        assert_eq!(r.iterations, 15, "{variant}");
        let mut planned: BTreeMap<&str, usize> = BTreeMap::new();
        for k in &plan.kernels {
            *planned.entry(k.name).or_default() += 3; // per cycle, three cycles
        }
        let timed: BTreeMap<&str, usize> = r
            .kernel_times
            .iter()
            .map(|k| (k.name.as_str(), k.calls as usize))
            .collect();
        assert_eq!(timed, planned, "{variant}");
        assert_eq!(
            r.loop_counts.dispatches as usize,
            3 * plan.kernels.len(),
            "{variant}"
        );
    }
}

/// A profile for `device` with made-up curves for every kernel the model needs.
fn synthetic_profile(device: DeviceIdentity) -> Profile {
    let mut kernels = BTreeMap::new();
    let mut constants = BTreeMap::new();
    for (i, format) in MODEL_FORMATS.iter().enumerate() {
        for (method, variant) in MODELLED {
            let plan = iteration_plan(
                method,
                variant,
                CheckMode::Device,
                100,
                SpmvBytes::plain(1.0),
                4,
                Shape::batch(1),
            )
            .unwrap();
            for k in plan.kernels.iter().filter(|k| k.curve != Curve::Launch) {
                let key = curve_key(k, *format);
                if k.curve == Curve::Finish {
                    constants.insert(key, 4e-6);
                    continue;
                }
                // The matrix kernels of later formats are slower: a known order.
                let nu = if k.curve == Curve::Matrix {
                    4e9 / (1.0 + i as f64)
                } else {
                    8e9
                };
                let fit = Fit {
                    curve: Sigmoid {
                        mu: 16.0,
                        sigma: 1.5,
                        nu,
                    },
                    rms_relative_error: 0.0,
                    max_relative_error: 0.0,
                    samples: vec![Sample {
                        bytes: 1e4,
                        seconds: 1e-5,
                    }],
                    outliers: Vec::new(),
                };
                kernels.insert(key, fit);
            }
        }
    }
    Profile {
        schema_version: SCHEMA_VERSION,
        device,
        created: "2026-01-01T00:00:00Z".into(),
        quick: true,
        workgroup_size: 256,
        sell_c: 32,
        max_binding_bytes: 1 << 27,
        dispatch_seconds: 10e-6,
        timestamp_overhead_seconds: 0.0,
        round_trip_seconds: 100e-6,
        kernels,
        constants,
        gather_weights: BTreeMap::new(),
        chain_step_seconds: BTreeMap::new(),
        chain_reference_steps: BTreeMap::new(),
        launch_residuals: BTreeMap::new(),
    }
}

/// 64 rows, two entries each, of 4160 columns: `(i, i)` and `(i, far(i))`.
fn two_per_row(far: impl Fn(usize) -> usize) -> Csr<f64> {
    let mut cols = Vec::new();
    for i in 0..64 {
        let mut r = [i as u32, far(i) as u32];
        r.sort_unstable();
        cols.extend(r);
    }
    let ptr = (0..=64).map(|i| 2 * i as u32).collect();
    Csr::new(64, 4160, ptr, cols, vec![1.0; 128]).unwrap()
}

#[test]
fn the_gather_excess_matches_a_hand_count() {
    let params = LayoutParams {
        workgroup_size: 256,
        sell_c: 32,
        max_padding: DEFAULT_PADDING_BUDGET,
    };
    // One workgroup of 256 threads takes all 64 rows: one group.
    // Scattered: row i also reads column 64·(i + 1) + 32, each in its own sector and none
    // among the diagonal's columns 0 … 63. The diagonal's
    // 64 columns are 8 f32 sectors (16 of f64), the far ones 64 more: f32 72·32 = 2304
    // bytes touched − 128 entries · 4 = 1792; f64 80·32 − 128·8 = 1536.
    let scattered = two_per_row(|i| 64 * (i + 1) + 32);
    // Banded: (i, i + 1) reads columns 0 … 64: 9 f32 sectors (288 bytes, under the 512 of
    // the per-entry count) or 17 of f64 (544 < 1024): no excess.
    let banded = two_per_row(|i| i + 1);
    for format in [Format::Csr, Format::Ell, Format::Sell, Format::Bcsr1] {
        let l = spmv_layout(&scattered, format, &params).unwrap();
        assert_eq!(l.gather_excess, [1792, 1536], "{format}");
        assert_eq!(l.gather_excess_bytes(4), 1792);
        let b = spmv_layout(&banded, format, &params).unwrap();
        assert_eq!(b.gather_excess, [0, 0], "{format}");
    }
    // Paper 003's count is the same for both: the excess is all that tells them apart.
    let csr = |a: &Csr<f64>| spmv_layout(a, Format::Csr, &params).unwrap().spmv_bytes(4);
    assert_eq!(csr(&scattered), csr(&banded));
    // Two groups of 32 rows (a 32-thread workgroup) count each group's sectors: the
    // diagonal's 4 f32 sectors per group + 32 far ones: 2 · (36·32 − 64·4) = 1792 again,
    // but the banded matrix's 5 sectors per group still stay under 64·4 bytes.
    let small = LayoutParams {
        workgroup_size: 32,
        ..params
    };
    let l = spmv_layout(&scattered, Format::Csr, &small).unwrap();
    assert_eq!(l.gather_excess, [2 * (36 * 32 - 256), 2 * (40 * 32 - 512)]);
    assert_eq!(
        spmv_layout(&banded, Format::Csr, &small)
            .unwrap()
            .gather_excess,
        [0, 0]
    );
    // DIA reads contiguous diagonals: never an excess.
    let d = spmv_layout(&banded, Format::Dia, &params);
    assert!(d.is_err() || d.unwrap().gather_excess == [0, 0]);
}

#[test]
fn a_scattered_matrix_is_predicted_slower_than_a_banded_one_of_the_same_size() {
    // 2^16 rows, 5 entries each: a band of offsets −2…2 (wrapping around at the ends, so
    // that every row has 5) against the diagonal and four columns far apart.
    let n = 1usize << 16;
    let five = |cols: Vec<u32>| {
        let ptr = (0..=n).map(|i| 5 * i as u32).collect();
        Csr::new(n, n, ptr, cols, vec![1.0; 5 * n]).unwrap()
    };
    let mut band = Vec::new();
    for i in 0..n {
        let mut r: Vec<u32> = (0..5).map(|k| ((i + n + k - 2) % n) as u32).collect();
        r.sort_unstable();
        band.extend(r);
    }
    let banded = five(band);
    let mut cols = Vec::new();
    for i in 0..n {
        let mut r: Vec<u32> = (0..5u64)
            .map(|k| ((i as u64 * 2_654_435_761 + k * 40_503) % n as u64) as u32)
            .collect();
        r[0] = i as u32;
        r.sort_unstable();
        r.dedup();
        // Rare collisions: fill up with the next free columns after the diagonal.
        let mut next = i as u32;
        while r.len() < 5 {
            next = (next + 1) % n as u32;
            if !r.contains(&next) {
                r.push(next);
            }
        }
        r.sort_unstable();
        cols.extend(r);
    }
    let scattered = five(cols);
    assert_eq!(scattered.nnz(), banded.nnz());
    let profile = synthetic_profile(DeviceIdentity {
        name: "test".into(),
        vendor: 0,
        device: 0,
        backend: "Vulkan".into(),
        driver: String::new(),
        driver_info: String::new(),
    });
    let req = PredictRequest {
        formats: vec![Format::Csr],
        precisions: vec![Precision::F32],
        ..PredictRequest::all(Some(Method::Cg), CheckMode::Device, DEFAULT_PADDING_BUDGET)
    };
    let t = |a: &Csr<f64>| {
        let p = predict(&profile, a, &req);
        (
            p[0].seconds_per_iteration,
            p[0].gather_excess_bytes,
            p[0].spmv_bytes,
        )
    };
    let (tb, eb, bb) = t(&banded);
    let (ts, es, bs) = t(&scattered);
    assert_eq!(bb, bs, "paper 003's count does not see the difference");
    assert_eq!(eb, 0);
    // Four scattered columns a row: about 4 sectors of 32 bytes beyond 5 · 4 bytes a row.
    assert!(es as f64 > 3.0 * 32.0 * n as f64, "{es}");
    assert!(ts > 1.5 * tb, "scattered {ts:e} s, banded {tb:e} s");
}

/// A profile directory holding `profile` under this device's default file name.
fn profile_dir_with(profile: &Profile) -> std::path::PathBuf {
    let dir = temp_dir("profiles");
    profile
        .save(&dir.join(Profile::file_name(&profile.device)))
        .unwrap();
    dir
}

fn current_device() -> Option<DeviceIdentity> {
    common::context().map(|c| device_identity(&c))
}

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
