//! f32: convergence with a loose tolerance, no false convergence below what f32 reaches,
//! and the shared matrices.

use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::{Method, Precond, SolveOptions, StopReason, Variant};
use krylov_wgpu::{Precision, Scalar};

use super::common::problems::{cast, load};
use super::{
    both_kinds, combos, convdiff, cpu_solve, load_rhs, opts, rel_diff, rhs, solve_checked, tag,
    x_star,
};

#[test]
fn f32_converges_with_a_loose_tolerance() {
    let rtol = 1e-5;
    for (spd, a, b) in both_kinds::<f32>(16) {
        for o in combos(spd, rtol) {
            let o = SolveOptions {
                max_iter: 5000,
                ..o
            };
            let s = solve_checked(&a, &b, &o);
            assert_eq!(s.report.precision, Precision::F32);
            assert!(
                s.report.converged,
                "{}: {}",
                tag(&o),
                s.report.reason_detail
            );
            let x: Vec<f64> = s.x.iter().map(|v| v.as_f64()).collect();
            let err = rel_diff(&x, &x_star(a.nrows()));
            assert!(err < 1e-3, "{}: error {err:.2e}", tag(&o));
        }
    }
}

/// With an rtol below what f32 can reach, no method claims convergence.
#[test]
fn f32_never_claims_an_unreached_tolerance() {
    let a: Csr<f32> = convdiff(12);
    let b = rhs(&a);
    let rtol = 1e-10;
    for o in combos(false, rtol) {
        let o = SolveOptions { max_iter: 600, ..o };
        let s = solve_checked(&a, &b, &o);
        let tag = tag(&o);
        assert!(!s.report.converged, "{tag}: {}", s.report.reason_detail);
        assert!(
            matches!(
                s.report.reason,
                StopReason::ResidualGap
                    | StopReason::MaxIterations
                    | StopReason::Breakdown { .. }
                    | StopReason::NonFinite { .. }
            ),
            "{tag}: {}",
            s.report.reason_detail
        );
    }
}

/// f32 on shared matrices: converges where f32 can reach rtol = 1e-5; elsewhere (sherman4:
/// the f32 recurrences reach the tolerance but the true residual stays near 2e-5 to 9e-5)
/// the report says so instead of claiming convergence.
#[test]
fn f32_shared_matrices() {
    let rtol = 1e-5;
    let cases: &[(&str, Method, Precond)] = &[
        ("mesh1e1", Method::Cg, Precond::None),
        ("nos6", Method::Cg, Precond::Jacobi),
        ("Trefethen_2000", Method::Cg, Precond::Jacobi),
        ("jpwh_991", Method::Bicgstab, Precond::None),
        ("jpwh_991", Method::Bicgstab, Precond::Jacobi),
        ("jpwh_991", Method::Gmres, Precond::None),
        ("jpwh_991", Method::Gmres, Precond::Jacobi),
        ("add32", Method::Bicgstab, Precond::Jacobi),
        ("add32", Method::Gmres, Precond::None),
        ("pde2961", Method::Gmres, Precond::Jacobi),
    ];
    for &(name, m, pc) in cases {
        let a64 = load(name);
        let (a, b) = cast::<f32>(&a64, &load_rhs(name, &a64));
        for v in [Variant::Classical, Variant::Pipelined] {
            let o = opts(m, v, pc, rtol);
            let s = solve_checked(&a, &b, &o);
            assert!(
                s.report.converged,
                "{name} {m} {v} {pc}: {}",
                s.report.reason_detail
            );
        }
    }
    // sherman4 in f32: every method stops with an honest reason.
    let a64 = load("sherman4");
    let (a, b) = cast::<f32>(&a64, &load_rhs("sherman4", &a64));
    for m in [Method::Bicgstab, Method::Gmres] {
        for v in [Variant::Classical, Variant::Pipelined] {
            let o = opts(m, v, Precond::Jacobi, rtol);
            let s = solve_checked(&a, &b, &o);
            if !s.report.converged {
                assert!(
                    s.report.relative_residual > rtol,
                    "{}",
                    s.report.reason_detail
                );
            }
        }
    }
    // Pipelined CG needs ⟨Ap, Ap⟩, which overflows f32 on bcsstk01 (entries up to 1e9): the
    // solve balances rows and columns and runs again (`cpu::recovery`), and says so; as given
    // (balancing already asked for, so no second attempt) it is the balanced solve alone.
    let a64 = load("bcsstk01");
    let (a, b) = cast::<f32>(&a64, &rhs(&a64));
    let pipelined = opts(Method::Cg, Variant::Pipelined, Precond::None, rtol);
    let s = cpu_solve(&a, &b, &pipelined);
    assert!(s.report.converged, "{}", s.report.reason_detail);
    assert!(
        s.report.restart_log[0].starts_with("non-finite <Ap, Ap> at iteration"),
        "{:?}",
        s.report.restart_log
    );
    assert!(s.report.equilibration.is_some());
    let s = cpu_solve(
        &a,
        &b,
        &opts(Method::Cg, Variant::Classical, Precond::None, rtol),
    );
    assert!(s.report.converged, "{}", s.report.reason_detail);
}
