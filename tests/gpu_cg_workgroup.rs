//! One-workgroup CG (`--variant workgroup`, `cg_workgroup`): the classical recurrence in one
//! workgroup, 32 iterations per launch. Checked iterate by iterate against the CPU reference's
//! classical CG (the same α, β and vectors up to the summation order of the inner products)
//! on fresh random SPD matrices in both check modes; bitwise across launch boundaries; in every
//! storage format; with its exact launch counts; and its refusals (too many rows for the
//! workgroup's memory, methods other than CG) by name.

mod common;

use common::engine;
use common::problems::{load, with_ones_rhs};
use common::solve::rel_diff_inf;
use common::{assert_cg_converges_in_every_format, cg_options as opts, random_spd};
use krylov_wgpu::matrix::{Coo, Csr, generators};
use krylov_wgpu::solvers::cg::workgroup::{ITERATIONS_PER_LAUNCH, max_rows};
use krylov_wgpu::solvers::{
    CheckMode, Method, Precond, SolveOptions, StopReason, Variant, cg, solve_gpu,
};
use krylov_wgpu::{KrylovError, Scalar, cpu};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The iterates of the workgroup variant and of the CPU reference's classical CG after each
/// k of `ks` iterations (rtol 0, max_iter = k): the same to the rounding of the summation
/// order, within `tol` relative (x) and `tol`·‖r₀‖ (each residual norm: rounding errors are
/// relative to the norms the recurrence started from, not to a late residual 1e-8 below
/// them) — in f64 1e-9 up to 20 iterations of a moderately conditioned system (the
/// differences grow like κ·k·ε; past ~30 two summation orders part by more).
fn assert_follows_classical<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    precond: Precond,
    (ks, tol): (&[usize], f64),
    what: &str,
) {
    let Some(engine) = engine() else { return };
    let n = a.nrows();
    for mode in [CheckMode::Device, CheckMode::Paper] {
        for &k in ks {
            let o = SolveOptions {
                max_iter: k,
                ..opts(Variant::Workgroup, mode, precond)
            };
            let w = cg::solve(&engine, a, b, None, &o, &mut ()).unwrap();
            let c = cpu::solve(
                a,
                b,
                None,
                &SolveOptions {
                    variant: Variant::Classical,
                    ..o.clone()
                },
            )
            .unwrap();
            let tag = format!("{what} {mode} {precond} k={k}");
            assert_eq!(w.report.iterations, c.report.iterations, "{tag}");
            assert_eq!(
                w.report.reason, c.report.reason,
                "{tag}: {} / {}",
                w.report.reason_detail, c.report.reason_detail
            );
            assert!(
                c.report.iterations == k || n < k,
                "{tag}: {}",
                c.report.reason_detail
            );
            let d = rel_diff_inf(&w.x, &c.x);
            assert!(d <= tol, "{tag}: x differs from the CPU's by {d:e}");
            for (i, (hw, hc)) in w.report.history.iter().zip(&c.report.history).enumerate() {
                assert!(
                    (hw - hc).abs() <= tol * c.report.history[0],
                    "{tag}: residual {i}: workgroup {hw:e}, cpu {hc:e}"
                );
            }
            assert_eq!(w.report.reductions_per_iteration, 0.0, "{tag}");
        }
    }
}

#[test]
fn workgroup_follows_the_cpu_classical_cg_on_random_spd_matrices() {
    let seed: u64 = rand::random();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for n in [1, 7, 300, 1234] {
        let a = random_spd(&mut rng, n);
        let b: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        for precond in [Precond::None, Precond::Jacobi] {
            let what = format!("random spd n={n} (seed {seed})");
            assert_follows_classical(&a, &b, precond, (&[1, 2, 10, 20], 1e-9), &what);
        }
    }
}

/// Launch boundaries change nothing: `device` mode (32 iterations per launch, iterate and ρ
/// handed from one launch to the next through global memory) and `paper` mode (one
/// iteration per launch) run the same arithmetic in the same order, so after 31, 32, 33 and
/// 70 iterations their iterates and residual norms are bitwise equal.
#[test]
fn launch_boundaries_leave_the_iterates_bitwise_unchanged() {
    let Some(engine) = engine() else { return };
    let seed: u64 = rand::random();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let a = random_spd(&mut rng, 500);
    let b: Vec<f64> = (0..500).map(|_| rng.random_range(-1.0..1.0)).collect();
    for precond in [Precond::None, Precond::Jacobi] {
        for k in [31, 32, 33, 70] {
            let run = |mode| {
                let o = SolveOptions {
                    max_iter: k,
                    ..opts(Variant::Workgroup, mode, precond)
                };
                cg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap()
            };
            let (d, p) = (run(CheckMode::Device), run(CheckMode::Paper));
            let tag = format!("seed {seed} {precond} k={k}");
            assert_eq!(d.report.iterations, k, "{tag}: {}", d.report.reason_detail);
            assert_eq!(p.report.iterations, k, "{tag}: {}", p.report.reason_detail);
            assert_eq!(d.x, p.x, "{tag}");
            assert_eq!(d.report.history, p.report.history, "{tag}");
        }
    }
}

#[test]
fn workgroup_follows_the_classical_gpu_cg_on_a_shared_matrix_in_f32() {
    // mesh1e1 (48 rows) in f32 with Jacobi, within its first 10 iterations (before f32's
    // round-off floor): against the GPU's classical CG in f32, the same recurrence with
    // global sums; the differences are κ·k·2⁻²⁴.
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs::<f32>(load("mesh1e1").cast().unwrap());
    for k in [1, 2, 3, 10] {
        let run = |variant| {
            let o = SolveOptions {
                max_iter: k,
                ..opts(variant, CheckMode::Device, Precond::Jacobi)
            };
            cg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap()
        };
        let (w, c) = (run(Variant::Workgroup), run(Variant::Classical));
        assert_eq!(w.report.iterations, c.report.iterations, "k={k}");
        let d = rel_diff_inf(&w.x, &c.x);
        assert!(d <= 1e-3, "k={k}: x differs from classical's by {d:e}");
    }
}

/// Every storage format (the product runs each format's row loop with p from workgroup
/// memory); iterations as classical's in CSR ± 1, the true residual within the tolerance,
/// and the launches exact: one per 32 iterations recorded, none global-reducing.
#[test]
fn workgroup_converges_in_every_format_with_one_launch_per_32_iterations() {
    assert_cg_converges_in_every_format(Variant::Workgroup, Variant::Classical, |r, format| {
        assert_eq!(
            r.loop_counts.dispatches as usize * ITERATIONS_PER_LAUNCH,
            r.iterations_recorded,
            "{format}"
        );
        assert_eq!(r.loop_counts.reductions, 0, "{format}");
        assert_eq!(r.workgroups, 1, "{format}");
    });
}

#[test]
fn an_iteration_limit_ends_a_launch_exactly() {
    let Some(engine) = engine() else { return };
    let a: Csr<f64> = generators::from_spec("poisson2d:30").unwrap();
    let b = vec![1.0; a.nrows()];
    for (max_iter, batch, launches) in [(37, 0, 2), (37, 5, 2), (64, 0, 2), (3, 0, 1)] {
        let o = SolveOptions {
            max_iter,
            batch,
            ..opts(Variant::Workgroup, CheckMode::Device, Precond::None)
        };
        let r = cg::solve(&engine, &a, &b, None, &o, &mut ())
            .unwrap()
            .report;
        let tag = format!("max_iter {max_iter}, batch {batch}");
        assert_eq!(r.reason, StopReason::MaxIterations, "{tag}");
        assert_eq!(r.iterations, max_iter, "{tag}");
        assert_eq!(r.history.len(), max_iter + 1, "{tag}");
        assert_eq!(r.iterations_recorded, max_iter, "{tag}");
        assert_eq!(r.loop_counts.dispatches as usize, launches, "{tag}");
    }
}

#[test]
fn an_indefinite_matrix_stops_as_not_spd_like_classical() {
    let Some(engine) = engine() else { return };
    // Symmetric, diagonal of mixed signs: ⟨p,Ap⟩ or ⟨r,z⟩ turns non-positive.
    let n = 50;
    let mut coo = Coo::new(n, n);
    for i in 0..n {
        coo.push(i, i, if i % 3 == 0 { -2.0 } else { 3.0 }).unwrap();
        if i + 1 < n {
            coo.push(i, i + 1, 0.5).unwrap();
            coo.push(i + 1, i, 0.5).unwrap();
        }
    }
    let a: Csr<f64> = coo.to_csr().unwrap();
    let b = vec![1.0; n];
    for mode in [CheckMode::Device, CheckMode::Paper] {
        for precond in [Precond::None, Precond::Jacobi] {
            let run = |variant| {
                let o = SolveOptions {
                    rtol: 1e-10,
                    ..opts(variant, mode, precond)
                };
                cg::solve(&engine, &a, &b, None, &o, &mut ())
                    .unwrap()
                    .report
            };
            let (w, c) = (run(Variant::Workgroup), run(Variant::Classical));
            assert_eq!(w.reason, c.reason, "{mode} {precond}: {}", w.reason_detail);
            assert_eq!(w.reason, StopReason::NotSpd, "{mode} {precond}");
            assert!(!w.converged);
        }
    }
}

#[test]
fn too_many_rows_and_other_methods_are_refused_by_name() {
    let a: Csr<f64> = generators::from_spec("poisson2d:8").unwrap();
    let b = vec![1.0; a.nrows()];
    for method in [Method::Bicgstab, Method::Bicg, Method::CaGmres] {
        let o = SolveOptions {
            method,
            variant: Variant::Workgroup,
            ..Default::default()
        };
        let check = |e: KrylovError, what: &str| {
            assert!(
                matches!(e, KrylovError::InvalidOption(ref m) if m.contains("workgroup") && m.contains("CG")),
                "{method} {what}: {e}"
            );
        };
        check(cpu::solve(&a, &b, None, &o).unwrap_err(), "cpu");
        if let Some(engine) = engine() {
            check(
                solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap_err(),
                "gpu",
            );
        }
    }
    let Some(engine) = engine() else { return };
    let cap = max_rows(&engine, engine.shader_config(krylov_wgpu::Precision::F64));
    let side = (cap as f64).sqrt() as usize + 2;
    let big: Csr<f64> = generators::from_spec(&format!("poisson2d:{side}")).unwrap();
    assert!(big.nrows() > cap);
    let o = opts(Variant::Workgroup, CheckMode::Device, Precond::None);
    let e = cg::solve(&engine, &big, &vec![1.0; big.nrows()], None, &o, &mut ()).unwrap_err();
    assert!(
        matches!(e, KrylovError::Unsupported(ref m) if m.contains(&cap.to_string()) && m.contains("fused")),
        "{e}"
    );
}

/// `--reduction compensated` asks for compensated global reductions; the workgroup variant has
/// none (its sums run in one workgroup, plain): the report says plain, with a note why.
#[test]
fn a_compensated_request_is_reported_as_the_plain_sums_it_runs() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs::<f32>(generators::from_spec("poisson2d:12").unwrap());
    let o = SolveOptions {
        rtol: 1e-5,
        reduction: krylov_wgpu::solvers::Reduction::Compensated,
        ..opts(Variant::Workgroup, CheckMode::Device, Precond::Jacobi)
    };
    let r = cg::solve(&engine, &a, &b, None, &o, &mut ())
        .unwrap()
        .report;
    assert!(r.converged, "{}", r.reason_detail);
    assert_eq!(r.reduction, krylov_wgpu::solvers::Reduction::Plain);
    assert!(
        r.notes.iter().any(|n| n.contains("plain arithmetic")),
        "{:?}",
        r.notes
    );
}
