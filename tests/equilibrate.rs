//! `--equilibrate` (issue 17, item 5): the method runs on the balanced D_r·A·D_c, x comes
//! back unscaled, and convergence is claimed only when the original system's true residual
//! meets the tolerance (the balanced tolerance is tightened when it does not) — CPU
//! reference and GPU alike.

#[path = "common/mod.rs"]
mod common;

use common::solve::{assert_converged, true_rel};
use krylov_wgpu::cpu;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::equilibrate::Balance;
use krylov_wgpu::matrix::generators::{poisson_2d_fd, reservoir_3d};
use krylov_wgpu::solvers::{self, Method, Precond, SolveOptions};

/// `a` with rows and columns scaled over `decades` decades (a system in mixed units).
fn badly_scaled(a: &Csr<f64>, decades: i32, symmetric: bool) -> Csr<f64> {
    let n = a.nrows();
    let rows: Vec<f64> = (0..n)
        .map(|i| 10f64.powi((i as i32 * 7) % (decades + 1) - decades / 2))
        .collect();
    let cols = if symmetric {
        rows.clone()
    } else {
        (0..n)
            .map(|i| 10f64.powi((i as i32 * 3) % (decades / 2 + 1)))
            .collect()
    };
    Balance { rows, cols }.apply(a)
}

fn opts(method: Method, equilibrate: bool) -> SolveOptions {
    SolveOptions {
        method,
        rtol: 1e-8,
        max_iter: 20_000,
        equilibrate,
        ..Default::default()
    }
}

#[test]
fn balancing_rescues_badly_scaled_systems_and_never_claims_a_false_convergence() {
    let a = badly_scaled(&common::problems::load("sherman4"), 8, false);
    let b = common::problems::rhs(&a);
    for method in [Method::Gmres, Method::Bicgstab] {
        let plain = cpu::solve(&a, &b, None, &opts(method, false)).unwrap();
        let bal = cpu::solve(&a, &b, None, &opts(method, true)).unwrap();
        let tag = format!("sherman4 scaled, {method}");
        assert_converged(&bal, &a, &b, 1e-8, &format!("{tag} balanced"));
        assert!(
            !plain.report.converged || bal.report.iterations < plain.report.iterations,
            "{tag}: balanced {} vs plain {} iterations",
            bal.report.iterations,
            plain.report.iterations
        );
        let what = bal.report.equilibration.as_deref().unwrap();
        assert!(what.contains("balanced"), "{tag}: {what}");
        assert!(plain.report.equilibration.is_none());
        // The solution itself, unscaled: against x* (b = A x*). The scaled matrix is
        // ill-conditioned, so rtol 1e-8 bounds the error only loosely; a wrong unscaling
        // would be off by whole decades.
        let xs = common::problems::x_star(a.nrows());
        let err = bal
            .x
            .iter()
            .zip(&xs)
            .map(|(x, s)| ((x - s) / s).abs())
            .fold(0.0, f64::max);
        assert!(err < 0.1, "{tag}: max relative error {err}");
    }
}

#[test]
fn cg_gets_a_symmetric_balancing_and_converges() {
    let a = badly_scaled(&poisson_2d_fd::<f64>(20), 6, true);
    assert!(a.is_symmetric(0.0));
    let b = common::problems::rhs(&a);
    let bal = cpu::solve(&a, &b, None, &opts(Method::Cg, true)).unwrap();
    assert_converged(&bal, &a, &b, 1e-8, "poisson scaled, CG balanced");
    // D·A·D with one D: the same scale spread for rows and columns.
    let what = bal.report.equilibration.as_deref().unwrap();
    let spreads: Vec<&str> = what.split("spread ").skip(1).collect();
    assert!(what.contains("column scales"), "{what}");
    assert_eq!(
        what.split("row scales spread ")
            .nth(1)
            .unwrap()
            .split(',')
            .next(),
        what.split("column scales ")
            .nth(1)
            .unwrap()
            .split(')')
            .next(),
        "{what} {spreads:?}"
    );
}

#[test]
fn every_claim_is_checked_on_the_original_system() {
    // Across methods, scalings and tolerances: a converged report always has the original
    // system's true residual within rtol, and the report says how often it tightened.
    let base = reservoir_3d::<f64>(12, 10, 3, 5);
    for decades in [0, 6, 12] {
        let a = badly_scaled(&base, decades, false);
        let b = common::problems::rhs(&a);
        for method in [Method::Gmres, Method::Bicgstab, Method::Bicg] {
            for rtol in [1e-6, 1e-10] {
                let o = SolveOptions {
                    rtol,
                    precond: Precond::Jacobi,
                    ..opts(method, true)
                };
                let s = cpu::solve(&a, &b, None, &o).unwrap();
                let tag = format!("{decades} decades, {method}, rtol {rtol:e}");
                let what = s.report.equilibration.as_deref().unwrap();
                assert!(what.contains("tightening"), "{tag}: {what}");
                if s.report.converged {
                    let rel = true_rel(&a, &b, &s.x);
                    assert!(rel <= rtol * 1.001, "{tag}: true residual {rel:e}");
                    assert!((s.report.relative_residual - rel).abs() <= 1e-3 * rel + 1e-300);
                }
                assert_eq!(s.report.history.len(), s.report.iterations + 1, "{tag}");
            }
        }
    }
}

#[test]
fn gpu_balanced_solves_agree_with_the_cpu() {
    let Some(engine) = common::engine().filter(|e| e.context().summary.shader_f64) else {
        return;
    };
    let a = badly_scaled(&common::problems::load("sherman4"), 8, false);
    let b = common::problems::rhs(&a);
    for method in [Method::Gmres, Method::Bicgstab] {
        let o = opts(method, true);
        let host = cpu::solve(&a, &b, None, &o).unwrap();
        let gpu = solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        let tag = format!("{method}");
        assert_converged(&gpu, &a, &b, o.rtol, &format!("{tag} GPU"));
        assert_eq!(gpu.report.equilibration, host.report.equilibration, "{tag}");
        let (g, h) = (gpu.report.iterations as f64, host.report.iterations as f64);
        assert!((g - h).abs() <= 0.05 * h + 2.0, "{tag}: GPU {g} vs CPU {h}");
    }
}
