//! p(1)-GMRES (`--variant p1`, `gmres_p1_step`): one launch and one global reduction per step,
//! u_i = A v_{i−1} by recurrence, R_{i,i} by Pythagoras corrected by the lagged norm of
//! v_{i−1}. Checked against its CPU twin (`cpu::gmres::p1`) and against fused GMRES (the
//! same iterates in exact arithmetic) on fresh random nonsymmetric matrices, in every storage
//! format, through its restart when R_{i,i} is lost, and its refusals. (Exact launch,
//! transfer and reduction counts: `gpu_gmres/counts.rs`, `reduction_counts.rs`; agreement
//! with the CPU twin across flavours: `gpu_gmres/agreement.rs`; several bindings:
//! `gpu_split.rs`.)

mod common;

use common::engine;
use common::problems::{cast, load, random_nonsymmetric, with_ones_rhs};
use common::solve::{gmres_in_every_format, rel_diff_inf};
use krylov_wgpu::matrix::generators;
use krylov_wgpu::solvers::{
    CheckMode, GramSchmidt, Method, Precond, SolveOptions, Variant, gmres, solve_gpu,
};
use krylov_wgpu::{KrylovError, cpu};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn opts(variant: Variant, mode: CheckMode, precond: Precond) -> SolveOptions {
    SolveOptions {
        method: Method::Gmres,
        variant,
        check_mode: mode,
        precond,
        rtol: 0.0,
        restart: 12,
        max_iter: 5000,
        ..Default::default()
    }
}

/// After k steps (rtol 0, max_iter = k, cycles of 12): p(1)-GMRES's iterate equals fused
/// GMRES's and its CPU twin's to 1e-8 relative, its estimates the twin's to 1e-7 (f64: the
/// recurrence's error grows with the steps of a cycle, by about ‖A‖/R_{i,i} a step, and
/// restarts from the true residual), and its basis is as orthonormal as fused GMRES's.
#[test]
fn p1_follows_fused_gmres_and_its_cpu_twin_on_random_matrices() {
    let Some(engine) = engine() else { return };
    let seed: u64 = rand::random();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for n in [50, 300, 1234] {
        let a = random_nonsymmetric(&mut rng, n);
        let b: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        for precond in [Precond::None, Precond::Jacobi] {
            for mode in [CheckMode::Device, CheckMode::Paper] {
                for k in [1, 2, 3, 12, 13, 40] {
                    let tag = format!("n={n} {precond} {mode} k={k} (seed {seed})");
                    let o = |variant| SolveOptions {
                        max_iter: k,
                        ..opts(variant, mode, precond)
                    };
                    let p1 = gmres::solve(&engine, &a, &b, None, &o(Variant::P1), &mut ()).unwrap();
                    let fused =
                        gmres::solve(&engine, &a, &b, None, &o(Variant::Fused), &mut ()).unwrap();
                    let twin = cpu::solve(&a, &b, None, &o(Variant::P1)).unwrap();
                    let r = &p1.report;
                    assert_eq!(r.variant, Variant::P1, "{tag}");
                    assert_eq!(twin.report.variant, Variant::P1, "{tag}");
                    assert_eq!(r.iterations, k, "{tag}: {}", r.reason_detail);
                    assert_eq!(r.iterations, twin.report.iterations, "{tag}");
                    assert_eq!(r.restarts, 0, "{tag}: {:?}", r.notes);
                    for (what, x) in [("fused", &fused.x), ("CPU twin", &twin.x)] {
                        let d = rel_diff_inf(&p1.x, x);
                        assert!(d <= 1e-8, "{tag}: x differs from {what}'s by {d:e}");
                    }
                    for (i, (h, t)) in r.history.iter().zip(&twin.report.history).enumerate() {
                        assert!(
                            (h - t).abs() <= 1e-7 * t.abs() + 1e-7 * r.history[0],
                            "{tag}: estimate {i}: GPU {h:e}, CPU twin {t:e}"
                        );
                    }
                    // The lagged norm keeps the basis as orthonormal as fused GMRES's CGS.
                    let (lp, lf) = (
                        r.orthogonality_loss.unwrap_or(0.0),
                        fused.report.orthogonality_loss.unwrap_or(0.0),
                    );
                    assert!(
                        lp.is_finite() && lp <= 100.0 * lf.max(1e-14),
                        "{tag}: orthogonality loss p1 {lp:e}, fused {lf:e}"
                    );
                }
            }
        }
    }
}

/// Every storage format (the product hands its rows back through each format's loop):
/// converged, iterations as in CSR ± 2, the true residual within the tolerance, one launch and
/// one global reduction per step (+ the closing launch and the restart per cycle of 40).
#[test]
fn p1_converges_in_every_format_with_one_launch_per_step() {
    let Some(engine) = engine() else { return };
    gmres_in_every_format(&engine, Variant::P1, 40, |format, sol| {
        let d = sol.report.dispatches_per_iteration;
        assert!((1.0..1.5).contains(&d), "{format}: {d} launches per step");
        let red = sol.report.reductions_per_iteration;
        assert!(
            (1.0..1.1).contains(&red),
            "{format}: {red} reductions per step"
        );
    });
}

/// pores_1 (κ ≈ 1e8): some steps' ‖u_i‖² − Σ R² cancels below √ε‖u_i‖². The cycle keeps the
/// steps before and GMRES restarts from the true residual — counted in `restarts`, said in
/// `notes` — and converges in f64, on the GPU and on its CPU twin alike, in both check modes.
/// In f32 to 1e-6 (beyond what f32 reaches on it: fused GMRES ends with a residual gap) the
/// cycles keep losing R_{i,i}: after P1_MAX_LOST_CYCLES of them the solve goes on as fused
/// GMRES, says so, and ends with a named outcome whose residual is x's.
#[test]
fn a_lost_r_ii_restarts_the_cycle_and_repeated_losses_fall_back_to_fused() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(load("pores_1"));
    for mode in [CheckMode::Device, CheckMode::Paper] {
        let o = SolveOptions {
            rtol: 1e-10,
            restart: 30,
            ..opts(Variant::P1, mode, Precond::None)
        };
        let sol = gmres::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{mode}: {}", r.reason_detail);
        assert!(
            r.restarts >= 1,
            "{mode}: no restart ({} steps)",
            r.iterations
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("p(1)-GMRES") && n.contains("ended early")),
            "{mode}: {:?}",
            r.notes
        );
        let rel = cpu::true_relative_residual(&a, &b, &sol.x);
        assert!(rel <= 1e-10 * 1.001, "{mode}: true residual {rel:e}");
        let twin = cpu::solve(&a, &b, None, &o).unwrap().report;
        assert!(
            twin.converged && twin.restarts >= 1,
            "{mode}: twin {twin:?}"
        );
    }
    let (a32, b32) = cast::<f32>(&a, &b);
    let o = SolveOptions {
        rtol: 1e-6,
        restart: 30,
        ..opts(Variant::P1, CheckMode::Device, Precond::None)
    };
    let sol = gmres::solve(&engine, &a32, &b32, None, &o, &mut ()).unwrap();
    let r = &sol.report;
    assert!(
        r.notes.iter().any(|n| n.contains("went on as fused GMRES")),
        "{}: {:?}",
        r.reason_detail,
        r.notes
    );
    assert!(
        r.restarts >= cpu::gmres::P1_MAX_LOST_CYCLES,
        "{}",
        r.restarts
    );
    let rel = cpu::true_relative_residual(&a32, &b32, &sol.x);
    assert!(
        rel.is_finite() && (rel - r.relative_residual).abs() <= 1e-6 * rel,
        "{}: reported {:e}, x's {rel:e}",
        r.reason_detail,
        r.relative_residual
    );
}

/// west0479 in f32 without a preconditioner: p(1)-GMRES's cycles end early (R_{i,i} lost)
/// after a few steps and leave the restart residual where it was. Such a cycle is p(1)'s
/// recurrences stalling, not GMRES: the solve goes on as fused GMRES at once (a note says
/// so) instead of counting it towards the stagnation stop — before, p(1) stopped with
/// "stagnation" after 18 steps where fused GMRES ran 90 — on the GPU in both modes and on
/// the CPU twin (pipelined steps).
#[test]
fn a_lost_cycle_without_progress_falls_back_to_fused_at_once() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(load("west0479"));
    let (a32, b32) = cast::<f32>(&a, &b);
    for mode in [CheckMode::Device, CheckMode::Paper] {
        let o = SolveOptions {
            rtol: 1e-6,
            restart: 30,
            max_iter: 3000,
            ..opts(Variant::P1, mode, Precond::None)
        };
        let sol = gmres::solve(&engine, &a32, &b32, None, &o, &mut ()).unwrap();
        let r = &sol.report;
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("left the restart residual where it was")),
            "{mode}: {}: {:?}",
            r.reason_detail,
            r.notes
        );
        assert!(r.restarts >= 1, "{mode}: {}", r.restarts);
        assert!(
            r.iterations > 60,
            "{mode}: stopped after {} steps",
            r.iterations
        );
        let rel = cpu::true_relative_residual(&a32, &b32, &sol.x);
        assert!(
            rel.is_finite() && (rel - r.relative_residual).abs() <= 1e-6 * rel,
            "{mode}: reported {:e}, x's {rel:e}",
            r.relative_residual
        );
        let twin = cpu::solve(&a32, &b32, None, &o).unwrap().report;
        assert!(
            twin.restarts >= 1 && twin.iterations > 60,
            "{mode}: twin {} steps, {} restarts: {}",
            twin.iterations,
            twin.restarts,
            twin.reason_detail
        );
    }
}

#[test]
fn p1_is_refused_where_it_does_not_run_and_says_what_it_ignores() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs::<f64>(generators::from_spec("poisson2d:12").unwrap());
    // Not CG's or BiCGStab's.
    for method in [Method::Cg, Method::Bicgstab] {
        let o = SolveOptions {
            method,
            variant: Variant::P1,
            ..Default::default()
        };
        for e in [
            solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap_err(),
            cpu::solve(&a, &b, None, &o).unwrap_err(),
        ] {
            assert!(
                matches!(&e, KrylovError::InvalidOption(m) if m.contains("GMRES's")),
                "{method}: {e}"
            );
        }
    }
    // A restart longer than its workgroup memory holds.
    let o = SolveOptions {
        restart: 129,
        ..opts(Variant::P1, CheckMode::Device, Precond::None)
    };
    let e = gmres::solve(&engine, &a, &b, None, &o, &mut ()).unwrap_err();
    assert!(
        matches!(&e, KrylovError::InvalidOption(m) if m.contains("at most 128")),
        "{e}"
    );
    // CGS2 runs one pass, and says so.
    let o = SolveOptions {
        gs: GramSchmidt::Cgs2,
        rtol: 1e-8,
        ..opts(Variant::P1, CheckMode::Device, Precond::None)
    };
    let r = gmres::solve(&engine, &a, &b, None, &o, &mut ())
        .unwrap()
        .report;
    assert!(r.converged, "{}", r.reason_detail);
    assert!(r.notes.iter().any(|n| n.contains("cgs2")), "{:?}", r.notes);
    // An ILU(0) preconditioner runs the classical variant (the kernel fuses only D⁻¹).
    let o = SolveOptions {
        precond: Precond::Ilu0,
        rtol: 1e-8,
        ..opts(Variant::P1, CheckMode::Device, Precond::None)
    };
    let r = solve_gpu(&engine, &a, &b, None, &o, &mut ())
        .unwrap()
        .report;
    assert!(
        r.converged && r.variant == Variant::Classical,
        "{:?}",
        r.notes
    );
}
