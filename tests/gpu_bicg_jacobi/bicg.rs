//! BiCG against the CPU ensemble (f64 and f32, shared matrices and convection–diffusion),
//! exact launch/transfer counts, breakdowns by name, and west0479.

use krylov_wgpu::Scalar;
use krylov_wgpu::matrix::{Coo, Csr};
use krylov_wgpu::solvers::{CheckMode, Precond, SolveOptions, StopReason, Variant, bicg};
use krylov_wgpu::{KrylovError, cpu};

use super::common::engine;
use super::common::problems::{from_rows, load, ones_rhs, with_ones_rhs};
use super::common::solve::{VARIANTS, count_cases, variants_and_modes};
use super::{bicg_opts, check_bicg, convdiff, hist_tol, load_nonsymmetric, reports_f64_and_f32};

/// [`check_bicg`] on pores_1, sherman4 and pde2961 in precision T.
fn check_shared_nonsymmetric<T: Scalar>(rtol: f64, strict: bool) {
    let Some(engine) = engine() else { return };
    for name in ["pores_1", "sherman4", "pde2961"] {
        let (a, b) = load_nonsymmetric::<T>(name);
        check_bicg(&engine, &a, &b, rtol, hist_tol::<T>(), strict, name);
    }
}

#[test]
fn bicg_f64_matches_cpu_on_shared_nonsymmetric_matrices() {
    check_shared_nonsymmetric::<f64>(1e-10, true);
}

#[test]
fn bicg_matches_cpu_on_convection_diffusion_both_precisions() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff::<f64>(10);
    check_bicg(
        &engine,
        &a,
        &b,
        1e-10,
        hist_tol::<f64>(),
        true,
        "convdiff3d:10",
    );
    let (a, b) = convdiff::<f32>(10);
    check_bicg(
        &engine,
        &a,
        &b,
        1e-5,
        hist_tol::<f32>(),
        true,
        "convdiff3d:10",
    );
    // Well conditioned: the solutions agree with the CPU's too (κ·rtol).
    let (a, b) = convdiff::<f64>(6);
    for variant in VARIANTS {
        let o = bicg_opts(variant, CheckMode::Device, Precond::Jacobi, 1e-12);
        let g = bicg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
        assert!(g.report.converged, "{}", g.report.reason_detail);
        let err = g.x.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
        assert!(err < 1e-9, "{variant}: max |x − 1| = {err:e}");
    }
}

#[test]
fn bicg_f32_on_shared_matrices_is_honest_and_follows_the_cpu() {
    check_shared_nonsymmetric::<f32>(1e-4, false);
}

#[test]
fn bicg_launch_and_transfer_counts_are_exact() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff::<f32>(8);
    let at_bytes = a.transpose().storage_bytes() as u64;
    for (precond, variant, mode, batch, tag) in count_cases() {
        let o = SolveOptions {
            batch,
            ..bicg_opts(variant, mode, precond, 1e-5)
        };
        let r = bicg::solve(&engine, &a, &b, None, &o, &mut ())
            .unwrap()
            .report;
        assert!(r.converged, "{tag}: {}", r.reason_detail);
        assert_eq!(r.transpose_bytes, Some(at_bytes), "{tag}: Aᵀ memory");
        let j = r.iterations_recorded as u64;
        let c = &r.loop_counts;
        let jac = precond == Precond::Jacobi;
        match (variant, mode) {
            (Variant::Pipelined, CheckMode::Paper) => {
                // bicg_update + bicg_direction_spmv; one readback of both slots.
                assert_eq!(j, r.iterations as u64, "{tag}");
                assert_eq!(c.dispatches, 2 * j, "{tag}");
                assert_eq!((c.readbacks, c.uploads, c.submits), (j, 0, j), "{tag}");
                assert_eq!(r.transfers_per_iteration, 1.0, "{tag}");
            }
            (Variant::Pipelined, CheckMode::Device) => {
                assert_eq!(c.dispatches, 2 * j, "{tag}");
                assert_eq!(c.readbacks, j.div_ceil(batch as u64), "{tag}");
                assert_eq!(c.uploads, 0, "{tag}");
                // One more batch is queued while the converging one is read.
                assert!(
                    j >= r.iterations as u64 && j < (r.iterations + 2 * batch) as u64,
                    "{tag}: recorded {j}"
                );
            }
            (Variant::Classical, CheckMode::Paper) => {
                // spmv ×2, dot ×3 | axpy ×3, dot, [diag ×2,] dot ×2 [+1] | xpay ×2
                // (the xpays of the last iteration are never recorded).
                let per = if jac { 16 } else { 13 };
                assert_eq!(j, r.iterations as u64, "{tag}");
                assert_eq!(c.dispatches, per * j - 2, "{tag}");
                assert_eq!((c.readbacks, c.uploads), (2 * j, 2 * j), "{tag}");
                assert_eq!(r.transfers_per_iteration, 4.0, "{tag}");
            }
            (Variant::Classical, CheckMode::Device) => {
                // + bicg_finish after ⟨p̃,q⟩ and after ρ.
                let per = if jac { 18 } else { 15 };
                assert_eq!(c.dispatches, per * j, "{tag}");
                assert_eq!(c.readbacks, j.div_ceil(batch as u64), "{tag}");
                assert_eq!(c.uploads, 0, "{tag}");
            }
            (Variant::Fused | Variant::Workgroup | Variant::Cooperative | Variant::P1, _) => {
                unreachable!("BiCG has neither a fused nor a workgroup variant")
            }
        }
        if variant == Variant::Pipelined {
            assert_eq!(r.dispatches_per_iteration, 2.0, "{tag}");
        }
        assert!(
            r.to_json()
                .contains(&format!("\"transpose_bytes\":{at_bytes}"))
        );
    }
}

#[test]
fn bicg_breakdowns_are_reported_by_name() {
    let Some(engine) = engine() else { return };
    // ⟨x, Ax⟩ = 0 for every x (skew-symmetric): ⟨p̃0, Ap0⟩ = ‖r0‖-weighted 0 at once.
    let n = 64;
    let mut skew = Coo::new(n, n);
    for i in 0..n - 1 {
        skew.push(i, i + 1, 1.0).unwrap();
        skew.push(i + 1, i, -1.0).unwrap();
    }
    let skew = skew.to_csr().unwrap();
    // A diagonal of mixed signs with Jacobi: ρ0 = ⟨D⁻¹r0, r0⟩ = 1 − 1 = 0.
    let mixed = from_rows(&[&[1.0, 0.5], &[0.25, -1.0]]);
    // jpwh_991 with b = A·1: b is a left eigenvector, so r̃1 = 0 (the CPU test's case).
    let jpwh = load("jpwh_991");
    let jb = ones_rhs(&jpwh);
    // (matrix, rhs, preconditioner, the quantity that breaks down, at which iteration)
    type Case<'a> = (&'a Csr<f64>, Vec<f64>, Precond, &'static str, usize);
    // (Breakdowns before any iteration: a restart from the same x would repeat them.)
    let cases: [Case<'_>; 2] = [
        (&skew, vec![1.0; n], Precond::None, bicg::BREAKDOWN_PTQ, 0),
        (
            &mixed,
            vec![1.0, 1.0],
            Precond::Jacobi,
            bicg::BREAKDOWN_RHO,
            0,
        ),
    ];
    // jpwh_991's breakdown comes after one iteration: BiCG restarts with r̃ := r and
    // converges, GPU as CPU, with the restart logged by name.
    for (variant, mode) in variants_and_modes() {
        let o = bicg_opts(variant, mode, Precond::None, 1e-8);
        let cpu_r = cpu::solve(&jpwh, &jb, None, &o).unwrap().report;
        let gpu_r = bicg::solve(&engine, &jpwh, &jb, None, &o, &mut ())
            .unwrap()
            .report;
        for (r, who) in [(&cpu_r, "CPU"), (&gpu_r, "GPU")] {
            let tag = format!("jpwh_991 {variant} {mode} {who}");
            assert!(r.converged, "{tag}: {}", r.reason_detail);
            assert!(
                r.restart_log[0].starts_with(&format!("breakdown of {}", bicg::BREAKDOWN_RHO))
                    && r.restart_log[0].contains("at iteration 1:"),
                "{tag}: {:?}",
                r.restart_log
            );
        }
    }
    for (a, b, precond, quantity, at) in cases {
        let o = bicg_opts(Variant::Pipelined, CheckMode::Device, precond, 1e-8);
        let cpu_r = cpu::solve(a, &b, None, &o).unwrap().report;
        let want = StopReason::Breakdown {
            quantity: quantity.into(),
        };
        assert_eq!((&cpu_r.reason, cpu_r.iterations), (&want, at), "CPU");
        for (variant, mode) in variants_and_modes() {
            let o = bicg_opts(variant, mode, precond, 1e-8);
            for r in reports_f64_and_f32(&engine, (bicg::solve, bicg::solve), (a, &b), &o) {
                let tag = format!("{quantity} {variant} {mode} {}", r.precision);
                assert_eq!(r.reason, want, "{tag}: {}", r.reason_detail);
                assert_eq!(r.iterations, at, "{tag}");
                assert!(!r.converged, "{tag}");
                assert!(
                    r.reason_detail.contains(quantity),
                    "{tag}: {}",
                    r.reason_detail
                );
            }
        }
    }
}

#[test]
fn bicg_never_converges_on_west0479() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(load("west0479"));
    let o = SolveOptions {
        max_iter: 300,
        ..bicg_opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8)
    };
    let cpu_r = cpu::solve(&a, &b, None, &o).unwrap().report;
    assert!(!cpu_r.converged);
    for (variant, mode) in variants_and_modes() {
        let o = SolveOptions {
            variant,
            check_mode: mode,
            ..o.clone()
        };
        let r = bicg::solve(&engine, &a, &b, None, &o, &mut ())
            .unwrap()
            .report;
        let tag = format!("{variant} {mode}");
        assert!(!r.converged, "{tag}: {}", r.reason_detail);
        assert_eq!(
            r.reason.name(),
            cpu_r.reason.name(),
            "{tag}: {}",
            r.reason_detail
        );
        assert!(r.relative_residual > 1e-8, "{tag}");
    }
    // With Jacobi it is a typed error: west0479 has zero diagonal entries.
    let o = bicg_opts(Variant::Pipelined, CheckMode::Device, Precond::Jacobi, 1e-8);
    assert!(matches!(
        bicg::solve(&engine, &a, &b, None, &o, &mut ()),
        Err(KrylovError::ZeroDiagonal { .. })
    ));
}
