//! The shared SuiteSparse matrices: CG on the SPD ones, the nonsymmetric methods where they
//! converge, the honest report of known failures, and a survey of every combination.

use krylov_wgpu::Precision;
use krylov_wgpu::cpu::{self, dense};
use krylov_wgpu::solvers::{Method, Precond, SolveOptions, StopReason, Variant};

use super::common::problems::load;
use super::{cpu_solve, load_rhs, opts, rel_diff, rhs, solve_checked};

/// CG, both variants, with and without Jacobi, on the shared SPD matrices.
#[test]
fn shared_spd_matrices_cg() {
    let rtol = 1e-8;
    for name in ["bcsstk01", "494_bus", "nos6", "mesh1e1", "Trefethen_2000"] {
        let a = load(name);
        assert!(a.is_symmetric(1e-12), "{name}");
        let b = load_rhs(name, &a);
        let x_lu = (a.nrows() <= 700).then(|| dense::lu_solve(&a, &b).unwrap());
        let kappa = (a.nrows() <= 100).then(|| dense::condition_number_1(&a).unwrap());
        let mut iters = Vec::new();
        for v in [Variant::Classical, Variant::Pipelined] {
            for pc in [Precond::None, Precond::Jacobi] {
                let o = opts(Method::Cg, v, pc, rtol);
                let s = solve_checked(&a, &b, &o);
                let tag = format!("{name} {v} {pc}: {}", s.report.reason_detail);
                assert!(s.report.converged, "{tag}");
                assert!(s.report.relative_residual <= rtol, "{tag}");
                if let (Some(x_lu), Some(k)) = (&x_lu, kappa) {
                    assert!(rel_diff(&s.x, x_lu) <= 10.0 * k * rtol, "{tag}");
                }
                iters.push((v, pc, s.report.iterations));
            }
        }
        // Jacobi never hurts CG on these matrices; it helps a lot on most.
        let it = |v, pc| iters.iter().find(|e| e.0 == v && e.1 == pc).unwrap().2;
        for v in [Variant::Classical, Variant::Pipelined] {
            assert!(
                it(v, Precond::Jacobi) <= it(v, Precond::None),
                "{name}: {iters:?}"
            );
        }
    }
}

/// GMRES, BiCGStab and BiCG on the shared nonsymmetric matrices with settings that converge,
/// and the honest report of those that do not.
#[test]
fn shared_nonsymmetric_matrices() {
    let rtol = 1e-8;
    // (matrix, method, variant, precond, restart)
    let converging: &[(&str, Method, Precond, usize)] = &[
        ("pores_1", Method::Gmres, Precond::None, 30),
        ("pores_1", Method::Gmres, Precond::Jacobi, 30),
        ("pores_1", Method::Bicgstab, Precond::None, 30),
        ("pores_1", Method::Bicgstab, Precond::Jacobi, 30),
        ("pores_1", Method::Bicg, Precond::Jacobi, 30),
        ("jpwh_991", Method::Gmres, Precond::None, 30),
        ("jpwh_991", Method::Gmres, Precond::Jacobi, 30),
        ("jpwh_991", Method::Bicgstab, Precond::None, 30),
        ("jpwh_991", Method::Bicgstab, Precond::Jacobi, 30),
        ("sherman4", Method::Gmres, Precond::Jacobi, 50),
        ("sherman4", Method::Bicgstab, Precond::None, 30),
        ("sherman4", Method::Bicgstab, Precond::Jacobi, 30),
        ("sherman4", Method::Bicg, Precond::Jacobi, 30),
        ("pde2961", Method::Gmres, Precond::Jacobi, 30),
        ("pde2961", Method::Bicgstab, Precond::None, 30),
        ("pde2961", Method::Bicgstab, Precond::Jacobi, 30),
        ("add32", Method::Gmres, Precond::None, 30),
        ("add32", Method::Gmres, Precond::Jacobi, 30),
        ("add32", Method::Bicgstab, Precond::None, 30),
        ("add32", Method::Bicg, Precond::None, 30),
    ];
    for &(name, m, pc, restart) in converging {
        let a = load(name);
        assert!(!a.is_symmetric(1e-12), "{name}");
        let b = load_rhs(name, &a);
        let variants: &[Variant] = if m == Method::Bicg {
            &[Variant::Classical]
        } else {
            Variant::of(m)
        };
        for &v in variants {
            let o = SolveOptions {
                restart,
                max_iter: 5000,
                ..opts(m, v, pc, rtol)
            };
            let s = solve_checked(&a, &b, &o);
            let tag = format!(
                "{name} {m} {v} {pc} m={restart}: {}",
                s.report.reason_detail
            );
            assert!(s.report.converged, "{tag}");
            assert!(s.report.relative_residual <= rtol, "{tag}");
        }
    }
}

/// Known failures on the shared matrices are reported by name, never as convergence.
#[test]
fn shared_matrices_failures_are_honest() {
    // jpwh_991 with b = A·1: r0 = b is a left eigenvector of A (constant column sums), so
    // ⟨r1, r0*⟩ = 0 exactly after one BiCGStab step, and BiCG's r̃1 = 0. The breakdown is
    // a reason to restart (r0* := r from the new x), not to stop: both then converge, and
    // the restart is logged by name.
    let a = load("jpwh_991");
    let b = a.mul_vec(&vec![1.0; a.nrows()]).unwrap();
    for (m, v) in [
        (Method::Bicgstab, Variant::Classical),
        (Method::Bicgstab, Variant::Pipelined),
        (Method::Bicg, Variant::Classical),
    ] {
        let s = cpu_solve(&a, &b, &opts(m, v, Precond::None, 1e-8));
        let r = &s.report;
        assert!(r.converged, "{m} {v}: {}", r.reason_detail);
        assert!(r.restarts >= 1, "{m} {v}");
        assert!(
            r.restart_log[0].starts_with("breakdown of <r, r")
                && r.restart_log[0].contains("at iteration 1:"),
            "{m} {v}: {:?}",
            r.restart_log
        );
    }
    // west0479 unpreconditioned: GMRES(30) stagnates, BiCGStab does not converge either.
    let a = load("west0479");
    let b = rhs(&a);
    for m in [Method::Gmres, Method::Bicgstab, Method::Bicg] {
        let o = SolveOptions {
            max_iter: 300,
            ..opts(m, Variant::Pipelined, Precond::None, 1e-8)
        };
        let s = solve_checked(&a, &b, &o);
        assert!(!s.report.converged, "{m}: {}", s.report.reason_detail);
        assert!(s.report.relative_residual > 1e-8);
    }
}

/// Every method × variant × preconditioner × precision on every shared matrix: whatever the
/// outcome, a run that says `converged` has a true residual within the tolerance, and a run
/// that does not names its reason (never a silent failure or a false convergence). Run with
/// `--nocapture` to see the table.
#[test]
fn survey_shared_matrices_never_claims_false_convergence() {
    let names = [
        "bcsstk01",
        "494_bus",
        "nos6",
        "mesh1e1",
        "Trefethen_2000",
        "pores_1",
        "jpwh_991",
        "sherman4",
        "pde2961",
        "add32",
        "west0479",
    ];
    for name in names {
        let a = load(name);
        let b = load_rhs(name, &a);
        let spd = a.is_symmetric(1e-12);
        let methods: &[Method] = if spd {
            &[Method::Cg, Method::Bicgstab, Method::Gmres]
        } else {
            &[Method::Bicgstab, Method::Gmres, Method::Bicg]
        };
        for &m in methods {
            for &v in Variant::of(m) {
                for &pc in Precond::ALL.iter().filter(|&&p| spd || p != Precond::Ic0) {
                    for restart in [30, 100] {
                        if m != Method::Gmres && restart != 30 {
                            continue;
                        }
                        for prec in [Precision::F64, Precision::F32] {
                            let rtol = if prec == Precision::F64 { 1e-8 } else { 1e-5 };
                            let o = SolveOptions {
                                restart,
                                max_iter: 5_000,
                                ..opts(m, v, pc, rtol)
                            };
                            let t = std::time::Instant::now();
                            let r = if prec == Precision::F64 {
                                cpu::solve(&a, &b, None, &o).map(|s| s.report)
                            } else {
                                let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
                                cpu::solve(&a.cast::<f32>().unwrap(), &b32, None, &o)
                                    .map(|s| s.report)
                            };
                            if let Ok(r) = &r {
                                assert!(
                                    !r.converged
                                        || r.relative_residual
                                            <= rtol * (1.0 + cpu::TRUE_RESIDUAL_SLACK),
                                    "{name} {prec} {m} {v} {pc}: false convergence ({:e})",
                                    r.relative_residual
                                );
                                assert_eq!(r.converged, r.reason == StopReason::Converged);
                                assert_eq!(r.history.len(), r.iterations + 1, "{name} {m} {v}");
                            }
                            match r {
                                Ok(r) => println!(
                                    "{name:15} {prec} {m:8} {v:9} {pc:6} m={restart:3} rtol={rtol:e}: \
                                     {:14} it={:6} true={:.2e} {:.2}s | {}",
                                    r.reason.name(),
                                    r.iterations,
                                    r.relative_residual,
                                    t.elapsed().as_secs_f64(),
                                    r.reason_detail
                                ),
                                Err(e) => {
                                    println!("{name:15} {prec} {m:8} {v:9} {pc:6}: error {e}")
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
