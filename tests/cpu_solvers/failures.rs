//! Failures and edge cases: indefinite matrices, zero diagonals, singular systems, divergence,
//! bad input and overflow, all reported by name.

use krylov_wgpu::KrylovError;
use krylov_wgpu::cpu;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::{Method, Precond, Reorder, SolveOptions, StopReason, Variant};

use super::common::problems::{load, neumann_laplacian_2d, singular_diag};
use super::{
    all_combos, convdiff, cpu_solve, opts, poisson, rel_diff, rhs, solve_checked, stencil_2d, tag,
    x_star,
};

#[test]
fn cg_on_symmetric_indefinite_reports_not_spd() {
    // Poisson shifted by −2: eigenvalues in (−2, 6), symmetric indefinite, diagonal 2 > 0.
    let a = stencil_2d::<f64>(10, 2.0, 0.0);
    let b = rhs(&a);
    for v in [Variant::Classical, Variant::Pipelined] {
        for pc in [Precond::None, Precond::Jacobi] {
            let o = opts(Method::Cg, v, pc, 1e-10);
            let s = solve_checked(&a, &b, &o);
            assert_eq!(
                s.report.reason,
                StopReason::NotSpd,
                "{v} {pc}: {}",
                s.report.reason_detail
            );
            assert!(!s.report.converged);
        }
    }
    // diag(1, −2) and b = (1, 1): ⟨p0, Ap0⟩ = −1 at once.
    let a = Csr::<f64>::new(2, 2, vec![0, 1, 2], vec![0, 1], vec![1.0, -2.0]).unwrap();
    for v in [Variant::Classical, Variant::Pipelined] {
        let s = cpu_solve(&a, &[1.0, 1.0], &opts(Method::Cg, v, Precond::None, 1e-10));
        assert_eq!(s.report.reason, StopReason::NotSpd);
        assert_eq!(s.report.iterations, 0);
    }
    // A negative diagonal makes the Jacobi preconditioner indefinite: ⟨r0, D⁻¹r0⟩ < 0.
    let a = Csr::<f64>::new(
        2,
        2,
        vec![0, 2, 4],
        vec![0, 1, 0, 1],
        vec![1.0, 0.1, 0.1, -2.0],
    )
    .unwrap();
    for v in [Variant::Classical, Variant::Pipelined] {
        let s = cpu_solve(
            &a,
            &[1.0, 2.0],
            &opts(Method::Cg, v, Precond::Jacobi, 1e-10),
        );
        assert_eq!(
            s.report.reason,
            StopReason::NotSpd,
            "{}",
            s.report.reason_detail
        );
        assert_eq!(s.report.iterations, 0);
    }
}

#[test]
fn jacobi_on_zero_diagonal_is_an_error() {
    let a = load("west0479");
    let b = rhs(&a);
    for &m in Method::ALL {
        let pc = if m == Method::Jacobi {
            Precond::None
        } else {
            Precond::Jacobi
        };
        // Without reordering every method refuses Jacobi on a zero diagonal; under the
        // default `auto` the rows of a non-CG solve are permuted first (tests/cpu_reorder.rs),
        // so only CG and the Jacobi iteration still refuse.
        let o = opts(m, Variant::Pipelined, pc, 1e-8);
        let none = SolveOptions {
            reorder: Reorder::None,
            ..o.clone()
        };
        let e = cpu::solve(&a, &b, None, &none).unwrap_err();
        assert!(matches!(e, KrylovError::ZeroDiagonal { .. }), "{m}: {e}");
        if matches!(m, Method::Cg | Method::Jacobi) {
            let e = cpu::solve(&a, &b, None, &o).unwrap_err();
            assert!(
                matches!(e, KrylovError::ZeroDiagonal { .. }),
                "{m} auto: {e}"
            );
        }
    }
}

/// Singular systems (b not in the range): never reported as converged.
#[test]
fn singular_matrix_never_converges() {
    // diag(1, 0), b = (1, 1): the second equation reads 0 = 1.
    let a = singular_diag();
    let b = [1.0, 1.0];
    let expect = |m: Method, v: Variant, want: &str| {
        let o = SolveOptions {
            max_iter: 50,
            ..opts(m, v, Precond::None, 1e-10)
        };
        let s = solve_checked(&a, &b, &o);
        assert!(!s.report.converged);
        assert_eq!(
            s.report.reason.name(),
            want,
            "{m} {v}: {}",
            s.report.reason_detail
        );
        s.report.reason
    };
    for v in [Variant::Classical, Variant::Pipelined] {
        // CG: p1 = (0, 2) and ⟨p1, Ap1⟩ = 0: A is only semi-definite.
        expect(Method::Cg, v, "not_spd");
        assert_eq!(
            expect(Method::Bicgstab, v, "breakdown"),
            StopReason::Breakdown {
                quantity: "<Ap, r0*>".into()
            }
        );
        assert_eq!(
            expect(Method::Gmres, v, "breakdown"),
            StopReason::Breakdown {
                quantity: "R_ii".into()
            }
        );
    }
    expect(Method::Bicg, Variant::Classical, "breakdown");

    // A larger singular one: the 2D Neumann Laplacian (constants in the kernel), b = e_0.
    let k = 8;
    let n = k * k;
    let a = neumann_laplacian_2d(k);
    let mut b = vec![0.0; n];
    b[0] = 1.0;
    for o in all_combos(1e-8) {
        if o.method == Method::Jacobi {
            continue;
        }
        let o = SolveOptions { max_iter: 400, ..o };
        let s = solve_checked(&a, &b, &o);
        assert!(
            !s.report.converged,
            "{}: {}",
            tag(&o),
            s.report.reason_detail
        );
        // The least-squares residual is the component of b along the constants: 1/k.
        assert!(s.report.relative_residual >= 1.0 / k as f64 * 0.999);
    }
}

#[test]
fn jacobi_iteration_diverges_without_dominance() {
    // Poisson with diagonal 2: ρ(I − D⁻¹A) ≈ 2.
    let a = stencil_2d::<f64>(6, 2.0, 0.0);
    let b = rhs(&a);
    let o = opts(Method::Jacobi, Variant::Classical, Precond::None, 1e-8);
    let s = solve_checked(&a, &b, &o);
    assert_eq!(
        s.report.reason,
        StopReason::Diverged,
        "{}",
        s.report.reason_detail
    );
    assert!(s.report.iterations < 100);
    // And converges on a strictly dominant one (the rate is the spectral radius).
    let a = convdiff::<f64>(6);
    let b = rhs(&a);
    let s = cpu::jacobi::jacobi_iteration(&a, &b, None, &o).unwrap();
    assert!(s.report.converged, "{}", s.report.reason_detail);
    assert!(rel_diff(&s.x, &x_star(a.nrows())) < 1e-6);
}

#[test]
fn bad_input_is_a_typed_error() {
    let a = poisson::<f64>(4);
    let n = a.nrows();
    let o = opts(Method::Cg, Variant::Pipelined, Precond::None, 1e-8);
    let mut b = vec![1.0; n];
    b[3] = f64::NAN;
    assert!(matches!(
        cpu::solve(&a, &b, None, &o),
        Err(KrylovError::NonFinite { index: 3, .. })
    ));
    assert!(matches!(
        cpu::solve(&a, &vec![1.0; n - 1], None, &o),
        Err(KrylovError::DimensionMismatch { .. })
    ));
    let b = vec![1.0; n];
    assert!(matches!(
        cpu::solve(&a, &b, Some(&vec![0.0; n + 1]), &o),
        Err(KrylovError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        cpu::solve(&a, &b, Some(&vec![f64::INFINITY; n]), &o),
        Err(KrylovError::NonFinite { .. })
    ));
    let rect = Csr::<f64>::new(1, 2, vec![0, 1], vec![0], vec![1.0]).unwrap();
    assert!(matches!(
        cpu::solve(&rect, &[1.0], None, &o),
        Err(KrylovError::NotSquare { .. })
    ));
    let bad = SolveOptions {
        rtol: -1.0,
        ..o.clone()
    };
    assert!(matches!(
        cpu::solve(&a, &b, None, &bad),
        Err(KrylovError::InvalidOption(_))
    ));
    let bad = SolveOptions {
        method: Method::Gmres,
        restart: 0,
        ..o.clone()
    };
    assert!(matches!(
        cpu::solve(&a, &b, None, &bad),
        Err(KrylovError::InvalidOption(_))
    ));
}

#[test]
fn overflow_is_reported_as_non_finite() {
    // ⟨r, r⟩ overflows f64 although every input is finite.
    let a = Csr::<f64>::new(2, 2, vec![0, 1, 2], vec![0, 1], vec![1.0, 1.0]).unwrap();
    let b = [1e300, 1e300];
    for &m in &[Method::Cg, Method::Bicgstab, Method::Gmres, Method::Bicg] {
        for &v in Variant::of(m) {
            let s = cpu_solve(&a, &b, &opts(m, v, Precond::None, 1e-8));
            assert_eq!(
                s.report.reason.name(),
                "non_finite",
                "{m} {v}: {}",
                s.report.reason_detail
            );
            assert!(!s.report.converged);
            assert!(s.report.b_norm.is_finite());
        }
    }
}

#[test]
fn a_cancel_check_stops_every_method_and_says_so() {
    // The check answers "stop" at its 6th question: every method stops within a few
    // iterations with `Cancelled`, not converged, and a true residual still computed.
    for o in all_combos(1e-12) {
        let a = if o.method == Method::Cg {
            poisson::<f64>(16)
        } else {
            convdiff::<f64>(16)
        };
        let b = rhs(&a);
        let asked = std::rc::Rc::new(std::cell::Cell::new(0usize));
        let counter = asked.clone();
        let s = cpu::cancellable(
            move || {
                counter.set(counter.get() + 1);
                counter.get() > 5
            },
            || cpu_solve(&a, &b, &o),
        );
        let t = tag(&o);
        assert_eq!(
            s.report.reason,
            StopReason::Cancelled,
            "{t}: {}",
            s.report.reason_detail
        );
        assert!(!s.report.converged, "{t}");
        assert!(
            s.report.iterations <= 6,
            "{t}: {} iterations",
            s.report.iterations
        );
        assert!(
            s.report.relative_residual.is_finite() && s.report.relative_residual > 1e-12,
            "{t}"
        );
        assert!(asked.get() >= 6, "{t}");
        // Outside `cancellable` nothing is asked: the same solve converges.
        assert!(cpu_solve(&a, &b, &o).report.converged, "{t}");
    }
}
