//! CA-GMRES(s, m) CPU reference (issue #17, paper 002): TSQR variants against a host QR,
//! the matrix powers kernel, the Hessenberg reconstruction against standard Arnoldi, and the
//! solver against the classical CPU GMRES(m) on the shipped nonsymmetric matrices.
//!
//! Run with `--nocapture` to see the tables (orthogonality errors, iteration counts).

mod common;

use common::problems::{block_with_cond, load, rhs};
use krylov_wgpu::KrylovError;
use krylov_wgpu::cpu::cagmres::hessenberg::extend_hessenberg;
use krylov_wgpu::cpu::cagmres::leja::Shift;
use krylov_wgpu::cpu::cagmres::powers::{apply_to_columns, matrix_powers};
use krylov_wgpu::cpu::cagmres::tsqr::{Tsqr, borth, tsqr};
use krylov_wgpu::cpu::cagmres::{
    Basis, CaOptions, ca_counts_per_cycle, gmres_counts_per_cycle, solve,
};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{convection_diffusion_2d, poisson_2d_fd};
use krylov_wgpu::solvers::{GramSchmidt, Method, Precond, SolveOptions, StopReason, Variant};
use nalgebra::DMatrix;

fn opts(rtol: f64, m: usize, max_iter: usize) -> SolveOptions {
    SolveOptions {
        method: Method::Gmres,
        variant: Variant::Classical,
        rtol,
        restart: m,
        max_iter,
        precond: Precond::None,
        gs: GramSchmidt::Cgs2,
        ..Default::default()
    }
}

#[test]
fn tsqr_variants_match_a_host_qr_and_order_as_the_paper_says() {
    let (n, s) = (2000, 6);
    println!("kappa     | {:>9} | ...", "‖I−QᵀQ‖_F per variant");
    for kappa in [1e2, 1e6, 1e7, 1e10] {
        let w = block_with_cond(n, s, kappa);
        let host = w.clone().qr().r();
        let mut err = std::collections::HashMap::new();
        for t in Tsqr::ALL {
            let qr = tsqr(&w, t).unwrap();
            let e = qr.report.orth_error;
            assert!(e.is_finite(), "{t:?}");
            err.insert(t, e);
            // W = QR to rounding, whatever the orthogonality.
            let back = (&qr.q * &qr.r - &w).norm() / w.norm();
            assert!(back < 1e-12, "{t:?} kappa {kappa:e}: |QR - W| = {back:e}");
            // R equals the host's up to the signs of its rows, where Q is orthonormal
            // (the forward error of R is O(κ·orth_error) relative).
            if e < 1e-10 {
                for i in 0..s {
                    let sign = host[(i, i)].signum();
                    for j in i..s {
                        let d = (sign * host[(i, j)] - qr.r[(i, j)]).abs();
                        assert!(
                            d <= 1e-8 * host.norm().max(1.0) * (kappa * e).max(1.0),
                            "{t:?} kappa {kappa:e} R[{i},{j}]"
                        );
                    }
                }
            }
        }
        println!(
            "{kappa:9.0e} | {}",
            Tsqr::ALL
                .iter()
                .map(|t| format!("{t:?} {:.1e}", err[t]))
                .collect::<Vec<_>>()
                .join("  ")
        );
        let eps = f64::EPSILON;
        // CholQR2, CAQR, CGS2 (and SVQR, whose report counts its scaling) stay near ε for
        // κ ≤ 1e7; CholQR's loss grows like ε·κ², CGS's is the worst.
        if kappa <= 1e7 {
            for t in [Tsqr::CholQr2, Tsqr::Caqr, Tsqr::Cgs2] {
                assert!(
                    err[&t] < 100.0 * eps * s as f64,
                    "{t:?} {kappa:e}: {:e}",
                    err[&t]
                );
            }
            assert!(err[&Tsqr::CholQr] < 10.0 * eps * kappa * kappa, "{kappa:e}");
            if kappa >= 1e6 {
                assert!(err[&Tsqr::CholQr] > 1e3 * err[&Tsqr::CholQr2], "{kappa:e}");
                assert!(err[&Tsqr::Cgs] > err[&Tsqr::Mgs], "{kappa:e}");
                assert!(err[&Tsqr::Mgs] > err[&Tsqr::Cgs2], "{kappa:e}");
                assert!(err[&Tsqr::Mgs] < 10.0 * eps * kappa, "{kappa:e}");
            }
        }
        // CAQR is unconditionally stable.
        assert!(err[&Tsqr::Caqr] < 100.0 * eps * s as f64);
    }
}

#[test]
fn cholqr_falls_back_on_a_rank_deficient_block_and_says_so() {
    let mut w = block_with_cond(500, 4, 10.0);
    // Column 3 = column 0 + column 1: numerically rank deficient.
    for i in 0..500 {
        w[(i, 3)] = w[(i, 0)] + w[(i, 1)];
    }
    for t in [Tsqr::CholQr, Tsqr::CholQr2] {
        let qr = tsqr(&w, t).unwrap();
        assert_eq!(qr.report.requested, t);
        assert_eq!(qr.report.used, Tsqr::Svqr, "{t:?}");
        let why = qr.report.fallback_reason.as_deref().unwrap();
        println!("{t:?}: {why}");
        assert!(why.contains("Cholesky") && why.contains("SVQR"), "{why}");
        assert!((&qr.q * &qr.r - &w).norm() < 1e-10 * w.norm(), "{t:?}");
        // SVQR floors the Gram eigenvalues at ε·λ_max: R_33 drops to about √ε·R_00.
        assert!(
            qr.r[(3, 3)] < 1e-7 * qr.r[(0, 0)],
            "{t:?}: R_33 = {:e}",
            qr.r[(3, 3)]
        );
    }
    // A well-conditioned block does not fall back.
    let ok = tsqr(&block_with_cond(500, 4, 10.0), Tsqr::CholQr).unwrap();
    assert_eq!(ok.report.used, Tsqr::CholQr);
    assert!(ok.report.fallback_reason.is_none());
}

#[test]
fn matrix_powers_on_a_shipped_matrix_satisfy_av_equals_vb() {
    let a = load("sherman4");
    let v: Vec<f64> = (0..a.nrows()).map(|i| (i as f64 * 0.01).cos()).collect();
    let v0 = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let v: Vec<f64> = v.iter().map(|x| x / v0).collect();
    let real = [
        Shift::real(0.3),
        Shift::real(-0.2),
        Shift::real(0.05),
        Shift::real(0.1),
    ];
    let pair = [
        Shift::real(0.3),
        Shift { re: 0.1, im: 0.2 },
        Shift { re: 0.1, im: -0.2 },
        Shift::real(0.0),
    ];
    for shifts in [&[][..], &real[..], &pair[..]] {
        let p = matrix_powers(&a, &v, 8, shifts, 1.0).unwrap();
        let av = apply_to_columns(&a, &p.v.columns(0, 8).into_owned());
        let err = (av - &p.v * &p.b).norm() / p.v.norm();
        assert!(err < 1e-14, "{shifts:?}: {err:e}");
        // Explicit SpMVs for the real shifts: v_{k+1} = (A − θ_k) v_k.
        if shifts.iter().all(|z| z.im == 0.0) {
            let mut x = v.clone();
            for k in 0..8 {
                let t = shifts.get(k % shifts.len().max(1)).map_or(0.0, |z| z.re);
                let ax = a.mul_vec(&x).unwrap();
                x = ax.iter().zip(&x).map(|(y, x)| y - t * x).collect();
                let d = x
                    .iter()
                    .zip(p.v.column(k + 1).iter())
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert_eq!(d, 0.0, "column {} must be bit-identical", k + 1);
            }
        }
    }
}

/// Standard Arnoldi (MGS) for `steps` steps from `v`: (Q, H).
fn arnoldi(a: &Csr<f64>, v: &[f64], steps: usize) -> (DMatrix<f64>, DMatrix<f64>) {
    let n = v.len();
    let mut q = DMatrix::zeros(n, steps + 1);
    let mut h = DMatrix::zeros(steps + 1, steps);
    let nv = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    q.set_column(
        0,
        &nalgebra::DVector::from_iterator(n, v.iter().map(|x| x / nv)),
    );
    for i in 0..steps {
        let qi: Vec<f64> = q.column(i).iter().copied().collect();
        let mut w = nalgebra::DVector::from_vec(a.mul_vec(&qi).unwrap());
        for _ in 0..2 {
            for j in 0..=i {
                let hj = q.column(j).dot(&w);
                h[(j, i)] += hj;
                w.axpy(-hj, &q.column(j), 1.0);
            }
        }
        h[(i + 1, i)] = w.norm();
        q.set_column(i + 1, &(w / h[(i + 1, i)]));
    }
    (q, h)
}

#[test]
fn reconstructed_hessenberg_equals_arnoldis() {
    // s = 4, 3 blocks: monomial and Newton (with a conjugate pair) bases, every TSQR.
    let a = convection_diffusion_2d::<f64>(16, 2.0);
    let n = a.nrows();
    let v: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.37).sin()).collect();
    let (qa, ha) = arnoldi(&a, &v, 12);
    let shifts = [
        Shift::real(7.5),
        Shift { re: 4.0, im: 1.0 },
        Shift { re: 4.0, im: -1.0 },
        Shift::real(0.5),
    ];
    for (name, sh) in [("monomial", &[][..]), ("newton", &shifts[..])] {
        for t in Tsqr::ALL {
            let mut q = DMatrix::zeros(n, 13);
            q.set_column(0, &qa.column(0));
            let mut h = DMatrix::zeros(13, 12);
            for blk in 0..3 {
                let j = 4 * blk;
                let start: Vec<f64> = q.column(j).iter().copied().collect();
                let p = matrix_powers(&a, &start, 4, sh, 2.0).unwrap();
                let w = p.v.columns(1, 4).into_owned();
                let bo = borth(&q.columns(0, j + 1).into_owned(), &w, t).unwrap();
                q.columns_mut(j + 1, 4).copy_from(&bo.qr.q);
                let below = extend_hessenberg(&mut h, j, &bo.c, &bo.qr.r, &p.b);
                assert!(below < 1e-10, "{name} {t:?}: below-subdiagonal {below:e}");
            }
            // Same Krylov space and positive subdiagonals: same Q and H up to rounding.
            let dh = (&h - &ha).norm() / ha.norm();
            let dq = (&q - &qa).norm() / qa.norm();
            let tol = if name == "monomial" { 1e-7 } else { 1e-10 };
            println!(
                "{name:8} {t:?}: |H - H_arnoldi|/|H| = {dh:.1e}, |Q - Q_arnoldi|/|Q| = {dq:.1e}"
            );
            assert!(dh < tol && dq < tol, "{name} {t:?}: {dh:e} {dq:e}");
        }
    }
}

/// (GMRES(m) iterations, CA-GMRES(s, m) solution) on `a` with rtol 1e-8.
fn compare(
    name: &str,
    a: &Csr<f64>,
    s: usize,
    m: usize,
    basis: Basis,
) -> (usize, krylov_wgpu::cpu::cagmres::CaSolution) {
    let b = rhs(a);
    let o = opts(1e-8, m, 20_000);
    let g = krylov_wgpu::cpu::gmres::classical(a, &b, None, &o).unwrap();
    let ca = CaOptions {
        s,
        m,
        basis,
        tsqr: Tsqr::CholQr2,
    };
    let c = solve(a, &b, None, &o, &ca).unwrap();
    println!(
        "{name:10} s={s} m={m} {basis:?}: GMRES {} it ({}, {:.1e}) | CA {} it ({}, {:.1e}), max basis cond {:.1e}",
        g.report.iterations,
        g.report.reason.name(),
        g.report.relative_residual,
        c.report.iterations,
        c.report.reason.name(),
        c.report.relative_residual,
        c.ca.cycles.iter().map(|c| c.basis_cond).fold(0.0, f64::max),
    );
    assert!(
        g.report.converged,
        "{name}: GMRES {}",
        g.report.reason_detail
    );
    (g.report.iterations, c)
}

#[test]
fn ca_gmres_matches_gmres_iterations_on_shipped_matrices() {
    // pores_1 is left out: n = 30, so GMRES(m ≥ 30) is a direct solve in one cycle, and
    // unpreconditioned GMRES(8) stagnates on it (restart residual 7.2e4 → 7.2e4).
    let mut bad = Vec::new();
    for (name, m) in [
        ("sherman4", 32),
        ("jpwh_991", 32),
        ("add32", 32),
        ("pde2961", 32),
    ] {
        let a = load(name);
        for s in [4, 8] {
            let (g, c) = compare(name, &a, s, m, Basis::Newton);
            let d = c.report.iterations.abs_diff(g) as f64 / g as f64;
            if !c.report.converged || c.report.relative_residual > 1e-8 || d > 0.10 {
                bad.push(format!(
                    "{name} s={s}: CA {} ({}) vs GMRES {g}",
                    c.report.iterations, c.report.reason_detail
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn west0479_stagnates_by_name_like_gmres() {
    // Left out of the table above: unpreconditioned GMRES(32) stagnates on west0479 (also
    // with its rows scaled to unit maxima). CA-GMRES stops the same way, at the same step.
    let a = load("west0479");
    let b = rhs(&a);
    let o = opts(1e-8, 32, 20_000);
    let g = krylov_wgpu::cpu::gmres::classical(&a, &b, None, &o).unwrap();
    let c = solve(
        &a,
        &b,
        None,
        &o,
        &CaOptions {
            s: 4,
            m: 32,
            basis: Basis::Newton,
            tsqr: Tsqr::CholQr2,
        },
    )
    .unwrap();
    println!(
        "west0479: GMRES {} ({}), CA {} ({})",
        g.report.iterations, g.report.reason_detail, c.report.iterations, c.report.reason_detail
    );
    assert_eq!(g.report.reason, StopReason::Stagnation);
    assert_eq!(c.report.reason, StopReason::Stagnation);
    assert!(!c.report.converged);
    assert_eq!(c.report.iterations, g.report.iterations);
}

/// (basis vectors generated, converged, max basis cond) of CA-GMRES(s, 48) with CholQR2,
/// rtol 1e-8. (`iterations` counts the vectors the solution used; a truncated block's tail is
/// generated, and paid for, but not used.)
fn run_basis(a: &Csr<f64>, s: usize, basis: Basis) -> (usize, bool, f64) {
    let b = rhs(a);
    let ca = CaOptions {
        s,
        m: 48,
        basis,
        tsqr: Tsqr::CholQr2,
    };
    let c = solve(a, &b, None, &opts(1e-8, 48, 4000), &ca).unwrap();
    assert!(c.report.relative_residual.is_finite());
    let cond = c.ca.cycles.iter().map(|c| c.basis_cond).fold(0.0, f64::max);
    let generated: usize = c.ca.cycles.iter().map(|c| c.vectors).sum();
    assert!(generated >= c.report.iterations);
    (generated, c.report.converged, cond)
}

#[test]
fn newton_basis_keeps_convergence_where_the_monomial_basis_loses_it() {
    // At s = 8 the (‖A‖∞-scaled) monomial basis reaches cond 1e6–1e8 here, which CholQR2
    // after the CGS2 BOrth still orthogonalises: both bases converge in the same number of
    // steps, and only the condition numbers differ. At s = 16 the monomial basis is
    // numerically rank deficient (cond 1e12 to ∞): its blocks are truncated and it needs
    // 2–4× the steps, while the Newton basis converges as GMRES does.
    for (name, a) in [
        ("sherman4", load("sherman4")),
        ("jpwh_991", load("jpwh_991")),
        ("add32", load("add32")),
        ("poisson 64", poisson_2d_fd::<f64>(64)),
    ] {
        let (mi8, mc8, mk8) = run_basis(&a, 8, Basis::Monomial);
        let (ni8, nc8, nk8) = run_basis(&a, 8, Basis::Newton);
        let (mi16, _, mk16) = run_basis(&a, 16, Basis::Monomial);
        let (ni16, nc16, nk16) = run_basis(&a, 16, Basis::Newton);
        println!(
            "{name:10} s=8: monomial {mi8} it (cond {mk8:.1e}), Newton {ni8} it (cond {nk8:.1e}) \
             | s=16: monomial {mi16} it (cond {mk16:.1e}), Newton {ni16} it (cond {nk16:.1e})"
        );
        assert!(mc8 && nc8 && nc16, "{name}");
        assert!(
            nk8 * 3.0 < mk8,
            "{name}: s=8 Newton cond {nk8:e} vs monomial {mk8:e}"
        );
        assert!(
            nk16 * 100.0 < mk16,
            "{name}: s=16 Newton cond {nk16:e} vs monomial {mk16:e}"
        );
        assert!(
            mi16 >= 2 * ni16,
            "{name}: s=16 monomial {mi16} vs Newton {ni16}"
        );
    }
}

#[test]
fn reductions_and_syncs_per_cycle_are_counted_exactly() {
    let a = load("sherman4");
    let b = rhs(&a);
    for (s, m) in [(2, 8), (4, 32), (8, 32)] {
        for t in Tsqr::ALL {
            for basis in [Basis::Monomial, Basis::Newton] {
                let ca = CaOptions {
                    s,
                    m,
                    basis,
                    tsqr: t,
                };
                let c = solve(&a, &b, None, &opts(1e-10, m, 3 * m), &ca).unwrap();
                let (r, y) = ca_counts_per_cycle(s, m, t);
                // Every full CA cycle made exactly the formula's reductions and syncs.
                let full: Vec<_> =
                    c.ca.cycles
                        .iter()
                        .filter(|c| c.kind == "ca" && c.blocks == m / s)
                        .collect();
                assert!(!full.is_empty(), "s={s} m={m} {t:?} {basis:?}");
                for cy in &full {
                    assert_eq!(
                        (cy.reductions, cy.syncs),
                        (r, y),
                        "s={s} m={m} {t:?} {basis:?}"
                    );
                }
                assert_eq!(c.ca.reductions_per_cycle, Some(r as f64));
                assert_eq!(c.ca.syncs_per_cycle, Some(y as f64));
                // The Newton basis's first cycle is a standard GMRES(m) cycle: counted as one.
                if basis == Basis::Newton {
                    let first = &c.ca.cycles[0];
                    assert_eq!(first.kind, "arnoldi");
                    assert_eq!(
                        (first.reductions, first.syncs),
                        gmres_counts_per_cycle(m, GramSchmidt::Cgs2)
                    );
                }
            }
        }
    }
    // CholQR2 at s = 8, m = 32: 13 reductions (4 blocks of 3: BOrth's second projection
    // shares its reduction with CholQR's first Gram matrix) and 9 syncs per cycle, against
    // GMRES(32)'s 97 and 33 (CGS2) — 7.5× and 3.7× fewer.
    assert_eq!(ca_counts_per_cycle(8, 32, Tsqr::CholQr2), (13, 9));
    assert_eq!(gmres_counts_per_cycle(32, GramSchmidt::Cgs2), (97, 33));
}

#[test]
fn bad_input_is_an_error_and_nan_never_passes() {
    let a = poisson_2d_fd::<f64>(8);
    let b = rhs(&a);
    let o = opts(1e-8, 8, 100);
    let ca = CaOptions {
        s: 4,
        m: 8,
        basis: Basis::Newton,
        tsqr: Tsqr::CholQr2,
    };
    for bad in [
        CaOptions { s: 0, ..ca },
        CaOptions { m: 6, ..ca },
        CaOptions { s: 65, m: 65, ..ca },
    ] {
        match solve(&a, &b, None, &o, &bad) {
            Err(KrylovError::InvalidOption(msg)) => assert!(msg.contains("CA-GMRES"), "{msg}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let rect = Csr::<f64>::new(2, 3, vec![0, 1, 2], vec![0, 1], vec![1.0, 1.0]).unwrap();
    assert!(matches!(
        solve(&rect, &[1.0, 1.0], None, &o, &ca),
        Err(KrylovError::NotSquare { .. })
    ));
    // Preconditioning is on the right only.
    let left = SolveOptions {
        precond: Precond::Jacobi,
        side: krylov_wgpu::solvers::Side::Left,
        ..o.clone()
    };
    assert!(matches!(
        solve(&a, &b, None, &left, &ca),
        Err(KrylovError::InvalidOption(m)) if m.contains("right")
    ));
    let mut nan_b = b.clone();
    nan_b[3] = f64::NAN;
    assert!(solve(&a, &nan_b, None, &o, &ca).is_err());
    assert!(solve(&a, &b[..10], None, &o, &ca).is_err());
    let mut nan_x0 = vec![0.0; a.nrows()];
    nan_x0[0] = f64::NAN;
    assert!(solve(&a, &b, Some(&nan_x0), &o, &ca).is_err());
    // b = 0: x = 0 at iteration 0.
    let z = solve(&a, &vec![0.0; a.nrows()], None, &o, &ca).unwrap();
    assert!(z.report.converged && z.x.iter().all(|&v| v == 0.0));
}
