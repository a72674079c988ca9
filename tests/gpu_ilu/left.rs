//! Left preconditioning of GMRES on the GPU against the CPU reference: the cycles run on
//! M⁻¹A and monitor ‖M⁻¹(b − Ax)‖ against τ_L = max(rtol·‖M⁻¹b‖, atol); the true residual
//! guards every claim (tightening τ_L and resuming, at most three times). Same iteration
//! counts within 5 %, same guard restarts, converged by the true residual.

use super::common;
use common::solve::assert_converged;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::random_nonsymmetric;
use krylov_wgpu::solvers::{self, CheckMode, Method, Precond, Side, SolveOptions, Variant};
use krylov_wgpu::{Scalar, cpu};

fn left(precond: Precond, mode: CheckMode) -> SolveOptions {
    SolveOptions {
        method: Method::Gmres,
        precond,
        side: Side::Left,
        check_mode: mode,
        rtol: 1e-8,
        max_iter: 2000,
        ..Default::default()
    }
}

/// `a` with row i multiplied by 10^((i mod 7) − 3): badly row-scaled, which left Jacobi
/// undoes (D⁻¹A has unit-size rows again) and right Jacobi (A D⁻¹ keeps it) does not.
fn row_scaled(a: &Csr<f64>) -> Csr<f64> {
    a.scale_rows(|i| 10f64.powi((i % 7) as i32 - 3))
}

fn same_as_cpu<T: Scalar>(a: &Csr<T>, b: &[T], o: &SolveOptions, tag: &str) -> usize {
    let Some(engine) = common::engine() else {
        return 0;
    };
    let gpu = solvers::solve_gpu(&engine, a, b, None, o, &mut ()).unwrap();
    let cpu = cpu::solve(a, b, None, o).unwrap();
    assert_converged(&gpu, a, b, o.rtol, &format!("{tag} GPU"));
    assert_converged(&cpu, a, b, o.rtol, &format!("{tag} CPU"));
    let (g, c) = (gpu.report.iterations, cpu.report.iterations);
    let slack = (c as f64 * 0.05).ceil().max(1.0) as usize;
    assert!(
        g.abs_diff(c) <= slack,
        "{tag}: GPU {g} vs CPU {c} iterations"
    );
    assert_eq!(
        gpu.report.restarts, cpu.report.restarts,
        "{tag}: guard restarts"
    );
    assert!(
        gpu.report.reason_detail.contains("left-preconditioned"),
        "{tag}: {}",
        gpu.report.reason_detail
    );
    // The fused pipelined kernels scale on the right only: a left solve runs classical.
    assert_eq!(gpu.report.variant, Variant::Classical, "{tag}");
    g
}

#[test]
fn left_gmres_matches_the_cpu_with_jacobi_and_ilu0() {
    for name in ["sherman4", "add32"] {
        let (a, b) = common::problems::shipped_system(name, &["sherman4"]);
        for precond in [Precond::Jacobi, Precond::Ilu0] {
            for mode in [CheckMode::Device, CheckMode::Paper] {
                let tag = format!("{name} left {precond} {mode}");
                same_as_cpu(&a, &b, &left(precond, mode), &tag);
            }
        }
    }
}

#[test]
fn left_jacobi_undoes_a_row_scaling_that_defeats_right_jacobi() {
    // The CPU reference's case (cpu::gmres tests): GMRES(5) on a row-scaled random matrix.
    let a = row_scaled(&random_nonsymmetric::<f64>(300, 6, 7));
    let b: Vec<f64> = (0..a.nrows()).map(|i| 1.0 + (i % 5) as f64).collect();
    let o = SolveOptions {
        restart: 5,
        ..left(Precond::Jacobi, CheckMode::Device)
    };
    let steps = same_as_cpu(&a, &b, &o, "row-scaled left jacobi");
    let Some(engine) = common::engine() else {
        return;
    };
    let right = SolveOptions {
        side: Side::Right,
        max_iter: 5 * steps.max(1),
        ..o
    };
    let r = solvers::solve_gpu(&engine, &a, &b, None, &right, &mut ()).unwrap();
    assert!(
        !r.report.converged,
        "right Jacobi: {} in {} iterations against {steps} on the left",
        r.report.reason, r.report.iterations
    );
}
