//! Classical vs pipelined formulations, and BiCG vs CG on an SPD matrix.

use krylov_wgpu::cpu;
use krylov_wgpu::solvers::{GramSchmidt, Method, Precond, SolveOptions, Variant};

use super::{cpu_solve, opts, poisson, rel_diff, rhs};

/// In f64 with rtol 1e-12 the two formulations take the same number of iterations (±1) and
/// agree to 1e-10 on an SPD matrix, for CG, BiCGStab and GMRES, with and without Jacobi.
#[test]
fn classical_and_pipelined_agree_f64() {
    let a = poisson::<f64>(12);
    let b = rhs(&a);
    for m in [Method::Cg, Method::Bicgstab, Method::Gmres] {
        for pc in [Precond::None, Precond::Jacobi] {
            let mk = |v| SolveOptions {
                restart: 200,
                gs: GramSchmidt::Cgs,
                ..opts(m, v, pc, 1e-12)
            };
            let c = cpu::solve(&a, &b, None, &mk(Variant::Classical)).unwrap();
            let p = cpu::solve(&a, &b, None, &mk(Variant::Pipelined)).unwrap();
            let tag = format!(
                "{m} {pc}: classical {} / pipelined {}",
                c.report.reason_detail, p.report.reason_detail
            );
            assert!(c.report.converged && p.report.converged, "{tag}");
            assert!(
                c.report.iterations.abs_diff(p.report.iterations) <= 1,
                "{tag}"
            );
            let d = rel_diff(&p.x, &c.x);
            assert!(d <= 1e-10, "{tag}: solutions differ by {d:.2e}");
            // The residual histories agree too, step by step, while far above round-off.
            for (hc, hp) in c.report.history.iter().zip(&p.report.history).take(10) {
                assert!((hc - hp).abs() <= 1e-6 * hc, "{tag}: history {hc} vs {hp}");
            }
        }
    }
}

/// BiCG with r̃0 = r0 on an SPD matrix generates the CG iterates.
#[test]
fn bicg_on_spd_matches_cg() {
    let a = poisson::<f64>(10);
    let b = rhs(&a);
    for pc in [Precond::None, Precond::Jacobi] {
        let cg = cpu_solve(&a, &b, &opts(Method::Cg, Variant::Classical, pc, 1e-10));
        let bi = cpu_solve(&a, &b, &opts(Method::Bicg, Variant::Classical, pc, 1e-10));
        assert!(cg.report.converged && bi.report.converged);
        assert!(cg.report.iterations.abs_diff(bi.report.iterations) <= 1);
        assert!(rel_diff(&bi.x, &cg.x) < 1e-8);
    }
}
