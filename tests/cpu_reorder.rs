//! Row reordering by a maximum-product matching on the CPU reference (issue #14): what it
//! makes work (west0479 and the driven-cavity saddle point with ILU(0) and Jacobi), what it
//! leaves alone (matrices with a full diagonal), and the generated held-out classes.
//!
//! The before/after table of the issue is printed by an example, not a test:
//! `cargo run --release --example reorder_experiments`.

use krylov_wgpu::KrylovError;
use krylov_wgpu::base::options::Reorder;
use krylov_wgpu::cpu::{self, dense};
use krylov_wgpu::matrix::generators::{cavity_2d, cavity_2d_interleaved, convection_diffusion_2d};
use krylov_wgpu::matrix::matching::max_product_matching;
use krylov_wgpu::matrix::reorder::{auto_reason, diagonal_health, reorder_rows};
use krylov_wgpu::matrix::{Coo, Csr, read_matrix_market};
use krylov_wgpu::solvers::{Method, Precond, Solution, SolveOptions, Variant};

fn load(name: &str) -> Csr<f64> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("{name}.mtx"));
    read_matrix_market(path).unwrap()
}

/// b = A·1 (the CLI's default right-hand side).
fn ones_rhs(a: &Csr<f64>) -> Vec<f64> {
    a.mul_vec(&vec![1.0; a.ncols()]).unwrap()
}

fn opts(method: Method, precond: Precond) -> SolveOptions {
    SolveOptions {
        method,
        variant: Variant::Pipelined,
        precond,
        rtol: 1e-8,
        max_iter: 3000,
        ..Default::default()
    }
}

/// ‖b − A x‖₂ / ‖b‖₂ of the original system, recomputed here.
fn true_rr(a: &Csr<f64>, b: &[f64], x: &[f64]) -> f64 {
    let ax = a.mul_vec(x).unwrap();
    let r: f64 = b
        .iter()
        .zip(&ax)
        .map(|(b, ax)| (b - ax).powi(2))
        .sum::<f64>()
        .sqrt();
    r / b.iter().map(|b| b * b).sum::<f64>().sqrt()
}

fn assert_converged(tag: &str, a: &Csr<f64>, b: &[f64], sol: &Solution<f64>) {
    let r = &sol.report;
    assert!(r.converged, "{tag}: {} ({})", r.reason_detail, r.iterations);
    let rr = true_rr(a, b, &sol.x);
    assert!(rr <= 1e-8 * 1.01, "{tag}: true residual {rr:.3e}");
    assert!((rr - r.relative_residual).abs() <= 1e-9, "{tag}");
}

#[test]
fn west0479_ilu0_converges_after_reordering() {
    let a = load("west0479");
    let b = ones_rhs(&a);
    for method in [Method::Gmres, Method::Bicgstab, Method::Bicg] {
        let o = opts(method, Precond::Ilu0);
        let sol = cpu::solve(&a, &b, None, &o).unwrap();
        let tag = format!("west0479 {method} ilu0");
        assert_converged(&tag, &a, &b, &sol);
        let how = sol.report.reordering.as_deref().unwrap();
        assert!(
            how.contains("of 479 rows moved, diagonal now zero-free")
                && how.contains("471 zero entries"),
            "{how}"
        );
        assert_eq!(sol.report.notes[0], how);
        assert!(
            how.contains("ILU(0) of A is unstable at every diagonal shift"),
            "{how}"
        );
        // The factors of P·A are stable: no shift was needed.
        assert_eq!(sol.report.preconditioner.as_ref().unwrap().shift, 0.0);
        // Without the reordering the same solve fails (ILU(0) of A is unstable).
        let before = cpu::solve_with_reorder(&a, &b, None, &o, Reorder::None).unwrap();
        assert!(!before.report.converged, "{tag} without reordering");
        assert!(before.report.reordering.is_none());
    }
}

#[test]
fn jacobi_is_no_longer_refused_on_zero_diagonals() {
    let a = load("west0479");
    let b = ones_rhs(&a);
    for method in [Method::Bicgstab, Method::Bicg] {
        let o = opts(method, Precond::Jacobi);
        let sol = cpu::solve(&a, &b, None, &o).unwrap();
        assert_converged(&format!("west0479 {method} jacobi"), &a, &b, &sol);
        assert!(sol.report.reordering.is_some());
        let e = cpu::solve_with_reorder(&a, &b, None, &o, Reorder::None).unwrap_err();
        assert!(matches!(e, KrylovError::ZeroDiagonal { .. }), "{e}");
    }
    // GMRES(30) with Jacobi runs now (it stagnates on west0479, but it is no longer refused).
    let o = SolveOptions {
        max_iter: 300,
        ..opts(Method::Gmres, Precond::Jacobi)
    };
    let sol = cpu::solve(&a, &b, None, &o).unwrap();
    assert!(sol.report.reordering.is_some());
    assert!(sol.report.relative_residual.is_finite());
    // CG and the Jacobi iteration keep the typed error (no reordering for them).
    for (method, precond) in [
        (Method::Cg, Precond::Jacobi),
        (Method::Jacobi, Precond::None),
    ] {
        let e = cpu::solve(&a, &b, None, &opts(method, precond)).unwrap_err();
        assert!(
            matches!(
                e,
                KrylovError::ZeroDiagonal { .. } | KrylovError::MethodMismatch(_)
            ),
            "{method}: {e}"
        );
    }
    // A small zero-diagonal system: the solution is that of the original system.
    let mut coo = Coo::new(3, 3);
    for (i, j, v) in [(0, 1, 2.0), (1, 2, 3.0), (2, 0, 4.0), (2, 1, 1.0)] {
        coo.push(i, j, v).unwrap();
    }
    let a = coo.to_csr().unwrap();
    let b = ones_rhs(&a);
    let sol = cpu::solve(&a, &b, None, &opts(Method::Bicgstab, Precond::Jacobi)).unwrap();
    assert!(sol.report.converged);
    assert!(sol.x.iter().all(|x| (x - 1.0).abs() < 1e-8), "{:?}", sol.x);
}

#[test]
fn mixed_precision_reorders_before_it_checks_jacobi_as_every_solve_does() {
    // The mixed solve checked the system before reordering and refused Jacobi on west0479's
    // zero diagonal, which the f32 and f64 solves reorder away.
    let a = load("west0479");
    let b = ones_rhs(&a);
    let refine = krylov_wgpu::base::RefineOptions::default();
    let o = opts(Method::Bicgstab, Precond::Jacobi);
    let sol = cpu::mixed::solve(&a, &b, None, &o, &refine).unwrap();
    assert!(sol.report.reordering.is_some());
    let rr = true_rr(&a, &b, &sol.x);
    assert!(rr.is_finite() && (rr - sol.report.relative_residual).abs() <= 1e-9 * rr.max(1.0));
    assert!(!sol.report.converged || rr <= 1e-8 * 1.01, "{rr:e}");
    let none = SolveOptions {
        reorder: Reorder::None,
        ..o
    };
    let e = cpu::mixed::solve(&a, &b, None, &none, &refine).unwrap_err();
    assert!(matches!(e, KrylovError::ZeroDiagonal { .. }), "{e}");
}

#[test]
fn full_diagonals_are_not_reordered() {
    for name in ["sherman4", "pores_1", "jpwh_991", "add32", "pde2961"] {
        let a = load(name);
        assert_eq!(diagonal_health(&a).zeros, 0, "{name}");
        for method in [Method::Gmres, Method::Bicgstab, Method::Bicg] {
            for precond in [Precond::Jacobi, Precond::Ilu0] {
                let o = opts(method, precond);
                assert!(auto_reason(&a, &o, cpu::ilu0_trouble).is_none(), "{name}");
            }
        }
        // The solve is the one without reordering, bit for bit.
        let b = ones_rhs(&a);
        let o = SolveOptions {
            max_iter: 200,
            ..opts(Method::Bicgstab, Precond::Ilu0)
        };
        let auto = cpu::solve(&a, &b, None, &o).unwrap();
        let none = cpu::solve_with_reorder(&a, &b, None, &o, Reorder::None).unwrap();
        assert!(auto.report.reordering.is_none(), "{name}");
        assert_eq!(auto.x, none.x, "{name}");
        assert_eq!(auto.report.iterations, none.report.iterations, "{name}");
    }
    // On these the matching itself keeps the identity or moves few rows (recorded here so
    // a change shows up): the auto rule never asks for it.
    for (name, most) in [("sherman4", 0), ("pores_1", 16), ("jpwh_991", 0)] {
        let m = max_product_matching(&load(name)).unwrap();
        assert!(m.moved() <= most, "{name}: {} moved", m.moved());
    }
}

#[test]
fn cavity_saddle_point_keeps_its_order_for_ilu0_and_is_reordered_for_jacobi() {
    let a = cavity_2d::<f64>(16, 100.0);
    let h = diagonal_health(&a);
    assert_eq!(h.zeros, 16 * 16 - 1);
    let b = ones_rhs(&a);
    // ILU(0) of the saddle point factors as it is (the Schur complement fills the zero
    // pressure diagonal) and converges faster than on P·A: auto keeps the rows.
    assert!(cpu::ilu0_trouble(&a).is_none());
    for method in [Method::Gmres, Method::Bicgstab] {
        let o = opts(method, Precond::Ilu0);
        let sol = cpu::solve(&a, &b, None, &o).unwrap();
        assert_converged(&format!("cavity2d:16 {method} ilu0"), &a, &b, &sol);
        assert!(sol.report.reordering.is_none());
        let matched = cpu::solve_with_reorder(&a, &b, None, &o, Reorder::Matching).unwrap();
        assert_converged(
            &format!("cavity2d:16 {method} ilu0 matched"),
            &a,
            &b,
            &matched,
        );
        assert!(
            matched.report.iterations > sol.report.iterations,
            "{method}"
        );
    }
    // Jacobi is refused without the reordering; with it BiCG converges.
    let o = opts(Method::Bicg, Precond::Jacobi);
    assert!(matches!(
        cpu::solve_with_reorder(&a, &b, None, &o, Reorder::None),
        Err(KrylovError::ZeroDiagonal { .. })
    ));
    let sol = cpu::solve(&a, &b, None, &o).unwrap();
    assert!(sol.report.reordering.is_some());
    assert_converged("cavity2d:16 bicg jacobi", &a, &b, &sol);
}

#[test]
fn ilu0_that_factors_with_or_without_a_shift_keeps_the_rows() {
    // A zero first pivot that a 1e-4 shift repairs: the shifted ILU(0) is kept (and
    // reported), no reordering.
    let mut tri = Coo::<f64>::new(40, 40);
    for i in 0..40 {
        if i > 0 {
            tri.push(i, i, 4.0).unwrap();
            tri.push(i, i - 1, -1.0).unwrap();
        }
        if i + 1 < 40 {
            tri.push(i, i + 1, -1.5).unwrap();
        }
    }
    let tri = tri.to_csr().unwrap();
    // The cavity numbered cell by cell (p, u, v), as node-ordered FEM codes do: ILU(0)
    // converges on A and not after a matching.
    let cavity = cavity_2d_interleaved(16, 100.0);
    for (name, a) in [("tridiagonal", &tri), ("interleaved cavity", &cavity)] {
        let b = ones_rhs(a);
        let o = opts(Method::Bicgstab, Precond::Ilu0);
        assert!(cpu::ilu0_trouble(a).is_none(), "{name}");
        let sol = cpu::solve(a, &b, None, &o).unwrap();
        assert!(sol.report.reordering.is_none(), "{name}");
        assert_converged(name, a, &b, &sol);
    }
    let sol = cpu::solve(
        &tri,
        &ones_rhs(&tri),
        None,
        &opts(Method::Gmres, Precond::Ilu0),
    );
    assert!(sol.unwrap().report.preconditioner.unwrap().shift > 0.0);
}

#[test]
fn generated_flow_problems_are_nonsingular_and_as_described() {
    for k in [2, 3, 5, 8] {
        let a = cavity_2d::<f64>(k, 100.0);
        assert!(!a.is_symmetric(1e-12));
        assert_eq!(diagonal_health(&a).zeros, k * k - 1);
        dense::lu_solve(&a, &ones_rhs(&a)).unwrap_or_else(|e| panic!("cavity2d:{k}: {e}"));
        let r = reorder_rows(&a, &ones_rhs(&a)).unwrap();
        assert!(r.a.diagonal().iter().all(|d| *d != 0.0));
        let c = convection_diffusion_2d::<f64>(k, 1000.0);
        assert!(!c.is_symmetric(1e-12));
        assert_eq!(diagonal_health(&c).zeros, 0);
        dense::lu_solve(&c, &ones_rhs(&c)).unwrap();
        assert!(max_product_matching(&c).unwrap().is_identity());
    }
    let a = cavity_2d::<f64>(12, 1000.0);
    let x = dense::lu_solve(&a, &ones_rhs(&a)).unwrap();
    assert!(x.iter().all(|x| (x - 1.0).abs() < 1e-8));
}

#[test]
fn explicit_matching_and_singular_matrices() {
    // A structurally singular matrix with a zero diagonal: auto leaves it to validation
    // (Jacobi's typed error), an explicit matching is an error naming the cause.
    let mut coo = Coo::new(3, 3);
    for (i, j, v) in [(0, 1, 1.0), (1, 1, 2.0), (2, 1, 1.0), (2, 2, 1.0)] {
        coo.push(i, j, v).unwrap();
    }
    let a = coo.to_csr().unwrap();
    let b = [1.0, 1.0, 1.0];
    let o = opts(Method::Gmres, Precond::Jacobi);
    assert!(matches!(
        cpu::solve(&a, &b, None, &o),
        Err(KrylovError::ZeroDiagonal { row: 0 })
    ));
    let e = cpu::solve_with_reorder(&a, &b, None, &o, Reorder::Matching).unwrap_err();
    assert!(e.to_string().contains("structurally singular"), "{e}");
    // Explicit matching on a full-diagonal matrix: same answer, said so.
    let a = load("sherman4");
    let b = ones_rhs(&a);
    let o = opts(Method::Bicgstab, Precond::Ilu0);
    let sol = cpu::solve_with_reorder(&a, &b, None, &o, Reorder::Matching).unwrap();
    assert!(sol.report.converged);
    assert!(
        sol.report
            .reordering
            .as_deref()
            .unwrap()
            .contains("0 of 1104 rows moved")
    );
}

#[test]
fn rcm_round_trips_the_solution_and_a_guess_exactly() {
    use krylov_wgpu::matrix::rcm;
    // The unknowns of a 2D Poisson matrix scrambled: RCM restores a narrow band; the
    // solution of the renumbered system, permuted back, is the one of the original system
    // (residual norms invariant), for CG (symmetric permutation keeps SPD) and GMRES, with and
    // without an initial guess.
    let base = krylov_wgpu::matrix::generators::poisson_2d_fd::<f64>(24);
    let n = base.nrows();
    let scramble: Vec<usize> = (0..n).map(|i| (i * 97) % n).collect();
    let a = rcm::permute_symmetric(&base, &scramble);
    let x_star: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.01).sin()).collect();
    let b = a.mul_vec(&x_star).unwrap();
    let guess: Vec<f64> = (0..n).map(|i| 0.5 * x_star[i]).collect();
    for method in [Method::Cg, Method::Gmres] {
        for x0 in [None, Some(guess.as_slice())] {
            let o = SolveOptions {
                method,
                rtol: 1e-10,
                reorder: Reorder::Rcm,
                ..Default::default()
            };
            let plain = cpu::solve(
                &a,
                &b,
                x0,
                &SolveOptions {
                    reorder: Reorder::None,
                    ..o.clone()
                },
            )
            .unwrap();
            let r = cpu::solve(&a, &b, x0, &o).unwrap();
            let tag = format!("{method} guess {}", x0.is_some());
            assert!(r.report.converged, "{tag}: {}", r.report.reason_detail);
            let what = r.report.reordering.as_deref().unwrap_or_default();
            assert!(what.contains("reverse Cuthill-McKee"), "{tag}: {what}");
            let err =
                r.x.iter()
                    .zip(&x_star)
                    .map(|(x, s)| (x - s).abs())
                    .fold(0.0, f64::max);
            assert!(err < 1e-7, "{tag}: max error {err}");
            // Same Krylov iteration up to rounding: the iteration counts agree closely.
            let (p, q) = (plain.report.iterations as i64, r.report.iterations as i64);
            assert!((p - q).abs() <= 2, "{tag}: {p} vs {q}");
            // The initial residual is the same norm: a permutation.
            let (h0, g0) = (plain.report.history[0], r.report.history[0]);
            assert!((h0 - g0).abs() <= 1e-12 * h0, "{tag}: {h0} vs {g0}");
        }
    }
    assert!(
        rcm::bandwidth(&rcm::permute_symmetric(&a, &rcm::rcm_order(&a))) < rcm::bandwidth(&a) / 4
    );
}
