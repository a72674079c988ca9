//! CG in krylov-studio: classical, pipelined and fused side by side, fused's one launch and one
//! global reduction per iteration in the counter panel's headline; CG in one workgroup, its
//! launch per 32 iterations and no global reduction there; and cooperative CG, its launch per
//! 16 iterations and one global reduction per iteration there.

use super::*;

#[test]
fn cg_runs_classical_pipelined_and_fused_side_by_side() {
    let mut h = harness();
    check_device(&h);
    generate(&mut h, "poisson2d:16");
    // Fused is offered for CG only.
    assert!(
        h.query(by().role(Role::RadioButton).label("fused"))
            .is_some()
    );
    h.get(by().role(Role::RadioButton).label("all three"))
        .click();
    h.run();
    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(
        runs.iter().map(|r| r.kind).collect::<Vec<_>>(),
        vec![RunKind::Classical, RunKind::Pipelined, RunKind::Fused]
    );
    let reports: Vec<_> = runs
        .iter()
        .map(|r| r.report().expect("every run reports").clone())
        .collect();
    for r in &reports {
        assert!(r.converged, "{}: {}", r.variant, r.reason_detail);
    }
    let (pipelined, fused) = (&reports[1], &reports[2]);
    assert_eq!(fused.variant, krylov_wgpu::solvers::Variant::Fused);
    // Pipelined CG's recurrences: the same iterations up to the summation order.
    assert!(fused.iterations.abs_diff(pipelined.iterations) <= 1);
    if fused.device.is_gpu() {
        assert_eq!(fused.dispatches_per_iteration, 1.0);
        assert_eq!(pipelined.dispatches_per_iteration, 2.0);
        let headline = format!(
            "fused cg: 1.00 launches and 1.00 global reductions per iteration vs pipelined {:.2} and {:.2}",
            pipelined.dispatches_per_iteration, pipelined.reductions_per_iteration
        );
        assert!(
            h.query(by().label(headline.as_str())).is_some(),
            "{headline}"
        );
    }
    // Another method: the fused radio is gone and the mode falls back.
    choose(&mut h, "Method", "bicgstab");
    h.run();
    assert!(
        h.query(by().role(Role::RadioButton).label("fused"))
            .is_none()
    );
}

#[test]
fn cg_runs_in_one_workgroup() {
    let mut h = harness();
    check_device(&h);
    generate(&mut h, "poisson2d:16");
    h.get(by().role(Role::RadioButton).label("workgroup"))
        .click();
    h.run();
    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(
        runs.iter().map(|r| r.kind).collect::<Vec<_>>(),
        vec![RunKind::Workgroup]
    );
    let r = runs[0].report().expect("the run reports");
    assert!(r.converged, "{}", r.reason_detail);
    assert_eq!(r.variant, krylov_wgpu::solvers::Variant::Workgroup);
    if r.device.is_gpu() {
        // 32 iterations a launch, every inner product a workgroup sum.
        assert_eq!(r.reductions_per_iteration, 0.0);
        let headline = format!(
            "workgroup cg: {:.2} launches and 0.00 global reductions per iteration",
            r.dispatches_per_iteration
        );
        assert!(
            h.query(by().label(headline.as_str())).is_some(),
            "{headline}"
        );
    }
    // Another method without it: the workgroup radio is gone and the mode falls back
    // (GMRES has one of its own: `gmres.rs`).
    choose(&mut h, "Method", "bicgstab");
    h.run();
    assert!(
        h.query(by().role(Role::RadioButton).label("workgroup"))
            .is_none()
    );
}

#[test]
fn cg_runs_cooperatively() {
    use krylov_wgpu::solvers::cg::cooperative::ITERATIONS_PER_LAUNCH;
    let mut h = harness();
    check_device(&h);
    generate(&mut h, "poisson2d:16");
    // Offered for CG, next to workgroup.
    assert!(
        h.query(by().role(Role::RadioButton).label("workgroup"))
            .is_some()
    );
    h.get(by().role(Role::RadioButton).label("cooperative"))
        .click();
    h.run();
    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(
        runs.iter().map(|r| r.kind).collect::<Vec<_>>(),
        vec![RunKind::Cooperative]
    );
    let r = runs[0].report().expect("the run reports").clone();
    assert!(r.converged, "{}", r.reason_detail);
    assert_eq!(r.variant, krylov_wgpu::solvers::Variant::Cooperative);
    if r.device.is_gpu() {
        // 16 iterations a launch, one global reduction each.
        assert_eq!(
            r.dispatches_per_iteration,
            1.0 / ITERATIONS_PER_LAUNCH as f64
        );
        assert_eq!(r.reductions_per_iteration, 1.0);
        let headline = format!(
            "cooperative cg: {:.2} launches and 1.00 global reductions per iteration",
            r.dispatches_per_iteration
        );
        assert!(
            h.query(by().label(headline.as_str())).is_some(),
            "{headline}"
        );
        // The workgroups it launched with, among the run's notes.
        let note = r
            .notes
            .iter()
            .find(|n| n.starts_with("cooperative: ") && n.contains("workgroups per launch"))
            .unwrap_or_else(|| panic!("no workgroup count in {:?}", r.notes));
        assert!(h.query_by_label(&format!("• {note}")).is_some(), "{note}");
    }
    // Another method: the cooperative radio is gone and the mode falls back to pipelined.
    choose(&mut h, "Method", "gmres");
    h.run();
    assert!(
        h.query(by().role(Role::RadioButton).label("cooperative"))
            .is_none()
    );
    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(
        runs.iter().map(|r| r.kind).collect::<Vec<_>>(),
        vec![RunKind::Pipelined]
    );
    let r = runs[0].report().expect("the run reports");
    assert_eq!(
        (r.method, r.variant),
        (Method::Gmres, krylov_wgpu::solvers::Variant::Pipelined)
    );
}
