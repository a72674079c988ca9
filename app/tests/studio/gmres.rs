//! GMRES in krylov-studio: classical, pipelined and CA-GMRES side by side with their
//! reductions and host round trips, CA-GMRES started from the command line, fused GMRES
//! with its two launches per step, p(1)-GMRES with its one and one-workgroup GMRES with one
//! per restart cycle.

use super::*;

#[test]
fn gmres_runs_classical_pipelined_and_ca_gmres_with_their_reductions_and_syncs() {
    let mut h = harness();
    check_device(&h);
    generate(&mut h, "poisson2d:16");
    // CA-GMRES is offered for GMRES only (CG's "all three" are its own variants).
    let ca_radio = || by().role(Role::RadioButton).label("CA-GMRES");
    assert!(h.query(ca_radio()).is_none(), "no CA-GMRES run for CG");
    choose(&mut h, "Method", "gmres");
    h.run();
    h.get(ca_radio());
    h.get(by().role(Role::RadioButton).label("all three"))
        .click();
    h.run();
    // Its controls: s, the TSQR (m is the restart, shared with GMRES).
    h.get_by_label("Restart m").set_value_accesskit(20.0);
    h.get_by_label("CA block s").set_value_accesskit(4.0);
    h.run();
    choose(&mut h, "TSQR", "cholqr");
    h.run();
    let opts = h.state().next_options().unwrap();
    assert_eq!(
        (opts.method, opts.restart, opts.s_step, opts.tsqr),
        (Method::Gmres, 20, 4, Tsqr::CholQr)
    );
    // CA-GMRES preconditions on the right: the box stays enabled.
    assert!(
        !h.get_by_label("Preconditioner")
            .accesskit_node()
            .is_disabled()
    );

    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(
        runs.iter().map(|r| r.kind).collect::<Vec<_>>(),
        vec![RunKind::Classical, RunKind::Pipelined, RunKind::Ca]
    );
    let reports: Vec<_> = runs
        .iter()
        .map(|r| r.report().expect("every run reports").clone())
        .collect();
    for rep in &reports {
        assert!(rep.converged, "{}", rep.reason_detail);
        assert!(rep.relative_residual <= 1e-6);
        assert!(rep.cycles.is_some() && rep.syncs_per_cycle.is_some());
    }
    assert_eq!(reports[0].method, Method::Gmres);
    assert_eq!(reports[2].method, Method::CaGmres);
    let ca = reports[2].cagmres.as_ref().expect("CA-GMRES's own report");
    assert_eq!((ca.options.s, ca.options.m), (4, 20));
    assert_eq!(ca.options.tsqr, Tsqr::CholQr);
    let gpu = reports[0].device.is_gpu();
    if gpu {
        assert!(reports.iter().all(|r| r.device.is_gpu()));
        // Fewer global reductions per iteration than either GMRES variant.
        assert!(reports[2].reductions_per_iteration < reports[0].reductions_per_iteration);
        assert!(reports[2].reductions_per_iteration < reports[1].reductions_per_iteration);
    }

    // The counters show every run's reductions and syncs, column by column.
    assert_eq!(
        row_texts(&h, "global reductions / iteration"),
        reports
            .iter()
            .map(|r| format!("{:.2}", r.reductions_per_iteration))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        row_texts(&h, "host syncs / iteration"),
        reports
            .iter()
            .map(|r| format!("{:.3}", r.syncs_per_iteration))
            .collect::<Vec<_>>()
    );
    let per_cycle: Vec<String> = reports
        .iter()
        .map(|r| {
            let c = r.cycles.unwrap();
            let s = if c == 1 { "" } else { "s" };
            format!("{:.2} ({c} cycle{s})", r.syncs_per_cycle.unwrap())
        })
        .collect();
    assert_eq!(row_texts(&h, "host syncs / restart cycle"), per_cycle);
    let headline = format!(
        "CA-GMRES: {:.2} global reductions and {:.3} host syncs per iteration vs classical \
         {:.2} and {:.3}, pipelined {:.2} and {:.3}",
        reports[2].reductions_per_iteration,
        reports[2].syncs_per_iteration,
        reports[0].reductions_per_iteration,
        reports[0].syncs_per_iteration,
        reports[1].reductions_per_iteration,
        reports[1].syncs_per_iteration,
    );
    assert!(
        h.query_by_label(&headline).is_some(),
        "headline `{headline}` missing"
    );
    // CA-GMRES's own table: its parameters, and a full CA cycle's counts (the library's
    // formula: 1 + m/s·2 reductions with CholQR, whose Gram matrix shares BOrth's second
    // projection's reduction; host syncs 1 + m/s on the CPU reference, 1 on the GPU, which
    // defers a CholQR cycle: its blocks read once with the restart before them).
    assert_eq!(
        row_texts(&h, "s / m / basis / TSQR"),
        vec!["4 / 20 / newton / cholqr"]
    );
    if let (Some(r), Some(s)) = (ca.reductions_per_cycle, ca.syncs_per_cycle) {
        let syncs = if reports[2].device.kind == DeviceKind::Gpu {
            1.0
        } else {
            6.0
        };
        assert_eq!((r, s), (11.0, syncs));
        assert_eq!(
            row_texts(&h, "reductions / syncs per CA cycle"),
            vec![format!("11.00 / {syncs:.2}")]
        );
    }

    // The snapshot shows CA-GMRES's table, below the three columns.
    h.get_by_label("largest basis cond").scroll_to_me();
    h.run();
    mask_timings(&mut h);
    h.snapshot_options("gmres_all_three", &snapshot_options());

    // The history CSV names the CA-GMRES run `ca`.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("krylov-studio-export-ca");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    h.get_by_label("Export path")
        .set_text_value_accesskit(dir.to_str().unwrap());
    h.run();
    h.get_by_label("Save history CSV").click();
    h.run();
    let csv = std::fs::read_to_string(dir.join("poisson2d_16-history.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("ca,")).count(),
        reports[2].history.len()
    );

    // Back to CG: the CA-GMRES runs fall back to the classical and pipelined ones.
    choose(&mut h, "Method", "cg");
    h.run();
    assert!(h.query(ca_radio()).is_none());
    assert!(
        !h.get_by_label("Preconditioner")
            .accesskit_node()
            .is_disabled()
    );
}

#[test]
fn the_command_line_runs_ca_gmres() {
    // `--variant ca` (GMRES implied) with --run: the solve starts once the matrix is ready.
    let line = "--generate poisson2d:12 --run --variant ca --s-step 3 --restart 12 --tsqr cgs2";
    let Ok(krylov_studio::args::Parsed::Run(args)) =
        krylov_studio::args::parse(line.split_whitespace().map(String::from))
    else {
        panic!("`{line}` does not parse")
    };
    let mut h = harness_with(StartupArgs {
        device: DeviceSelection::AnyGpu,
        ..args
    });
    wait_idle(&mut h, "the CA-GMRES solve");
    assert_eq!(h.state().error(), None);
    let runs = h.state().runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].kind, RunKind::Ca);
    let rep = runs[0].report().expect("a report").clone();
    assert!(rep.converged, "{}", rep.reason_detail);
    assert_eq!(rep.method, Method::CaGmres);
    let ca = rep.cagmres.as_ref().unwrap();
    assert_eq!(
        (ca.options.s, ca.options.m, ca.options.tsqr),
        (3, 12, Tsqr::Cgs2)
    );
    assert_eq!(
        row_texts(&h, "global reductions / iteration")[0],
        format!("{:.2}", rep.reductions_per_iteration)
    );
    assert_eq!(
        row_texts(&h, "s / m / basis / TSQR"),
        vec!["3 / 12 / newton / cgs2"]
    );

    // CAQR runs on the GPU too; the counters show its own counts.
    h.get_by_label("Restart m").scroll_to_me();
    h.run();
    h.get_by_label("Restart m").set_value_accesskit(15.0);
    h.run();
    choose(&mut h, "TSQR", "caqr");
    h.run();
    solve(&mut h);
    let run = &h.state().runs()[0];
    let rep = run.report().expect("a report").clone();
    assert!(rep.converged, "{}", rep.reason_detail);
    assert!(rep.device.is_gpu());
    assert_eq!(rep.cagmres.as_ref().unwrap().options.tsqr, Tsqr::Caqr);
    assert!(rep.reductions_per_iteration > 0.0);
    assert_eq!(
        row_texts(&h, "global reductions / iteration")[0],
        format!("{:.2}", rep.reductions_per_iteration)
    );
}

#[test]
fn gmres_runs_fused_with_two_launches_per_step() {
    let mut h = harness();
    check_device(&h);
    generate(&mut h, "poisson2d:16");
    choose(&mut h, "Method", "gmres");
    h.run();
    // Fused is offered beside GMRES's other variants.
    h.get(by().role(Role::RadioButton).label("fused")).click();
    h.run();
    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(
        runs.iter().map(|r| r.kind).collect::<Vec<_>>(),
        vec![RunKind::Fused]
    );
    let r = runs[0].report().expect("the run reports").clone();
    assert!(r.converged, "{}", r.reason_detail);
    assert_eq!(
        (r.method, r.variant),
        (Method::Gmres, krylov_wgpu::solvers::Variant::Fused)
    );
    if r.device.is_gpu() {
        // Two launches and two global reductions per step, plus a cycle's own.
        assert!((2.0..2.5).contains(&r.dispatches_per_iteration), "{r:?}");
        assert!((2.0..2.2).contains(&r.reductions_per_iteration), "{r:?}");
        let headline = format!(
            "fused gmres: {:.2} launches and {:.2} global reductions per iteration",
            r.dispatches_per_iteration, r.reductions_per_iteration
        );
        assert!(
            h.query(by().label(headline.as_str())).is_some(),
            "{headline}"
        );
    }
}

#[test]
fn gmres_runs_p1_with_one_launch_per_step() {
    let mut h = harness();
    check_device(&h);
    generate(&mut h, "poisson2d:16");
    // p1 is offered for GMRES only.
    let p1_radio = || by().role(Role::RadioButton).label("p1");
    assert!(h.query(p1_radio()).is_none(), "no p1 run for CG");
    choose(&mut h, "Method", "gmres");
    h.run();
    h.get(p1_radio()).click();
    h.run();
    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(
        runs.iter().map(|r| r.kind).collect::<Vec<_>>(),
        vec![RunKind::P1]
    );
    let r = runs[0].report().expect("the run reports").clone();
    assert!(r.converged, "{}", r.reason_detail);
    assert!(r.relative_residual <= 1e-6);
    assert_eq!(
        (r.method, r.variant),
        (Method::Gmres, krylov_wgpu::solvers::Variant::P1)
    );
    if r.device.is_gpu() {
        // One launch and one global reduction per step, plus a cycle's own.
        assert!((1.0..1.5).contains(&r.dispatches_per_iteration), "{r:?}");
        assert!((1.0..1.2).contains(&r.reductions_per_iteration), "{r:?}");
        let headline = format!(
            "p1 gmres: {:.2} launches and {:.2} global reductions per iteration",
            r.dispatches_per_iteration, r.reductions_per_iteration
        );
        assert!(
            h.query(by().label(headline.as_str())).is_some(),
            "{headline}"
        );
    }
    // Back to CG: the p1 radio is gone (the mode falls back to pipelined).
    choose(&mut h, "Method", "cg");
    h.run();
    assert!(h.query(p1_radio()).is_none());
}

#[test]
fn gmres_runs_in_one_workgroup_with_a_launch_per_cycle() {
    let mut h = harness();
    check_device(&h);
    generate(&mut h, "poisson2d:32");
    let workgroup_radio = || by().role(Role::RadioButton).label("workgroup");
    choose(&mut h, "Method", "gmres");
    h.run();
    // Offered beside GMRES's other variants (CG has one of its own), not among "all three".
    h.get(workgroup_radio()).click();
    h.run();
    let opts = h.state().next_options().unwrap();
    assert_eq!(opts.method, Method::Gmres);
    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(
        runs.iter().map(|r| r.kind).collect::<Vec<_>>(),
        vec![RunKind::Workgroup]
    );
    let r = runs[0].report().expect("the run reports").clone();
    assert!(r.converged, "{}", r.reason_detail);
    assert!(r.relative_residual <= 1e-6);
    assert_eq!(
        (r.method, r.variant),
        (Method::Gmres, krylov_wgpu::solvers::Variant::Workgroup)
    );
    // GMRES(30) on 1024 rows: several cycles, each one launch of its steps.
    let cycles = r.cycles.expect("GMRES reports its cycles");
    assert!(cycles >= 2, "{r:?}");
    if r.device.is_gpu() {
        // A cycle is [the update of x] + the residual + one launch of its steps, and its one
        // global reduction is the restart's norm (the final check adds one of each): far
        // below pipelined GMRES's launches and reductions per step.
        let c = cycles as f64;
        let launches = r.loop_counts.dispatches as f64 / c;
        let reductions = r.loop_counts.reductions as f64 / c;
        assert!(
            (2.0..=4.0).contains(&launches),
            "{launches} launches per cycle: {r:?}"
        );
        assert!(
            (1.0..=2.0).contains(&reductions),
            "{reductions} reductions per cycle: {r:?}"
        );
        assert!(r.dispatches_per_iteration < 0.5, "{r:?}");
        assert!(r.reductions_per_iteration < 0.2, "{r:?}");
        let headline = format!(
            "workgroup gmres: {launches:.2} launches and {reductions:.2} global reductions per \
             restart cycle ({cycles} cycle{}), {:.2} and {:.2} per iteration",
            if cycles == 1 { "" } else { "s" },
            r.dispatches_per_iteration,
            r.reductions_per_iteration
        );
        assert!(
            h.query(by().label(headline.as_str())).is_some(),
            "{headline}"
        );
        assert_eq!(
            row_texts(&h, "dispatches / iteration")[0],
            format!("{:.2}", r.dispatches_per_iteration)
        );
    }
    // Another method without it: the workgroup radio is gone and the mode falls back; back
    // to GMRES, "all three" is classical, pipelined and CA-GMRES.
    choose(&mut h, "Method", "bicgstab");
    h.run();
    assert!(h.query(workgroup_radio()).is_none());
    choose(&mut h, "Method", "gmres");
    h.run();
    h.get(by().role(Role::RadioButton).label("all three"))
        .click();
    h.run();
    assert_eq!(
        h.state().next_kinds(),
        vec![RunKind::Classical, RunKind::Pipelined, RunKind::Ca]
    );
}
