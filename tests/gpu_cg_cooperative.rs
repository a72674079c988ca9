//! Cooperative CG (`--variant cooperative`, `cg_cooperative`): fused CG's iteration, 16 per
//! launch, by workgroups that meet at a grid barrier. Checked bit for bit against fused CG
//! with the same workgroups (both check modes, f32 and f64, Jacobi and none, across launch
//! boundaries and at the iteration limit) on fresh random SPD matrices; in every storage
//! format with its exact launch and reduction counts; the residency probe's search and cache;
//! the recovery when a barrier cannot hold (forced: more workgroups than lavapipe runs at
//! once) and its refusals. Against the CPU reference through the shared CG tests
//! (`CG_VARIANTS`).

mod common;

use common::{assert_cg_converges_in_every_format, cg_options as opts, engine_with, random_spd};
use krylov_wgpu::gpu::Tuning;
use krylov_wgpu::gpu::kernels::solver_kernel;
use krylov_wgpu::gpu::residency::MAX_RESIDENT_PROBE;
use krylov_wgpu::matrix::{Csr, generators};
use krylov_wgpu::solvers::cg::cooperative::ITERATIONS_PER_LAUNCH;
use krylov_wgpu::solvers::{
    CheckMode, Method, Precond, Reduction, SolveOptions, Variant, cg, solve_gpu,
};
use krylov_wgpu::{KrylovError, Scalar};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One workgroup per launch for both variants (fused's reductions then have one partial
/// per slot, as the cooperative launch on lavapipe has).
fn one_group() -> Tuning {
    Tuning {
        max_groups: 1,
        ..Tuning::default()
    }
}

/// The same solve with fused CG.
fn fused_solve<T: Scalar>(
    engine: &krylov_wgpu::gpu::Engine,
    a: &Csr<T>,
    b: &[T],
    o: &SolveOptions,
) -> krylov_wgpu::solvers::Solution<T> {
    let o = SolveOptions {
        variant: Variant::Fused,
        ..o.clone()
    };
    cg::solve(engine, a, b, None, &o, &mut ()).unwrap()
}

/// Cooperative and fused CG after each k of `ks` iterations (rtol 0, max_iter = k): the same
/// iterations, stop, history and x, bit for bit (the same arithmetic in the same order).
fn assert_equals_fused<T: Scalar>(a: &Csr<T>, b: &[T], ks: &[usize], what: &str) {
    let Some(engine) = engine_with(one_group()) else {
        return;
    };
    for mode in [CheckMode::Device, CheckMode::Paper] {
        for precond in [Precond::None, Precond::Jacobi] {
            for &k in ks {
                let o = |variant| SolveOptions {
                    max_iter: k,
                    ..opts(variant, mode, precond)
                };
                let f = cg::solve(&engine, a, b, None, &o(Variant::Fused), &mut ()).unwrap();
                let c = cg::solve(&engine, a, b, None, &o(Variant::Cooperative), &mut ()).unwrap();
                let tag = format!("{what} {} {mode} {precond} k={k}", T::PRECISION);
                let (f, c) = (&f, &c);
                assert_eq!(c.report.iterations, f.report.iterations, "{tag}");
                assert_eq!(c.report.reason, f.report.reason, "{tag}");
                assert_eq!(c.report.history, f.report.history, "{tag}: histories");
                let same =
                    c.x.iter()
                        .zip(&f.x)
                        .all(|(p, q)| p.as_f64().to_bits() == q.as_f64().to_bits());
                assert!(same, "{tag}: x differs from fused CG's");
                assert_eq!(c.report.variant, Variant::Cooperative, "{tag}");
                assert!(
                    c.report
                        .notes
                        .iter()
                        .any(|n| n.contains("1 workgroups per launch")),
                    "{tag}: {:?}",
                    c.report.notes
                );
            }
        }
    }
}

#[test]
fn iterates_equal_fused_cg_bit_for_bit_across_launches_and_at_the_limit() {
    let seed = common::fresh_seed();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rng.random_range(300..900);
    let a = random_spd(&mut rng, n);
    let b: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let what = format!("random SPD n={n} (seed {seed})");
    // 15/16/17 and 33: one short of, exactly and one past whole launches of 16.
    let k = ITERATIONS_PER_LAUNCH;
    assert_equals_fused(&a, &b, &[1, k - 1, k, k + 1, 2 * k + 1], &what);
    let a32 = a.cast::<f32>().unwrap();
    let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
    assert_equals_fused(&a32, &b32, &[k + 1, 40], &what);
}

#[test]
fn converges_in_every_format_with_one_launch_per_16_iterations() {
    assert_cg_converges_in_every_format(Variant::Cooperative, Variant::Fused, |r, format| {
        let c = &r.loop_counts;
        let j = r.iterations_recorded as u64;
        assert_eq!(
            j % ITERATIONS_PER_LAUNCH as u64,
            0,
            "{format}: recorded {j}"
        );
        assert_eq!(
            (c.dispatches, c.reductions),
            (j / ITERATIONS_PER_LAUNCH as u64, j),
            "{format}: one launch per 16 iterations, one global reduction per iteration"
        );
        assert_eq!(r.reductions_per_iteration, 1.0, "{format}");
        assert_eq!(
            r.dispatches_per_iteration,
            1.0 / ITERATIONS_PER_LAUNCH as f64,
            "{format}"
        );
    });
}

/// An iteration limit inside a launch: the launch stops at it, the history ends at it, and
/// the reductions counted are the iterations made (37 = 1 in the setup's launch + 16 + 16 + 4
/// in three loop launches, the last one recording 5 residuals).
#[test]
fn the_iteration_limit_stops_a_launch_and_counts_stay_exact() {
    let Some(engine) = engine_with(one_group()) else {
        return;
    };
    let a: Csr<f64> = generators::from_spec("poisson2d:40").unwrap();
    let b = vec![1.0; a.nrows()];
    let o = SolveOptions {
        max_iter: 37,
        batch: 16,
        ..opts(Variant::Cooperative, CheckMode::Device, Precond::Jacobi)
    };
    let r = cg::solve(&engine, &a, &b, None, &o, &mut ())
        .unwrap()
        .report;
    assert_eq!(r.iterations, 37, "{}", r.reason_detail);
    assert_eq!(r.history.len(), 38);
    assert_eq!(r.iterations_recorded, 37);
    assert_eq!(r.loop_counts.dispatches, 3, "16 + 16 + 5 entries");
    assert_eq!(
        r.loop_counts.reductions, 36,
        "16 + 16 + 4 iterates made in the loop"
    );
    let f = fused_solve(&engine, &a, &b, &o);
    assert_eq!(r.history, f.report.history, "as fused CG's");
}

/// A barrier whose waits give up at once (64 workgroups forced, one poll each: the first to
/// arrive gives up before the last arrives): the launch stops, and the solve is done again
/// with fused CG — converged, said in the notes, with fused CG's result.
#[test]
fn a_barrier_that_cannot_hold_falls_back_to_fused_cg() {
    let Some(engine) = engine_with(Tuning {
        cooperative_groups: Some(64),
        cooperative_spin_limit: Some(1),
        ..Tuning::default()
    }) else {
        return;
    };
    let a: Csr<f64> = generators::from_spec("poisson2d:48").unwrap();
    let b = vec![1.0; a.nrows()];
    let o = SolveOptions {
        rtol: 1e-8,
        ..opts(Variant::Cooperative, CheckMode::Device, Precond::None)
    };
    let sol = cg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
    let r = &sol.report;
    assert!(r.converged, "{}", r.reason_detail);
    assert_eq!(r.variant, Variant::Fused);
    assert!(
        r.notes[0].contains("wait ran out") && r.notes[0].contains("solved again with fused CG"),
        "{:?}",
        r.notes
    );
    let fused = fused_solve(&engine, &a, &b, &o);
    assert_eq!(r.history, fused.report.history);
}

/// The probe's search: 1024, 512, … until one holds; remembered per kernel and
/// configuration (a second solve probes nothing).
#[test]
fn the_residency_probe_halves_until_a_launch_holds_and_is_remembered() {
    let Some(engine) = common::engine() else {
        return;
    };
    let k = solver_kernel::<f32>(
        &engine,
        "cg_cooperative",
        engine.shader_config(krylov_wgpu::Precision::F32),
    )
    .unwrap();
    let mut tried = Vec::new();
    let g = engine
        .resident_groups(&k, |g| {
            tried.push(g);
            Ok(g <= 300)
        })
        .unwrap();
    assert_eq!(g, 256);
    assert_eq!(tried, [MAX_RESIDENT_PROBE, 512, 256]);
    let again = engine
        .resident_groups(&k, |_| panic!("probed twice"))
        .unwrap();
    assert_eq!(again, 256);
}

#[test]
fn other_methods_refuse_it_by_name_and_compensated_sums_run_plain() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a: Csr<f64> = generators::from_spec("poisson2d:12").unwrap();
    let b = vec![1.0; a.nrows()];
    for method in [Method::Gmres, Method::Bicgstab] {
        let o = SolveOptions {
            method,
            variant: Variant::Cooperative,
            ..Default::default()
        };
        match solve_gpu(&engine, &a, &b, None, &o, &mut ()) {
            Err(KrylovError::InvalidOption(m)) => {
                assert!(m.contains("cooperative") && m.contains("CG's"), "{m}")
            }
            other => panic!("{method}: {:?}", other.map(|s| s.report.reason)),
        }
    }
    // (Compensated sums are f32's: f64 sums plain in every variant.)
    let a = a.cast::<f32>().unwrap();
    let b = vec![1.0f32; a.nrows()];
    let o = SolveOptions {
        reduction: Reduction::Compensated,
        rtol: 1e-5,
        ..opts(Variant::Cooperative, CheckMode::Device, Precond::None)
    };
    let r = cg::solve(&engine, &a, &b, None, &o, &mut ())
        .unwrap()
        .report;
    assert!(r.converged, "{}", r.reason_detail);
    assert_eq!(r.reduction, Reduction::Plain);
    assert!(r.notes[0].contains("plain arithmetic"), "{:?}", r.notes);
}
