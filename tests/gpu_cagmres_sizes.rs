//! CA-GMRES on systems smaller than one restart cycle: the cycle shrinks to what fits
//! (`CaOptions::fitted_to`), as GMRES's does, instead of refusing the solve.

mod common;

use common::problems::{load, rhs};
use krylov_wgpu::solvers::{Basis, Method, SolveOptions, Tsqr};

fn opts(s: usize, m: usize, basis: Basis, tsqr: Tsqr, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::CaGmres,
        s_step: s,
        restart: m,
        basis,
        tsqr,
        rtol,
        max_iter: 5000,
        ..Default::default()
    }
}

#[test]
fn a_system_smaller_than_a_cycle_runs_the_longest_cycle_that_fits() {
    let Some(engine) = common::engine() else {
        return;
    };
    // pores_1 has n = 30: CA-GMRES(5, 30) needs 31 basis vectors. It was refused; it now runs
    // as CA(1, 29) — CA(5, 25) restarts before convergence and stagnates — and says so.
    let a = load("pores_1");
    let b = rhs(&a);
    let o = opts(5, 30, Basis::Newton, Tsqr::CholQr2, 1e-6);
    let sol = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
    assert!(sol.report.converged, "{}", sol.report.reason_detail);
    let true_rel = krylov_wgpu::cpu::true_relative_residual(&a, &b, &sol.x);
    assert!(true_rel <= 1e-6 * 1.01, "{true_rel:e}");
    assert!(
        sol.report
            .notes
            .iter()
            .any(|n| n.contains("with n = 30 it ran as CA-GMRES(1, 29)")),
        "{:?}",
        sol.report.notes
    );
    let cpu = krylov_wgpu::cpu::solve(&a, &b, None, &o).unwrap();
    assert!(cpu.report.converged);
    assert!(sol.report.iterations.abs_diff(cpu.report.iterations) <= 3);
}
