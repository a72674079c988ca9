//! Recoveries instead of failures: a near-breakdown restarts BiCGStab and BiCG with a fresh
//! shadow residual (GPU and CPU alike), a zero pivot is shifted with a notice, never NaN; and
//! failures by name: restarted GMRES that makes no progress stops with `stagnation`.

use super::common;
use common::solve::assert_converged;
use krylov_wgpu::cpu;
use krylov_wgpu::matrix::Coo;
use krylov_wgpu::solvers::{self, CheckMode, Method, Precond, SolveOptions, StopReason};

#[test]
fn near_breakdown_restarts_instead_of_stopping() {
    // jpwh_991 has constant column sums: with b = A·1, r₀ is a left eigenvector of A and
    // ⟨r₁, r₀*⟩ = 0 exactly in iteration 1 — a forced breakdown.
    let a = common::problems::load("jpwh_991");
    let b = common::problems::ones_rhs(&a);
    for method in [Method::Bicgstab, Method::Bicg] {
        for mode in [CheckMode::Device, CheckMode::Paper] {
            let o = SolveOptions {
                method,
                precond: Precond::Jacobi,
                check_mode: mode,
                rtol: 1e-8,
                max_iter: 2000,
                ..Default::default()
            };
            let tag = format!("jpwh_991 {method} {mode}");
            let host = cpu::solve(&a, &b, None, &o).unwrap();
            assert_converged(&host, &a, &b, o.rtol, &format!("{tag} CPU"));
            assert!(
                host.report.restarts >= 1,
                "{tag}: {:?}",
                host.report.restart_log
            );
            assert!(host.report.restart_log[0].contains("breakdown"), "{tag}");
            let Some(engine) = common::engine() else {
                continue;
            };
            if !engine.context().summary.shader_f64 {
                continue;
            }
            let gpu = solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
            assert_converged(&gpu, &a, &b, o.rtol, &format!("{tag} GPU"));
            assert_eq!(gpu.report.restart_log, host.report.restart_log, "{tag}");
        }
    }
}

#[test]
fn restarts_are_bounded_and_breakdown_is_then_named() {
    // [[0, 1], [1, 0]] x = e₁ breaks BiCGStab down at once, from every restart alike: no
    // progress, so no restart loop — the breakdown is reported by name.
    let mut coo = Coo::<f64>::new(2, 2);
    coo.push(0, 1, 1.0).unwrap();
    coo.push(1, 0, 1.0).unwrap();
    let a = coo.to_csr().unwrap();
    let o = SolveOptions {
        method: Method::Bicgstab,
        rtol: 1e-10,
        ..Default::default()
    };
    let sol = cpu::solve(&a, &[1.0, 0.0], None, &o).unwrap();
    assert!(
        matches!(sol.report.reason, StopReason::Breakdown { .. }),
        "{:?}",
        sol.report.reason
    );
    assert!(sol.report.restarts <= cpu::MAX_BREAKDOWN_RESTARTS);
}

#[test]
fn zero_pivot_is_shifted_with_a_notice_never_nan() {
    // A tridiagonal matrix whose first diagonal entry is zero (a saddle-point row).
    let n = 40;
    let mut coo = Coo::<f64>::new(n, n);
    for i in 0..n {
        if i > 0 {
            coo.push(i, i, 4.0).unwrap();
            coo.push(i, i - 1, -1.0).unwrap();
        }
        if i + 1 < n {
            coo.push(i, i + 1, -1.5).unwrap();
        }
    }
    let a = coo.to_csr().unwrap();
    let b = common::problems::rhs(&a);
    let o = SolveOptions {
        method: Method::Bicgstab,
        precond: Precond::Ilu0,
        rtol: 1e-8,
        max_iter: 500,
        ..Default::default()
    };
    let mut sols = vec![cpu::solve(&a, &b, None, &o).unwrap()];
    if let Some(engine) = common::engine()
        && engine.context().summary.shader_f64
    {
        sols.push(solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap());
    }
    for sol in sols {
        let info = sol.report.preconditioner.as_ref().unwrap();
        assert!(info.shift > 0.0 && info.factor_attempts > 1, "{info:?}");
        let notice = info.shift_notice.as_ref().expect("a shift notice");
        assert!(notice.contains("pivot 0"), "{notice}");
        assert!(sol.report.notes.contains(notice));
        assert!(sol.x.iter().all(|v| v.is_finite()));
        assert_converged(&sol, &a, &b, o.rtol, "zero pivot");
    }
}

#[test]
fn gmres_without_progress_stops_with_stagnation_by_name() {
    // west0479 unpreconditioned: GMRES(30) flattens out near |r|/|b| ≈ 0.4 (restart cycles
    // reducing the residual by less than 0.01 %), on the GPU and the CPU at the same step.
    let a = common::problems::load("west0479");
    let b = common::problems::ones_rhs(&a);
    let o = SolveOptions {
        method: Method::Gmres,
        rtol: 1e-8,
        ..Default::default()
    };
    let host = cpu::solve(&a, &b, None, &o).unwrap();
    assert_eq!(
        host.report.reason,
        StopReason::Stagnation,
        "{}",
        host.report.reason_detail
    );
    assert!(!host.report.converged && host.report.relative_residual > 1e-3);
    assert!(host.report.iterations < o.max_iter / 2, "stopped early");
    assert!(host.report.reason_detail.contains("--side left"));
    let Some(engine) = common::engine() else {
        return;
    };
    if !engine.context().summary.shader_f64 {
        return;
    }
    for mode in [CheckMode::Device, CheckMode::Paper] {
        let o = SolveOptions {
            check_mode: mode,
            ..o.clone()
        };
        let gpu = solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        assert_eq!(gpu.report.reason, StopReason::Stagnation, "{mode}");
        assert_eq!(gpu.report.iterations, host.report.iterations, "{mode}");
        assert!(!gpu.report.converged);
    }
}
