//! Matrices CG cannot solve, tolerances f32 cannot reach, the monitor, trivial systems and
//! typed errors.

use krylov_wgpu::KrylovError;
use krylov_wgpu::matrix::generators::poisson_2d_fd;
use krylov_wgpu::matrix::{Coo, Csr};
use krylov_wgpu::solvers::{CheckMode, Precond, SolveOptions, StopReason, Variant, cg};

use super::common::engine;
use super::common::problems::{from_rows, load, shifted_poisson, with_ones_rhs};
use super::common::solve::{
    MODES, assert_bad_rhs_refused, assert_monitor_sees_history, assert_trivial_solves,
    cancelled_solve, cg_variants_and_modes, engine_without_f64, failing, true_rel,
};
use super::{opts, solve};

/// A symmetric indefinite matrix: diag(1, −2, 3, −4, ...).
fn indefinite(n: usize) -> Csr<f64> {
    let mut coo = Coo::new(n, n);
    for i in 0..n {
        let v = (i + 1) as f64;
        coo.push(i, i, if i % 2 == 0 { v } else { -v }).unwrap();
    }
    coo.to_csr().unwrap()
}

#[test]
fn non_spd_matrices_are_reported_not_iterated() {
    let Some(engine) = engine() else { return };
    // Poisson shifted past its smallest eigenvalue is symmetric indefinite too.
    for a in [indefinite(64), shifted_poisson(20, 1.0)] {
        let b = vec![1.0; a.nrows()];
        for (variant, mode) in cg_variants_and_modes() {
            let sol = solve(&engine, &a, &b, &opts(variant, mode, Precond::None, 1e-10));
            assert_eq!(
                sol.report.reason,
                StopReason::NotSpd,
                "{variant} {mode}: {}",
                sol.report.reason_detail
            );
            assert!(!sol.report.converged);
            assert!(
                sol.report.iterations < 200,
                "{variant} {mode}: detected late"
            );
            assert!(sol.x.iter().all(|v| v.is_finite()));
        }
    }
}

#[test]
fn never_reports_false_convergence_in_f32() {
    let Some(engine) = engine() else { return };
    // rtol 1e-9 is below what f32 can attain here: the solver must not claim convergence.
    let (a, b) = with_ones_rhs(poisson_2d_fd::<f32>(40));
    for (variant, mode) in cg_variants_and_modes() {
        let o = SolveOptions {
            max_iter: 600,
            ..opts(variant, mode, Precond::None, 1e-9)
        };
        let sol = solve(&engine, &a, &b, &o);
        let rel = true_rel(&a, &b, &sol.x);
        assert!(
            !sol.report.converged || rel <= 1e-9,
            "{variant} {mode}: false convergence at {rel:e}"
        );
        assert!(
            matches!(
                sol.report.reason,
                StopReason::ResidualGap | StopReason::MaxIterations | StopReason::Converged
            ),
            "{:?}",
            sol.report.reason
        );
        assert_replacements_counted(&sol.report, o.max_iter, &format!("{variant} {mode}"));
    }
}

/// Every residual gap before the last was a residual replacement, logged and counted in
/// `replacements`; a `residual_gap` stop comes only after all of them (or at the limit).
fn assert_replacements_counted(r: &krylov_wgpu::solvers::SolveReport, max_iter: usize, tag: &str) {
    let logged = r
        .restart_log
        .iter()
        .filter(|l| l.contains("residual replaced by b - Ax"))
        .count();
    assert_eq!(r.replacements, logged, "{tag}: {:?}", r.restart_log);
    assert!(r.replacements <= r.restarts, "{tag}");
    if r.reason == StopReason::ResidualGap {
        assert!(
            r.replacements == krylov_wgpu::cpu::MAX_GAP_RESTARTS || r.iterations >= max_iter,
            "{tag}: gap after {} replacement(s) at iteration {}",
            r.replacements,
            r.iterations
        );
    }
}

#[test]
fn monitor_sees_the_history_and_can_cancel() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(poisson_2d_fd::<f64>(16));
    for mode in MODES {
        let o = opts(Variant::Pipelined, mode, Precond::None, 1e-8);
        assert_monitor_sees_history(cg::solve, &engine, (&a, &b), &o, &mode.to_string());
    }
    let o = opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8);
    let r = cancelled_solve(cg::solve, &engine, (&a, &b), &o, "device");
    assert_eq!(r.iterations, 0);
}

#[test]
fn trivial_systems_and_initial_guesses() {
    let Some(engine) = engine() else { return };
    let a = poisson_2d_fd::<f64>(10);
    for (variant, mode) in cg_variants_and_modes() {
        let o = opts(variant, mode, Precond::None, 1e-10);
        let tag = format!("{variant} {mode}");
        assert_trivial_solves(cg::solve, &engine, &a, &[1.0; 100], &o, &tag);
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let Some(engine) = engine() else { return };
    let o = opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8);
    assert_bad_rhs_refused(cg::solve, &engine, &poisson_2d_fd::<f64>(4), &o);
    let fails = failing(cg::solve, &engine);
    let nonsym = load("pores_1");
    assert!(matches!(
        fails(&nonsym, &[1.0; 30], &o),
        KrylovError::MethodMismatch(_)
    ));
    let zero_diag = from_rows(&[&[0.0, 1.0], &[1.0, 0.0]]);
    let jac = SolveOptions {
        precond: Precond::Jacobi,
        ..o.clone()
    };
    assert!(matches!(
        fails(&zero_diag, &[1.0, 1.0], &jac),
        KrylovError::ZeroDiagonal { row: 0 }
    ));
    let rect = Csr::<f64>::new(2, 3, vec![0, 1, 2], vec![0, 1], vec![1.0, 1.0]).unwrap();
    assert!(matches!(
        fails(&rect, &[1.0, 1.0], &o),
        KrylovError::NotSquare { .. }
    ));
}

#[test]
fn f64_without_shader_f64_is_a_typed_error() {
    let Some(engine) = engine_without_f64() else {
        return;
    };
    let a = poisson_2d_fd::<f64>(4);
    let o = opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8);
    let e = cg::solve(&engine, &a, &[1.0; 16], None, &o, &mut ()).unwrap_err();
    assert!(matches!(e, KrylovError::MissingFeature { .. }), "{e}");
}

#[test]
fn an_f32_overflow_on_a_badly_scaled_matrix_is_recovered_by_balancing() {
    let Some(engine) = engine() else { return };
    // bcsstk01's entries reach 2.5e9: in f32 CG's inner products overflow at iteration 1
    // and BiCG's breakdown bound at iteration 0. The solve balances rows and columns and
    // runs again, says so, and converges to the true residual.
    let a64 = load("bcsstk01");
    let a: Csr<f32> = a64.cast().unwrap();
    let b64 = a64.mul_vec(&vec![1.0; a64.ncols()]).unwrap();
    let b: Vec<f32> = b64.iter().map(|&v| v as f32).collect();
    for (method, first) in [
        (krylov_wgpu::solvers::Method::Cg, "non-finite"),
        (krylov_wgpu::solvers::Method::Bicg, "breakdown"),
    ] {
        let o = SolveOptions {
            method,
            rtol: 1e-5,
            max_iter: 2000,
            ..Default::default()
        };
        let sol = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{method}: {}", r.reason_detail);
        assert!(
            r.restart_log[0].starts_with(first) && r.restart_log[0].contains("balanced"),
            "{method}: {:?}",
            r.restart_log
        );
        assert!(r.equilibration.is_some(), "{method}");
        let x: Vec<f64> = sol.x.iter().map(|&v| v as f64).collect();
        let rel = true_rel(&a64, &b64, &x);
        assert!(rel <= 1e-5 * 1.05, "{method}: {rel:e}");
        // Balancing asked for up front: one solve, no second attempt.
        let balanced = SolveOptions {
            equilibrate: true,
            ..o.clone()
        };
        let direct = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &balanced, &mut ());
        let direct = direct.unwrap().report;
        assert!(direct.converged, "{method}: {}", direct.reason_detail);
        assert!(
            direct
                .restart_log
                .iter()
                .all(|l| !l.contains("solved again")),
            "{method}: {:?}",
            direct.restart_log
        );
    }
}
