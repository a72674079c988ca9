//! One-workgroup GMRES (`--variant workgroup`, `gmres_workgroup`): pipelined GMRES's steps in
//! one workgroup, a whole cycle per launch. Checked against pipelined GMRES on the GPU and its
//! CPU twin (`cpu::gmres::pipelined`) on fresh random nonsymmetric matrices, in every storage
//! format, through a lucky breakdown, and its refusals. (Exact launch, transfer and reduction
//! counts and agreement across flavours: `gpu_gmres/counts.rs`, `gpu_gmres/agreement.rs`,
//! `reduction_counts.rs`.)

mod common;

use common::engine;
use common::problems::{cast, random_nonsymmetric, with_ones_rhs};
use common::solve::{gmres_in_every_format, rel_diff_inf};
use krylov_wgpu::matrix::{Csr, generators};
use krylov_wgpu::solvers::{
    CheckMode, GramSchmidt, Method, Precond, Reduction, SolveOptions, StopReason, Variant, gmres,
};
use krylov_wgpu::{KrylovError, Precision, cpu};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn opts(variant: Variant, gs: GramSchmidt, mode: CheckMode, precond: Precond) -> SolveOptions {
    SolveOptions {
        method: Method::Gmres,
        variant,
        gs,
        check_mode: mode,
        precond,
        rtol: 0.0,
        restart: 12,
        max_iter: 5000,
        ..Default::default()
    }
}

/// After k steps (rtol 0, max_iter = k, cycles of 12) the iterate equals pipelined GMRES's
/// on the GPU and the CPU twin's to 1e-9 relative (f64: the same recurrences, summed in
/// another order), and the estimates the twin's to 1e-7 of ‖r0‖ (the Walker–Zhou estimate
/// √((ρ − |ξ|)(ρ + |ξ|)) magnifies ξ's rounding by ρ/estimate as it falls: 4 decades in 12
/// steps on these matrices), with CGS and CGS2, both modes, Jacobi.
#[test]
fn workgroup_gmres_follows_pipelined_gmres_and_its_cpu_twin_on_random_matrices() {
    let Some(engine) = engine() else { return };
    let seed: u64 = rand::random();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for n in [50, 700] {
        let a = random_nonsymmetric(&mut rng, n);
        let b: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        for gs in [GramSchmidt::Cgs, GramSchmidt::Cgs2] {
            for precond in [Precond::None, Precond::Jacobi] {
                for mode in [CheckMode::Device, CheckMode::Paper] {
                    for k in [1, 2, 12, 13, 30] {
                        let tag = format!("n={n} {gs:?} {precond} {mode} k={k} (seed {seed})");
                        let o = |variant| SolveOptions {
                            max_iter: k,
                            ..opts(variant, gs, mode, precond)
                        };
                        let wg =
                            gmres::solve(&engine, &a, &b, None, &o(Variant::Workgroup), &mut ())
                                .unwrap();
                        let pipelined =
                            gmres::solve(&engine, &a, &b, None, &o(Variant::Pipelined), &mut ())
                                .unwrap();
                        let twin = cpu::solve(&a, &b, None, &o(Variant::Workgroup)).unwrap();
                        let r = &wg.report;
                        assert_eq!(r.variant, Variant::Workgroup, "{tag}");
                        assert_eq!(twin.report.variant, Variant::Workgroup, "{tag}");
                        assert_eq!(r.iterations, k, "{tag}: {}", r.reason_detail);
                        assert_eq!(r.iterations, twin.report.iterations, "{tag}");
                        for (what, x) in [("pipelined", &pipelined.x), ("CPU twin", &twin.x)] {
                            let d = rel_diff_inf(&wg.x, x);
                            assert!(d <= 1e-9, "{tag}: x differs from {what}'s by {d:e}");
                        }
                        assert_eq!(r.history.len(), twin.report.history.len(), "{tag}");
                        for (i, (h, t)) in r.history.iter().zip(&twin.report.history).enumerate() {
                            assert!(
                                (h - t).abs() <= 1e-7 * (t.abs() + r.history[0]),
                                "{tag}: estimate {i}: GPU {h:e}, CPU twin {t:e}"
                            );
                        }
                        let loss = r.orthogonality_loss.expect("reported");
                        assert!(loss.is_finite() && loss <= 1e-8, "{tag}: loss {loss:e}");
                    }
                }
            }
        }
    }
}

/// The batched inner products without subgroups (the workgroup-memory reduction, where the
/// whole workgroup is one "subgroup": eight chunks of four sums a round) and with them, over
/// cycles of 40 (41 sums: six rounds with subgroups of 8 on lavapipe, two without): the
/// iterate equals the CPU twin's after 13 and 41 steps, CGS and CGS2.
#[test]
fn workgroup_gmres_batched_sums_agree_with_and_without_subgroups() {
    let seed: u64 = rand::random();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let a = random_nonsymmetric(&mut rng, 300);
    let b: Vec<f64> = (0..300).map(|_| rng.random_range(-1.0..1.0)).collect();
    for subgroups in [false, true] {
        let Some(engine) = common::engine_with(common::with_subgroups(subgroups)) else {
            return;
        };
        if subgroups && !engine.context().has_subgroups() {
            continue;
        }
        for gs in [GramSchmidt::Cgs, GramSchmidt::Cgs2] {
            for k in [13, 41] {
                let tag = format!("subgroups {subgroups} {gs:?} k={k} (seed {seed})");
                let o = SolveOptions {
                    max_iter: k,
                    restart: 40,
                    ..opts(Variant::Workgroup, gs, CheckMode::Device, Precond::Jacobi)
                };
                let wg = gmres::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
                let twin = cpu::solve(&a, &b, None, &o).unwrap();
                assert_eq!(
                    wg.report.iterations, k,
                    "{tag}: {}",
                    wg.report.reason_detail
                );
                let d = rel_diff_inf(&wg.x, &twin.x);
                assert!(d <= 1e-9, "{tag}: x differs from the CPU twin's by {d:e}");
            }
        }
    }
}

/// Every storage format (SELL and BCSR hand rows out in their own order, through the pool
/// and a storage barrier): converged, iterations as in CSR ± 2, the true residual within
/// the tolerance, one launch per cycle beside the restart's, one global reduction per cycle
/// (the restart residual's), in f64 and f32.
#[test]
fn workgroup_gmres_converges_in_every_format_with_one_launch_per_cycle() {
    let Some(engine) = engine() else { return };
    let (a, b, base) = gmres_in_every_format(&engine, Variant::Workgroup, 30, |format, sol| {
        let r = &sol.report;
        let cycles = r.cycles.expect("GMRES has cycles") as f64;
        let it = r.iterations as f64;
        // Per cycle: [update] + residual + the cycle's launch; the last update alone.
        assert!(
            r.dispatches_per_iteration <= (3.0 * cycles + 2.0) / it,
            "{format}: {} launches per step over {cycles} cycles",
            r.dispatches_per_iteration
        );
        assert!(
            r.reductions_per_iteration <= (cycles + 1.0) / it,
            "{format}: {} reductions per step",
            r.reductions_per_iteration
        );
    });
    // f32: the same system to 1e-5.
    let (a32, b32) = cast::<f32>(&a, &b);
    let o = SolveOptions {
        rtol: 1e-5,
        ..base.clone()
    };
    let r = gmres::solve(&engine, &a32, &b32, None, &o, &mut ())
        .unwrap()
        .report;
    assert!(
        r.converged && r.relative_residual <= 1e-5,
        "f32: {}",
        r.reason_detail
    );
    assert_eq!(r.precision, Precision::F32);
}

/// A matrix with three distinct eigenvalues: the Krylov space is invariant after three
/// steps, R_{4,4} ≈ 0 — a lucky breakdown — and the restart residual confirms convergence;
/// the same outcome as pipelined GMRES.
#[test]
fn workgroup_gmres_lucky_breakdown_converges() {
    let Some(engine) = engine() else { return };
    let n = 300;
    let diag: Vec<(usize, usize, f64)> = (0..n).map(|i| (i, i, [1.0, 2.0, 5.0][i % 3])).collect();
    let a = Csr::from_triplets(n, &diag).unwrap();
    let b: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
    for mode in [CheckMode::Device, CheckMode::Paper] {
        let o = SolveOptions {
            rtol: 1e-10,
            ..opts(Variant::Workgroup, GramSchmidt::Cgs, mode, Precond::None)
        };
        let r = gmres::solve(&engine, &a, &b, None, &o, &mut ())
            .unwrap()
            .report;
        let p = gmres::solve(
            &engine,
            &a,
            &b,
            None,
            &SolveOptions {
                variant: Variant::Pipelined,
                ..o.clone()
            },
            &mut (),
        )
        .unwrap()
        .report;
        assert!(r.converged, "{mode}: {}", r.reason_detail);
        assert_eq!(r.reason, StopReason::Converged, "{mode}");
        assert_eq!(r.iterations, p.iterations, "{mode}");
        assert!(r.iterations <= 4, "{mode}: {}", r.iterations);
    }
}

/// Bad requests get clear errors: more rows than one workgroup's memory holds, a restart
/// longer than its coefficients' room; `--reduction compensated` runs plain, with a note.
#[test]
fn workgroup_gmres_refusals_and_notes() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs::<f32>(generators::from_spec("poisson2d:200").unwrap());
    let o = opts(
        Variant::Workgroup,
        GramSchmidt::Cgs,
        CheckMode::Device,
        Precond::None,
    );
    match gmres::solve(&engine, &a, &b, None, &o, &mut ()) {
        Err(KrylovError::Unsupported(m)) => {
            assert!(
                m.contains("one workgroup") && m.contains("--variant p1"),
                "{m}"
            )
        }
        other => panic!("40000 rows in one workgroup: {:?}", other.map(|s| s.report)),
    }
    let (a, b) = with_ones_rhs::<f32>(generators::from_spec("poisson2d:20").unwrap());
    let long = SolveOptions {
        restart: 200,
        ..o.clone()
    };
    match gmres::solve(&engine, &a, &b, None, &long, &mut ()) {
        Err(KrylovError::InvalidOption(m)) => assert!(m.contains("restart at most 128"), "{m}"),
        other => panic!("restart 200: {:?}", other.map(|s| s.report)),
    }
    let compensated = SolveOptions {
        reduction: Reduction::Compensated,
        rtol: 1e-5,
        ..o.clone()
    };
    let r = gmres::solve(&engine, &a, &b, None, &compensated, &mut ())
        .unwrap()
        .report;
    assert!(r.converged, "{}", r.reason_detail);
    assert_eq!(r.reduction, Reduction::Plain);
    assert!(
        r.notes.iter().any(|n| n.contains("plain arithmetic")),
        "{:?}",
        r.notes
    );
}
