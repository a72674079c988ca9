//! The CPU reference solvers: every method × variant × preconditioner against a dense LU
//! oracle, classical vs pipelined agreement, the shared SuiteSparse matrices, failure
//! reporting, and f32.
//!
//! Grouped by concern: the dense LU oracle and the entry points (`oracle`), classical vs
//! pipelined (`agreement`), the shared SuiteSparse matrices (`shared`), failures and edge
//! cases (`failures`), options (`options`) and f32 (`single_precision`).

#[path = "../common/mod.rs"]
mod common;

mod agreement;
mod failures;
mod options;
mod oracle;
mod shared;
mod single_precision;

use common::problems::{rhs, x_star};
use krylov_wgpu::Scalar;
use krylov_wgpu::cpu::{self, TRUE_RESIDUAL_SLACK};
use krylov_wgpu::matrix::{Coo, Csr};
use krylov_wgpu::solvers::{
    GramSchmidt, Method, Precond, Solution, SolveOptions, StopReason, Variant,
};

/// 2D five-point stencil on a k×k grid: diagonal `diag`, west neighbour `-1 - c`, east `-1`,
/// south/north `-1` (c > 0: first-order upwind convection in x, nonsymmetric).
fn stencil_2d<T: Scalar>(k: usize, diag: f64, c: f64) -> Csr<T> {
    let n = k * k;
    let mut coo = Coo::new(n, n);
    for j in 0..k {
        for i in 0..k {
            let row = i + k * j;
            coo.push(row, row, T::from_f64(diag)).unwrap();
            if i > 0 {
                coo.push(row, row - 1, T::from_f64(-1.0 - c)).unwrap();
            }
            if i + 1 < k {
                coo.push(row, row + 1, T::from_f64(-1.0)).unwrap();
            }
            if j > 0 {
                coo.push(row, row - k, T::from_f64(-1.0)).unwrap();
            }
            if j + 1 < k {
                coo.push(row, row + k, T::from_f64(-1.0)).unwrap();
            }
        }
    }
    coo.to_csr().unwrap()
}

/// SPD: the 2D Poisson matrix (diagonal 4).
fn poisson<T: Scalar>(k: usize) -> Csr<T> {
    stencil_2d(k, 4.0, 0.0)
}

/// Nonsymmetric convection–diffusion, strictly diagonally dominant (so Jacobi converges).
fn convdiff<T: Scalar>(k: usize) -> Csr<T> {
    stencil_2d(k, 4.5 + 1.5, 1.5)
}

/// Poisson (SPD) and convection–diffusion (nonsymmetric) on a k×k grid with b = A·x*, each
/// as (spd, A, b).
fn both_kinds<T: Scalar>(k: usize) -> [(bool, Csr<T>, Vec<T>); 2] {
    [true, false].map(|spd| {
        let a: Csr<T> = if spd { poisson(k) } else { convdiff(k) };
        let b = rhs(&a);
        (spd, a, b)
    })
}

/// The shipped right-hand side where there is one, else A·x*.
fn load_rhs(name: &str, a: &Csr<f64>) -> Vec<f64> {
    common::problems::rhs_for(name, a, &["mesh1e1", "sherman4"])
}

fn opts(method: Method, variant: Variant, precond: Precond, rtol: f64) -> SolveOptions {
    SolveOptions {
        method,
        variant,
        precond,
        rtol,
        ..Default::default()
    }
}

fn rel_diff(x: &[f64], y: &[f64]) -> f64 {
    let d: f64 = x.iter().zip(y).map(|(a, b)| (a - b).powi(2)).sum();
    let n: f64 = y.iter().map(|b| b * b).sum();
    (d / n).sqrt()
}

/// Invariants every report must satisfy, whatever the outcome.
fn check_report<T: Scalar>(sol: &Solution<T>, o: &SolveOptions, a: &Csr<T>, b: &[T]) {
    let r = &sol.report;
    assert_eq!(r.device, krylov_wgpu::gpu::DeviceInfo::cpu());
    assert_eq!(r.format, "csr");
    assert_eq!(r.precision, T::PRECISION);
    assert_eq!((r.n, r.nnz), (a.nrows(), a.nnz()));
    assert_eq!(r.method, o.method);
    assert_eq!(r.history.len(), r.iterations + 1, "{}", r.reason_detail);
    assert!(r.iterations <= o.max_iter);
    assert_eq!(r.converged, r.reason == StopReason::Converged);
    let true_rel = cpu::true_relative_residual(a, b, &sol.x);
    assert!(
        r.relative_residual == true_rel || (r.relative_residual.is_nan() && true_rel.is_nan()),
        "relative_residual must be the true one"
    );
    if r.converged {
        let tau = o.threshold(r.b_norm);
        assert!(
            r.relative_residual * r.b_norm <= tau * (1.0 + TRUE_RESIDUAL_SLACK),
            "converged with a true residual above the threshold: {}",
            r.reason_detail
        );
        assert!(*r.history.last().unwrap() <= tau, "{}", r.reason_detail);
    }
    assert!(
        r.reason_detail
            .contains(&format!("iteration {}", r.iterations))
            || r.reason_detail.contains(&format!("limit {}", r.iterations)),
        "detail names the iteration: {}",
        r.reason_detail
    );
    assert!(r.seconds >= 0.0);
    // Residual replacements: counted among the restarts; for the Krylov methods but GMRES
    // (whose cycles replace without a log entry) one logged gap each, and a `residual_gap`
    // stop only after all of them (the Jacobi iteration has no recurrence to replace).
    assert!(r.replacements <= r.restarts, "{:?}", r.restart_log);
    use krylov_wgpu::solvers::Method;
    if !matches!(o.method, Method::Gmres | Method::Jacobi) {
        let logged = r
            .restart_log
            .iter()
            .filter(|l| l.contains("residual replaced by b - Ax"))
            .count();
        assert_eq!(r.replacements, logged, "{:?}", r.restart_log);
        if r.reason == StopReason::ResidualGap && r.iterations < o.max_iter {
            assert_eq!(r.replacements, cpu::MAX_GAP_RESTARTS, "{}", r.reason_detail);
        }
    }
}

/// The CPU solve with `o` from x0 = 0.
fn cpu_solve<T: Scalar>(a: &Csr<T>, b: &[T], o: &SolveOptions) -> Solution<T> {
    cpu::solve(a, b, None, o).unwrap()
}

/// The CPU solve with `o` from x0 = 0, its report checked by [`check_report`].
fn solve_checked<T: Scalar>(a: &Csr<T>, b: &[T], o: &SolveOptions) -> Solution<T> {
    let s = cpu_solve(a, b, o);
    check_report(&s, o, a, b);
    s
}

/// Options for all (method, variant, precond, gs) combinations for the given matrix kind:
/// CG for SPD, the nonsymmetric methods otherwise; every Gram–Schmidt for classical GMRES.
fn combos(spd: bool, rtol: f64) -> Vec<SolveOptions> {
    let mut v = Vec::new();
    let methods: &[Method] = if spd {
        &[Method::Cg]
    } else {
        &[
            Method::Bicgstab,
            Method::Gmres,
            Method::Bicg,
            Method::Jacobi,
        ]
    };
    for &m in methods {
        for &var in Variant::of(m) {
            // IC(0) needs a symmetric matrix, which `combos(true, …)` callers do not all pass (it
            // is tested in tests/gpu_ilu).
            for &pc in Precond::ALL.iter().filter(|&&p| p != Precond::Ic0) {
                let gs: &[GramSchmidt] = if m == Method::Gmres && var == Variant::Classical {
                    GramSchmidt::ALL
                } else {
                    &[GramSchmidt::Cgs]
                };
                for &gs in gs {
                    v.push(SolveOptions {
                        gs,
                        ..opts(m, var, pc, rtol)
                    });
                }
            }
        }
    }
    v
}

/// Every combination, SPD ones and nonsymmetric ones.
fn all_combos(rtol: f64) -> Vec<SolveOptions> {
    let mut v = combos(true, rtol);
    v.extend(combos(false, rtol));
    v
}

/// "method variant precond gs" of a combination.
fn tag(o: &SolveOptions) -> String {
    format!("{} {} {} {}", o.method, o.variant, o.precond, o.gs)
}
