//! krylov-studio's inputs and panels: a dropped malformed file, the device and sample menus,
//! the solver panel's side and triangular solve, and the predict panel.

use super::*;

#[derive(Debug)]
struct Dropped(std::path::PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn dropping_a_malformed_file_shows_the_error() {
    let mut h = harness();
    // The path is relative to the crate root (the tests' working directory), so the message
    // and the snapshot are the same on every machine.
    let path = Path::new("tests/data/malformed.mtx");
    assert!(path.exists());
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(path.to_path_buf())));
    h.step();
    wait_idle(&mut h, "the dropped file");
    let error = h.state().error().expect("an error is shown").to_string();
    assert_eq!(
        error,
        "Could not load malformed.mtx: tests/data/malformed.mtx:6: non-numeric token `four`"
    );
    assert!(h.query_by_label(&format!("Error: {error}")).is_some());
    assert!(h.state().problem().is_none());
    h.snapshot_options("malformed_drop", &snapshot_options());

    // The path field: a missing file is a message too.
    enter_and_click(&mut h, "Path", "tests/data/no-such-file.mtx", "Load");
    let error = h.state().error().expect("an error is shown");
    assert!(
        error.starts_with("Could not load no-such-file.mtx: tests/data/no-such-file.mtx"),
        "{error}"
    );
    assert!(
        h.query_by_label_contains("Could not load no-such-file.mtx")
            .is_some()
    );

    // A bad generator spec too, and the app still works afterwards.
    generate_err(&mut h, "poisson2d:0", "grid size K must be positive");
    generate(&mut h, "poisson2d:8");
    assert_eq!(h.state().problem().unwrap().facts.nrows, 64);
}

#[test]
fn the_device_menu_switches_between_the_cpu_and_an_adapter() {
    let mut h = harness_with(StartupArgs::default());
    check_device(&h);
    assert_eq!(h.state().device_selection(), DeviceSelection::Auto);
    generate(&mut h, "poisson2d:16");

    // To the CPU reference: the state goes through Opening to the CPU, and the runs say so.
    choose(&mut h, "Device", "CPU reference");
    assert_eq!(h.state().device_selection(), DeviceSelection::Cpu);
    wait_idle(&mut h, "the CPU reference");
    let d = h.state().device().active().unwrap().clone();
    assert_eq!(d.info.kind, DeviceKind::Cpu);
    assert!(d.adapter.is_none());
    assert_eq!(d.reason, "CPU reference chosen in the Device menu");
    check_device(&h);
    let rep = solve_pipelined(&mut h);
    assert_eq!(rep.device.kind, DeviceKind::Cpu);
    assert_eq!(rep.device_reason, d.reason);
    assert_eq!(row_texts(&h, "device"), vec!["CPU (reference)"]);
    assert_eq!(row_texts(&h, "total dispatches"), vec!["CPU"]);
    mask_timings(&mut h);
    h.snapshot_options("device_cpu_reference", &snapshot_options());

    // Back to the software adapter by hand (lavapipe in CI).
    let Some(lavapipe) = h
        .state()
        .adapters()
        .iter()
        .find(|a| a.software && a.backend == "Vulkan")
        .cloned()
    else {
        assert!(
            !krylov_wgpu::gpu::gpu_required(),
            "KRYLOV_REQUIRE_GPU=1 but no software Vulkan adapter is listed: {:?}",
            h.state().adapters()
        );
        return;
    };
    choose(&mut h, "Device", &adapter_label(&lavapipe));
    wait_idle(&mut h, "the adapter chosen");
    assert_eq!(h.state().error(), None);
    assert_eq!(
        h.state().device_selection(),
        DeviceSelection::Adapter(lavapipe.index)
    );
    let d = h.state().device().active().unwrap().clone();
    assert!(d.info.is_gpu() && d.info.software);
    assert_eq!(d.adapter.as_ref().map(|a| a.index), Some(lavapipe.index));
    check_device(&h);
    let rep = solve_pipelined(&mut h);
    assert_eq!(rep.device.kind, DeviceKind::Gpu);
    assert!(rep.device.software);
    assert_eq!(rep.device.name, lavapipe.name);
    assert!(rep.device_reason.contains("chosen in the Device menu"));
    assert_eq!(rep.dispatches_per_iteration, 2.0);
}

#[test]
fn the_sample_menu_opens_an_embedded_matrix() {
    let mut h = harness();
    choose(&mut h, "Sample", "bcsstk01");
    wait_idle(&mut h, "bcsstk01");
    assert_eq!(h.state().error(), None);
    let p = h.state().problem().expect("the sample is loaded");
    assert_eq!(p.source.name(), "bcsstk01");
    assert_eq!((p.facts.nrows, p.facts.symmetric), (48, true));
    assert_eq!(row_texts(&h, "n"), vec!["48".to_string()]);
    // CG (the default method) on the SPD sample. Its condition number is ~1e6: allow the
    // iterations (n = 48, so CG needs a few passes in floating point).
    let rep = solve_pipelined(&mut h);
    assert_eq!(rep.method, Method::Cg);
    assert!(rep.relative_residual <= 1e-5, "{}", rep.relative_residual);

    // A nonsymmetric sample switches CG to the method it suggests.
    choose(&mut h, "Sample", "pores_1");
    wait_idle(&mut h, "pores_1");
    assert!(
        h.query_by_label("the matrix is not symmetric: switched the method to gmres")
            .is_some()
    );
}

#[test]
fn the_solver_panel_sets_the_side_and_the_triangular_solve_and_the_table_shows_their_cost() {
    let mut h = harness();
    generate(&mut h, "poisson2d:16");
    choose(&mut h, "Method", "bicgstab");
    choose(&mut h, "Preconditioner", "ilu0");
    choose(&mut h, "Triangular solve", "sweeps");
    h.get_by_label("K").set_value_accesskit(4.0);
    h.run();
    let opts = h.state().next_options().unwrap();
    assert_eq!(
        (opts.precond, opts.side, opts.trisolve),
        (Precond::Ilu0, Side::Right, Trisolve::Sweeps(4))
    );
    let rep = solve_pipelined(&mut h);
    assert_eq!(rep.method, Method::Bicgstab);
    let p = rep
        .preconditioner
        .clone()
        .expect("the report describes ilu0");
    assert_eq!(p.kind, Precond::Ilu0);
    assert_eq!(p.trisolve, Some(Trisolve::Sweeps(4)));

    // The preconditioner table: kind and strategy, levels, launches per apply, factor, shift.
    assert_eq!(row_texts(&h, "kind / trisolve"), vec!["ilu0 / sweeps:4"]);
    let levels = p.levels.map_or("–".into(), |[l, u]| format!("{l} / {u}"));
    assert_eq!(row_texts(&h, "levels L / U"), vec![levels]);
    let per_apply = if rep.device.is_gpu() {
        p.dispatches_per_apply.to_string()
    } else {
        "CPU".into()
    };
    assert_eq!(row_texts(&h, "dispatches / apply"), vec![per_apply]);
    assert_eq!(
        row_texts(&h, "factor nnz / shift"),
        vec![format!("{} / 0", p.factor_nnz)]
    );
    // (The preconditioner table to the right may share the restarts row's height.)
    assert_eq!(row_texts(&h, "restarts")[0], rep.restarts.to_string());
    for note in &rep.notes {
        assert!(h.query_by_label(&format!("• {note}")).is_some(), "{note}");
    }

    // The side, and K kept while another strategy is chosen.
    choose(&mut h, "Side", "left");
    choose(&mut h, "Triangular solve", "levels");
    let opts = h.state().next_options().unwrap();
    assert_eq!((opts.side, opts.trisolve), (Side::Left, Trisolve::Levels));
    choose(&mut h, "Triangular solve", "sweeps");
    assert_eq!(
        h.state().next_options().unwrap().trisolve,
        Trisolve::Sweeps(4)
    );
}

/// A profile for the adapter `gpu` with made-up curves for every kernel of the model (the
/// matrix kernels of later formats slower).
fn synthetic_profile(gpu: &krylov_wgpu::gpu::AdapterSummary) -> krylov_wgpu::model::Profile {
    use krylov_wgpu::model::kernels::{
        Curve, MODELLED, Shape, SpmvBytes, curve_key, iteration_plan,
    };
    use krylov_wgpu::model::{DeviceIdentity, Fit, MODEL_FORMATS, Profile, Sample, Sigmoid};
    use krylov_wgpu::solvers::CheckMode;
    let mut kernels = std::collections::BTreeMap::new();
    let mut constants = std::collections::BTreeMap::new();
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
                if k.curve == Curve::Finish {
                    constants.insert(curve_key(k, *format), 4e-6);
                    continue;
                }
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
                kernels.insert(curve_key(k, *format), fit);
            }
        }
    }
    Profile {
        schema_version: krylov_wgpu::model::profile::SCHEMA_VERSION,
        device: DeviceIdentity {
            name: gpu.name.clone(),
            vendor: 0,
            device: 0,
            backend: gpu.backend.clone(),
            driver: gpu.driver.clone(),
            driver_info: String::new(),
        },
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
        gather_weights: Default::default(),
        chain_step_seconds: Default::default(),
        chain_reference_steps: Default::default(),
        launch_residuals: Default::default(),
    }
}

#[test]
fn the_predict_panel_ranks_formats_beside_the_measured_time() {
    let dir = std::env::temp_dir().join(format!("studio-profiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut h = harness_with(StartupArgs {
        device: DeviceSelection::AnyGpu,
        profile_dir: Some(dir.clone()),
        ..Default::default()
    });
    let gpu = h.state().device().gpu().expect("a GPU adapter").clone();
    let profile = synthetic_profile(&gpu);
    let file = krylov_wgpu::model::Profile::file_name(&profile.device);
    profile.save(&dir.join(file)).unwrap();
    generate(&mut h, "poisson2d:24");
    h.get_by_label("Predicted per iteration (performance model)");
    // Ranked: the synthetic profile makes CSR's kernels the fastest, and fused CG (one
    // launch on the same curves) faster than pipelined CG (two).
    assert_eq!(row_texts(&h, "1")[0], "csr, fused");
    assert_eq!(row_texts(&h, "2")[0], "csr, pipelined");
    let rep = solve_pipelined(&mut h);
    h.run();
    let cells = row_texts(&h, &format!("{}, pipelined", rep.format));
    assert_eq!(cells.len(), 2, "predicted and measured: {cells:?}");
    let measured: f64 = cells[1].parse().expect("a measured time");
    let expect = rep.loop_seconds / rep.iterations_recorded as f64 * 1e6;
    assert!((measured - expect).abs() <= 0.006, "{measured} vs {expect}");
}
