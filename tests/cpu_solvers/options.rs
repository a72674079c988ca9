//! Options: the initial guess, b = 0, the iteration limit and atol.

use krylov_wgpu::cpu::{self, TRUE_RESIDUAL_SLACK};
use krylov_wgpu::solvers::{Method, Precond, SolveOptions, StopReason, Variant};

use super::{all_combos, combos, convdiff, opts, poisson, rhs, solve_checked, tag, x_star};

#[test]
fn x0_is_honoured() {
    let a = convdiff::<f64>(6);
    let b = rhs(&a);
    let xs = x_star(a.nrows());
    for o in combos(false, 1e-8).into_iter().chain(combos(true, 1e-8)) {
        // The exact solution as x0: converged at iteration 0, x untouched.
        let s = cpu::solve(&a, &b, Some(&xs), &o).unwrap();
        assert!(
            s.report.converged,
            "{}: {}",
            tag(&o),
            s.report.reason_detail
        );
        assert_eq!(s.report.iterations, 0);
        assert_eq!(s.x, xs);
        assert_eq!(s.report.history.len(), 1);
        // A perturbed x0: the history starts at ‖b − A x0‖.
        let x0: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(i, x)| x + 1e-3 * (i % 3) as f64)
            .collect();
        let s = cpu::solve(
            &a,
            &b,
            Some(&x0),
            &SolveOptions {
                max_iter: 0,
                ..o.clone()
            },
        )
        .unwrap();
        assert_eq!(s.report.reason, StopReason::MaxIterations);
        assert_eq!(s.x, x0);
        let r0 = cpu::true_relative_residual(&a, &b, &x0) * s.report.b_norm;
        assert!((s.report.history[0] - r0).abs() <= 1e-12 * r0);
    }
    // Starting close to the solution saves iterations.
    let o = opts(Method::Gmres, Variant::Pipelined, Precond::None, 1e-10);
    let cold = cpu::solve(&a, &b, None, &o).unwrap();
    let x0: Vec<f64> = xs.iter().map(|x| x * (1.0 + 1e-6)).collect();
    let warm = cpu::solve(&a, &b, Some(&x0), &o).unwrap();
    assert!(warm.report.converged && warm.report.iterations < cold.report.iterations);
}

#[test]
fn zero_rhs_gives_zero_solution() {
    let a = convdiff::<f64>(4);
    let b = vec![0.0; a.nrows()];
    let x0 = vec![1.0; a.nrows()];
    for o in combos(false, 1e-8).into_iter().chain(combos(true, 1e-8)) {
        for x0 in [None, Some(&x0[..])] {
            let s = cpu::solve(&a, &b, x0, &o).unwrap();
            assert!(s.report.converged);
            assert_eq!(s.report.iterations, 0);
            assert_eq!(s.report.relative_residual, 0.0);
            assert_eq!(s.report.history, vec![0.0]);
            assert!(s.x.iter().all(|&v| v == 0.0));
        }
    }
}

#[test]
fn iteration_limit_is_reported() {
    let a = poisson::<f64>(12);
    let b = rhs(&a);
    for o in all_combos(1e-12) {
        let o = SolveOptions {
            max_iter: 5,
            restart: 3,
            ..o
        };
        let s = solve_checked(&a, &b, &o);
        assert_eq!(
            s.report.reason,
            StopReason::MaxIterations,
            "{}: {}",
            tag(&o),
            s.report.reason_detail
        );
        assert_eq!(s.report.iterations, 5);
        assert!(s.report.reason_detail.contains('5'));
        // The report serialises.
        let json = s.report.to_json();
        assert!(json.contains("\"reason\":\"max_iterations\""), "{json}");
    }
}

/// The atol part of the threshold: max(rtol‖b‖, atol).
#[test]
fn atol_is_honoured() {
    let a = poisson::<f64>(8);
    let b = rhs(&a);
    let bn = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    let o = SolveOptions {
        rtol: 0.0,
        atol: 1e-6 * bn,
        ..opts(Method::Cg, Variant::Pipelined, Precond::None, 0.0)
    };
    let s = cpu::solve(&a, &b, None, &o).unwrap();
    assert!(s.report.converged);
    assert!(s.report.relative_residual <= 1e-6 * (1.0 + TRUE_RESIDUAL_SLACK));
    assert!(s.report.relative_residual > 1e-9);
}
