//! CG in krylov-studio: classical, pipelined and fused side by side, fused's one launch and one
//! global reduction per iteration in the counter panel's headline; and CG in one workgroup,
//! its launch per 32 iterations and no global reduction there.

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
    // Another method: the workgroup radio is gone and the mode falls back.
    choose(&mut h, "Method", "gmres");
    h.run();
    assert!(
        h.query(by().role(Role::RadioButton).label("workgroup"))
            .is_none()
    );
}
