//! The dense LU oracle, every combination against it, the per-method entry points and the
//! library's generators.

use krylov_wgpu::KrylovError;
use krylov_wgpu::cpu::{self, dense};
use krylov_wgpu::matrix::{Coo, Csr, generators};
use krylov_wgpu::solvers::{GramSchmidt, Method, Precond, Solution, SolveOptions, Variant};

use super::{
    both_kinds, combos, convdiff, cpu_solve, opts, poisson, rel_diff, rhs, solve_checked, tag,
    x_star,
};

#[test]
fn dense_lu_oracle() {
    let a = convdiff::<f64>(5);
    let xs = x_star(a.nrows());
    let b = a.mul_vec(&xs).unwrap();
    let x = dense::lu_solve(&a, &b).unwrap();
    assert!(rel_diff(&x, &xs) < 1e-14);
    // Singular: a zero row, and a rank-deficient 3×3.
    let mut coo = Coo::<f64>::new(2, 2);
    coo.push(0, 0, 1.0).unwrap();
    let sing = coo.to_csr().unwrap();
    assert!(matches!(
        dense::lu_solve(&sing, &[1.0, 1.0]),
        Err(KrylovError::InvalidMatrix(m)) if m.contains("singular")
    ));
    let r = Csr::<f64>::new(
        3,
        3,
        vec![0, 3, 6, 9],
        vec![0, 1, 2, 0, 1, 2, 0, 1, 2],
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    )
    .unwrap();
    assert!(dense::lu_solve(&r, &[1.0, 2.0, 3.0]).is_err());
    assert!(dense::lu_solve(&a, &[1.0]).is_err());
    let k = dense::condition_number_1(&Csr::<f64>::identity(4)).unwrap();
    assert!((k - 1.0).abs() < 1e-15);
}

/// Every method × variant × preconditioner (× Gram–Schmidt for classical GMRES) reaches the
/// LU solution to within what rtol and the condition number allow.
#[test]
fn every_combination_matches_dense_lu() {
    let rtol = 1e-10;
    for (spd, a, b) in both_kinds::<f64>(8) {
        let x_lu = dense::lu_solve(&a, &b).unwrap();
        let kappa = dense::condition_number_1(&a).unwrap();
        for o in combos(spd, rtol) {
            let o = SolveOptions {
                max_iter: 5000,
                ..o
            };
            let sol = solve_checked(&a, &b, &o);
            let tag = format!("{}: {}", tag(&o), sol.report.reason_detail);
            assert!(sol.report.converged, "{tag}");
            assert!(sol.report.relative_residual <= rtol, "{tag}");
            let err = rel_diff(&sol.x, &x_lu);
            assert!(
                err <= 10.0 * kappa * rtol,
                "{tag}: error {err:.2e}, κ₁ {kappa:.1e}"
            );
            assert_eq!(sol.report.variant, o.variant);
        }
    }
}

/// The per-method entry points are the ones `solve` dispatches to.
#[test]
fn direct_entry_points() {
    let a = convdiff::<f64>(6);
    let b = rhs(&a);
    let o = SolveOptions {
        rtol: 1e-10,
        gs: GramSchmidt::Mgs,
        ..Default::default()
    };
    type Entry =
        fn(&Csr<f64>, &[f64], Option<&[f64]>, &SolveOptions) -> krylov_wgpu::Result<Solution<f64>>;
    let entries: [(Entry, Method, Variant); 7] = [
        (
            cpu::bicgstab::classical,
            Method::Bicgstab,
            Variant::Classical,
        ),
        (
            cpu::bicgstab::pipelined,
            Method::Bicgstab,
            Variant::Pipelined,
        ),
        (cpu::gmres::classical, Method::Gmres, Variant::Classical),
        (cpu::gmres::pipelined, Method::Gmres, Variant::Pipelined),
        (cpu::bicg::bicg, Method::Bicg, Variant::Classical),
        (
            cpu::jacobi::jacobi_iteration,
            Method::Jacobi,
            Variant::Classical,
        ),
        (cpu::cg::classical_cg, Method::Cg, Variant::Classical),
    ];
    for (f, m, v) in entries {
        let s = f(&a, &b, None, &o).unwrap();
        assert_eq!((s.report.method, s.report.variant), (m, v));
        if m == Method::Cg {
            continue; // CG on a nonsymmetric matrix: whatever happens, it is reported.
        }
        let via = cpu::solve(
            &a,
            &b,
            None,
            &SolveOptions {
                method: m,
                variant: v,
                ..o.clone()
            },
        )
        .unwrap();
        assert!(s.report.converged, "{m} {v}: {}", s.report.reason_detail);
        assert_eq!(s.x, via.x);
        assert_eq!(s.report.iterations, via.report.iterations);
    }
    let spd = poisson::<f64>(6);
    let b = rhs(&spd);
    let s = cpu::cg::pipelined_cg(&spd, &b, None, &o).unwrap();
    assert!(s.report.converged);
    assert_eq!(s.report.variant, Variant::Pipelined);
}

/// Generated problems from the library's generators.
#[test]
fn generated_problems() {
    let a = generators::poisson_2d_fd::<f64>(10);
    let b = rhs(&a);
    let s = cpu_solve(
        &a,
        &b,
        &opts(Method::Cg, Variant::Pipelined, Precond::None, 1e-10),
    );
    assert!(s.report.converged);
    let a = generators::random_nonsymmetric::<f64>(300, 7, 42);
    let b = rhs(&a);
    for m in [
        Method::Bicgstab,
        Method::Gmres,
        Method::Bicg,
        Method::Jacobi,
    ] {
        for v in [Variant::Classical, Variant::Pipelined] {
            let s = cpu_solve(&a, &b, &opts(m, v, Precond::Jacobi, 1e-10));
            assert!(s.report.converged, "{m} {v}: {}", s.report.reason_detail);
            assert!(rel_diff(&s.x, &x_star(300)) < 1e-8);
        }
    }
}
