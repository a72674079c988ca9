//! The performance model (issue 18) against the real thing: its SpMV layouts against the
//! GPU uploads, its launch counts against the dispatch counters of real solves, and the
//! `calibrate` / `predict` / `solve --format auto` command lines with profiles in a private
//! directory (never the user's cache).
//!
//! Here: the layouts, launch counts and gather counts against the GPU; the command lines are
//! in `cli` (the synthetic profile and the profile helpers below serve both).

#[path = "../common/mod.rs"]
mod common;

mod cli;

use std::collections::BTreeMap;

use common::cli::temp_dir;
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
