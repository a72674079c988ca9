//! The GPU Jacobi iteration: exact counts, agreement with the CPU on diagonally dominant
//! matrices, and divergence reported by name.

use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::random_nonsymmetric;
use krylov_wgpu::solvers::{CheckMode, SolveOptions, StopReason, jacobi};
use krylov_wgpu::{Scalar, cpu};

use super::common::engine;
use super::common::problems::{ones_rhs, shifted_poisson, with_ones_rhs};
use super::common::solve::{MODES, true_rel, variants_and_modes};
use super::{convdiff, jacobi_opts, reports_f64_and_f32};

#[test]
fn jacobi_iteration_counts_are_exact() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(random_nonsymmetric::<f32>(2000, 7, 11));
    for (mode, batch) in [
        (CheckMode::Paper, 0),
        (CheckMode::Device, 1),
        (CheckMode::Device, 5),
    ] {
        let o = SolveOptions {
            batch,
            ..jacobi_opts(mode, 1e-5)
        };
        let r = jacobi::solve(&engine, &a, &b, None, &o, &mut ())
            .unwrap()
            .report;
        let tag = format!("{mode} k={batch}");
        assert!(r.converged, "{tag}");
        assert_eq!(r.transpose_bytes, None);
        let j = r.iterations_recorded as u64;
        let c = &r.loop_counts;
        // One fused launch per sweep.
        assert_eq!(c.dispatches, j, "{tag}");
        assert_eq!(r.dispatches_per_iteration, 1.0, "{tag}");
        assert_eq!(c.uploads, 0, "{tag}");
        match mode {
            CheckMode::Paper => {
                assert_eq!(j, r.iterations as u64, "{tag}");
                assert_eq!((c.readbacks, c.submits), (j, j), "{tag}");
                assert_eq!(r.transfers_per_iteration, 1.0, "{tag}");
            }
            CheckMode::Device => {
                assert_eq!(c.readbacks, j.div_ceil(batch as u64), "{tag}");
                assert!(
                    j >= r.iterations as u64 && j < (r.iterations + 2 * batch) as u64,
                    "{tag}: recorded {j}"
                );
            }
        }
    }
}

/// The Jacobi iteration in both modes agrees with the CPU: same count (±1), true residual.
fn check_jacobi<T: Scalar>(engine: &Engine, a: &Csr<T>, b: &[T], rtol: f64, what: &str) {
    let reference = cpu::solve(a, b, None, &jacobi_opts(CheckMode::Device, rtol)).unwrap();
    assert!(reference.report.converged, "{what}: CPU");
    for (variant, mode) in variants_and_modes() {
        let o = SolveOptions {
            variant,
            ..jacobi_opts(mode, rtol)
        };
        let tag = format!("{what} {variant} {mode} {}", T::PRECISION);
        let sol = jacobi::solve(engine, a, b, None, &o, &mut ()).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{tag}: {}", r.reason_detail);
        assert_eq!(
            r.variant, variant,
            "{tag}: the report says the variant asked for"
        );
        assert!(
            r.iterations.abs_diff(reference.report.iterations) <= 1,
            "{tag}: GPU {} vs CPU {}",
            r.iterations,
            reference.report.iterations
        );
        assert_eq!(r.history.len(), r.iterations + 1, "{tag}");
        let rel = true_rel(a, b, &sol.x);
        assert!(rel <= rtol * 1.001, "{tag}: true residual {rel:e}");
        assert!((rel - r.relative_residual).abs() <= 1e-3 * rel, "{tag}");
    }
}

#[test]
fn jacobi_iteration_converges_on_diagonally_dominant_matrices() {
    let Some(engine) = engine() else { return };
    let a = random_nonsymmetric::<f64>(2000, 7, 42);
    assert!(a.is_diagonally_dominant(true));
    let b = ones_rhs(&a);
    check_jacobi(&engine, &a, &b, 1e-10, "random_nonsymmetric:2000");
    let (a, b) = with_ones_rhs::<f32>(a.cast().unwrap());
    check_jacobi(&engine, &a, &b, 1e-5, "random_nonsymmetric:2000");
    // Weakly (irreducibly) dominant: slow, hundreds of sweeps, still the CPU's count.
    let (a, b) = convdiff::<f64>(8);
    check_jacobi(&engine, &a, &b, 1e-8, "convdiff3d:8");
}

#[test]
fn jacobi_iteration_reports_divergence() {
    let Some(engine) = engine() else { return };
    let two = Csr::<f64>::new(
        2,
        2,
        vec![0, 2, 4],
        vec![0, 1, 0, 1],
        vec![1.0, 2.0, 2.0, 1.0],
    )
    .unwrap();
    for (a, what) in [
        (two, "[[1,2],[2,1]]"),
        (shifted_poisson(12, 2.0), "poisson - 2I"),
    ] {
        let b = ones_rhs(&a);
        let o = jacobi_opts(CheckMode::Device, 1e-8);
        let reference = cpu::solve(&a, &b, None, &o).unwrap();
        assert_eq!(reference.report.reason, StopReason::Diverged);
        for mode in MODES {
            let o = jacobi_opts(mode, 1e-8);
            for r in reports_f64_and_f32(&engine, (jacobi::solve, jacobi::solve), (&a, &b), &o) {
                let tag = format!("{what} {mode} {}", r.precision);
                assert_eq!(r.reason, StopReason::Diverged, "{tag}: {}", r.reason_detail);
                assert!(!r.converged, "{tag}");
                assert!(
                    r.reason_detail.contains("not diagonally dominant enough"),
                    "{tag}: {}",
                    r.reason_detail
                );
                assert!(
                    r.iterations.abs_diff(reference.report.iterations) <= 1,
                    "{tag}: diverged at {} (CPU {})",
                    r.iterations,
                    reference.report.iterations
                );
                let last = *r.history.last().unwrap();
                assert!(last > cpu::DIVERGENCE_FACTOR * r.history[0], "{tag}");
                assert!(r.to_json().contains("\"reason\":\"diverged\""), "{tag}");
            }
        }
    }
}
