//! What BiCG and the Jacobi iteration share: the exact stop of `device` mode, trivial
//! systems, typed errors, the library dispatch, restarts and tunings.

use krylov_wgpu::KrylovError;
use krylov_wgpu::gpu::{Engine, Tuning};
use krylov_wgpu::matrix::generators::random_nonsymmetric;
use krylov_wgpu::solvers::{
    CheckMode, Method, Precond, Solution, SolveOptions, StopReason, Variant, bicg, jacobi, on_gpu,
    solve_gpu,
};

use super::common::problems::{from_rows, ones_rhs};
use super::common::solve::{
    GpuSolve, MODES, VARIANTS, assert_device_mode_stops_exactly, assert_trivial_solves,
    engine_without_f64, expect_err, failing, true_rel, variants_and_modes,
};
use super::common::{context, engine, large_workgroups, small_grid, with_subgroups};
use super::{bicg_opts, convdiff, jacobi_opts};

#[test]
fn device_mode_returns_the_x_of_the_converging_iteration() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff::<f32>(8);
    let r = random_nonsymmetric::<f32>(1500, 7, 5);
    let rb = ones_rhs(&r);
    // A device-mode solve for (batch, max_iter), with the true residual of the x it returns.
    type Solver<'a> = Box<dyn Fn(usize, usize) -> (Solution<f32>, f64) + 'a>;
    let mut runs: Vec<(String, Solver<'_>)> = Vec::new();
    for variant in VARIANTS {
        let (a, b, engine) = (&a, &b, &engine);
        runs.push((
            format!("bicg {variant}"),
            Box::new(move |batch, max_iter| {
                let o = SolveOptions {
                    batch,
                    max_iter,
                    ..bicg_opts(variant, CheckMode::Device, Precond::Jacobi, 1e-5)
                };
                let s = bicg::solve(engine, a, b, None, &o, &mut ()).unwrap();
                let rel = true_rel(a, b, &s.x);
                (s, rel)
            }),
        ));
    }
    runs.push((
        "jacobi".into(),
        Box::new(|batch, max_iter| {
            let o = SolveOptions {
                batch,
                max_iter,
                ..jacobi_opts(CheckMode::Device, 1e-5)
            };
            let s = jacobi::solve(&engine, &r, &rb, None, &o, &mut ()).unwrap();
            let rel = true_rel(&r, &rb, &s.x);
            (s, rel)
        }),
    ));
    for (what, run) in &runs {
        let big = assert_device_mode_stops_exactly(|batch, max_iter| run(batch, max_iter).0, what);
        let j = big.report.iterations;
        // A run stopped by the iteration limit returns the x of its last iteration.
        let (short, rel) = run(4, j / 2);
        assert_eq!(short.report.reason, StopReason::MaxIterations, "{what}");
        assert!(
            (rel - short.report.relative_residual).abs() <= 1e-6 * rel,
            "{what}: the reported residual is that of the returned x"
        );
        if what == "jacobi" {
            // The Jacobi iteration tracks b − Ax itself: its last entry is the returned x's
            // (x_{k+1}, already computed by the sweep that finished ‖r_k‖, is not returned;
            // it would be ~3× smaller here).
            let tracked = short.report.history.last().unwrap() / short.report.b_norm;
            assert!(
                (tracked - rel).abs() <= 1e-3 * rel,
                "{tracked:e} vs {rel:e}"
            );
        }
    }
}

#[test]
fn trivial_systems_and_initial_guesses() {
    let Some(engine) = engine() else { return };
    let (a, _) = convdiff::<f64>(4);
    let ones = vec![1.0; a.nrows()];
    for mode in MODES {
        let mut cases: Vec<(GpuSolve<f64>, SolveOptions)> = VARIANTS
            .iter()
            .map(|&variant| {
                let o = bicg_opts(variant, mode, Precond::None, 1e-10);
                (bicg::solve as GpuSolve<f64>, o)
            })
            .collect();
        cases.push((jacobi::solve, jacobi_opts(mode, 1e-10)));
        for (solve, o) in cases {
            let tag = format!("{} {mode}", o.method);
            let (_, s) = assert_trivial_solves(solve, &engine, &a, &ones, &o, &tag);
            assert!(
                s.x.iter().all(|&v| v == 0.0) || s.x == ones,
                "{}",
                s.report.method
            );
        }
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let Some(engine) = engine() else { return };
    let (bicg_fails, jacobi_fails) = (
        failing(bicg::solve, &engine),
        failing(jacobi::solve, &engine),
    );
    // Zero diagonal: the Jacobi iteration and Jacobi-preconditioned BiCG refuse it.
    let zero_diag = from_rows(&[&[0.0, 1.0], &[1.0, 2.0]]);
    let o = jacobi_opts(CheckMode::Device, 1e-8);
    assert!(matches!(
        jacobi_fails(&zero_diag, &[1.0, 1.0], &o),
        KrylovError::ZeroDiagonal { row: 0 }
    ));
    let o = bicg_opts(Variant::Classical, CheckMode::Paper, Precond::Jacobi, 1e-8);
    assert!(matches!(
        bicg_fails(&zero_diag, &[1.0, 1.0], &o),
        KrylovError::ZeroDiagonal { row: 0 }
    ));
    // Without Jacobi BiCG runs on it (and solves it).
    let o = bicg_opts(Variant::Classical, CheckMode::Paper, Precond::None, 1e-8);
    assert!(
        bicg::solve(&engine, &zero_diag, &[1.0, 1.0], None, &o, &mut ())
            .unwrap()
            .report
            .converged
    );
    let (a, b) = convdiff::<f64>(3);
    assert!(matches!(
        bicg_fails(&a, &b[1..], &o),
        KrylovError::DimensionMismatch { .. }
    ));
    assert!(matches!(
        expect_err(bicg::solve(&engine, &a, &b, Some(&[0.0; 3]), &o, &mut ())),
        KrylovError::DimensionMismatch { .. }
    ));
    let wrong = SolveOptions {
        method: Method::Cg,
        ..o.clone()
    };
    assert!(matches!(
        bicg_fails(&a, &b, &wrong),
        KrylovError::InvalidOption(_)
    ));
    assert!(matches!(
        jacobi_fails(&a, &b, &wrong),
        KrylovError::InvalidOption(_)
    ));
}

#[test]
fn both_methods_run_through_solve_gpu() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff::<f64>(5);
    for method in [Method::Bicg, Method::Jacobi] {
        for variant in VARIANTS {
            assert!(on_gpu(method, variant));
            let o = SolveOptions {
                method,
                variant,
                rtol: 1e-8,
                ..Default::default()
            };
            let s = solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
            assert!(s.report.converged && s.report.method == method && s.report.device.is_gpu());
        }
    }
}

#[test]
fn f64_without_shader_f64_is_a_typed_error() {
    let Some(engine) = engine_without_f64() else {
        return;
    };
    let (a, b) = convdiff::<f64>(3);
    let o = bicg_opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8);
    let e = bicg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap_err();
    assert!(matches!(e, KrylovError::MissingFeature { .. }), "{e}");
    let o = jacobi_opts(CheckMode::Device, 1e-8);
    let e = jacobi::solve(&engine, &a, &b, None, &o, &mut ()).unwrap_err();
    assert!(matches!(e, KrylovError::MissingFeature { .. }), "{e}");
    // f32 still works there.
    let (a, b) = convdiff::<f32>(3);
    assert!(
        jacobi::solve(&engine, &a, &b, None, &o, &mut ())
            .unwrap()
            .report
            .converged
    );
}

/// rtol 3e-7 sits at the f32 floor of convection–diffusion: the tracked residual meets it
/// while the true one does not, so the driver restarts from x (up to 3 times). Through the
/// restarts the x returned is the x the report describes (Jacobi keeps x in a rotation of
/// three buffers; a restart continues from wherever x_k is) and convergence is never false.
#[test]
fn restarts_keep_report_and_solution_consistent() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff::<f32>(10);
    let rtol = 3e-7;
    for mode in MODES {
        let mut sols = vec![(
            "jacobi".to_string(),
            jacobi::solve(&engine, &a, &b, None, &jacobi_opts(mode, rtol), &mut ()).unwrap(),
        )];
        assert!(
            sols[0].1.report.restarts >= 1,
            "{mode}: the Jacobi run restarts"
        );
        for variant in VARIANTS {
            let o = bicg_opts(variant, mode, Precond::None, rtol);
            let s = bicg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
            sols.push((format!("bicg {variant}"), s));
        }
        for (what, s) in sols {
            let r = &s.report;
            let rel = true_rel(&a, &b, &s.x);
            let tag = format!("{what} {mode}: {}", r.reason_detail);
            assert!(
                (rel - r.relative_residual).abs() <= 1e-6 * rel,
                "{tag}: reported {:e}, x has {rel:e}",
                r.relative_residual
            );
            assert_eq!(r.history.len(), r.iterations + 1, "{tag}");
            if r.converged {
                assert!(rel <= rtol * 1.001, "{tag}");
            } else {
                assert_eq!(r.reason, StopReason::ResidualGap, "{tag}");
            }
        }
    }
}

/// The workgroup-memory reduction (adapters without subgroups) and grids of few workgroups
/// (grid-stride loops over many rows per thread) give the same results.
#[test]
fn reduction_paths_and_small_grids_agree() {
    let Some(ctx) = context() else { return };
    let (a, b) = convdiff::<f64>(9);
    let mut counts = Vec::new();
    for tuning in [
        Tuning::default(),
        with_subgroups(false),
        small_grid(Some(false)),
        large_workgroups(None),
    ] {
        let engine = Engine::with_tuning(ctx.clone(), tuning);
        let mut row = Vec::new();
        for (variant, mode) in variants_and_modes() {
            let o = bicg_opts(variant, mode, Precond::Jacobi, 1e-10);
            let s = bicg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
            assert!(s.report.converged, "{tuning:?} {variant} {mode}");
            assert!(true_rel(&a, &b, &s.x) <= 1e-10 * 1.001, "{tuning:?}");
            row.push(s.report.iterations);
        }
        for mode in MODES {
            let s =
                jacobi::solve(&engine, &a, &b, None, &jacobi_opts(mode, 1e-8), &mut ()).unwrap();
            assert!(s.report.converged, "{tuning:?} jacobi {mode}");
            row.push(s.report.iterations);
        }
        counts.push(row);
    }
    for row in &counts[1..] {
        for (x, y) in row.iter().zip(&counts[0]) {
            assert!(x.abs_diff(*y) <= 1, "{counts:?}");
        }
    }
}
