//! BiCG with its A- and Aᵀ-recurrences on two logical devices (paper 004 §3.1) against the
//! classical BiCG on one device and the CPU reference: iterations, solutions, exact launch,
//! read and upload counts, the 2n values exchanged per iteration, breakdowns and refusals.

use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::generators::{ConvectionField, poisson_2d_fd};
use krylov_wgpu::matrix::{Coo, Csr};
use krylov_wgpu::solvers::dist::solve_dist;
use krylov_wgpu::solvers::{
    CheckMode, Method, Precond, SolveOptions, StopReason, Trisolve, Variant, bicg,
};
use krylov_wgpu::{KrylovError, Scalar};

use super::common::{
    self,
    problems::{convdiff_system, load, ones_rhs, rhs},
};
use super::devices;

fn bicg_opts(precond: Precond, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::Bicg,
        variant: Variant::Classical,
        check_mode: CheckMode::Paper,
        precond,
        rtol,
        max_iter: 2000,
        ..Default::default()
    }
}

/// ‖x − y‖/‖y‖ in f64.
fn relative_difference<T: Scalar>(x: &[T], y: &[T]) -> f64 {
    let d: f64 = x
        .iter()
        .zip(y)
        .map(|(a, b)| (a.as_f64() - b.as_f64()).powi(2))
        .sum();
    let n: f64 = y.iter().map(|b| b.as_f64().powi(2)).sum();
    (d / n).sqrt()
}

/// Two devices against one (classical, paper mode: the same recurrence, the same kernels)
/// and the CPU reference: iterations within the CPU-vs-GPU spread (+1), the true residual
/// below rtol, x next to one device's (`x_tol`: the two runs differ only in where each
/// vector lives, so by rounding of the order of the iterations times ε).
fn matches_one_device<T: Scalar>(name: &str, a: &Csr<T>, b: &[T], opts: &SolveOptions, x_tol: f64) {
    let Some(ctx) = common::context() else { return };
    if !ctx.supports(T::PRECISION) {
        eprintln!("the test adapter has no f64 shaders: {name} does nothing here");
        return;
    }
    let one = bicg::solve(&Engine::new(ctx), a, b, None, opts, &mut ()).unwrap();
    assert!(
        one.report.converged,
        "{name}: one device: {}",
        one.report.reason_detail
    );
    let cpu = krylov_wgpu::cpu::solve(a, b, None, opts).unwrap();
    let spread = (cpu.report.iterations as i64 - one.report.iterations as i64).abs();
    let two = solve_dist(&devices(2).unwrap(), a, b, None, opts).unwrap();
    let r = &two.report;
    eprintln!(
        "{name} {} {}: two devices {} iterations, one {}, CPU {}",
        T::PRECISION,
        opts.precond,
        r.iterations,
        one.report.iterations,
        cpu.report.iterations
    );
    assert!(r.converged, "{name}: {}", r.reason_detail);
    assert_eq!(r.method, Method::Bicg);
    let (it1, it2) = (one.report.iterations as i64, r.iterations as i64);
    assert!(
        (it2 - it1).abs() <= 1 + spread,
        "{name}: two devices {it2} iterations, one device {it1} (CPU spread {spread})"
    );
    assert!(
        r.relative_residual <= opts.rtol * (1.0 + 1e-3),
        "{name}: true residual {}",
        r.relative_residual
    );
    let diff = relative_difference(&two.x, &one.x);
    assert!(
        diff <= x_tol,
        "{name}: x differs from one device's by {diff:e}"
    );
    assert!(two.x.iter().all(|v| v.as_f64().is_finite()), "{name}");
    // Both devices hold every row; p̃ and r̃ cross once per iteration each.
    let d = r.devices.as_ref().unwrap();
    assert_eq!(d.devices.len(), 2, "{name}");
    assert!(d.devices.iter().all(|p| p.rows == a.nrows()), "{name}");
    assert!(
        d.queue_submit_seconds > 0.0 && d.queue_submit_seconds <= d.submit_seconds,
        "{name}: {} s in queue submit of {} s submitting",
        d.queue_submit_seconds,
        d.submit_seconds
    );
    assert_eq!(d.exchange_values_per_iteration, 2 * a.nrows(), "{name}");
    assert_eq!(
        d.exchange_bytes_per_iteration,
        (2 * a.nrows() * size_of::<T>()) as u64,
        "{name}"
    );
    assert!(r.transpose_bytes.is_some(), "{name}");
    if opts.precond != Precond::None {
        assert_eq!(
            r.preconditioner.as_ref().map(|p| p.kind),
            Some(opts.precond),
            "{name}"
        );
    }
}

#[test]
fn two_device_bicg_matches_one_device_and_the_cpu() {
    if common::context().is_none() {
        return;
    }
    // Paper 004's 3D convection–diffusion (circular convection), every M in f64 and f32.
    let (a, b) = convdiff_system::<f64>(10, 0.1, ConvectionField::Circular);
    for precond in [Precond::None, Precond::Jacobi, Precond::Ilu0, Precond::Ilut] {
        matches_one_device("convdiff3d 10", &a, &b, &bicg_opts(precond, 1e-8), 1e-9);
    }
    let (a32, b32) = convdiff_system::<f32>(10, 0.1, ConvectionField::Circular);
    for precond in [Precond::None, Precond::Ilu0] {
        matches_one_device("convdiff3d 10", &a32, &b32, &bicg_opts(precond, 1e-5), 1e-3);
    }
    // IC(0) on an SPD matrix (M⁻ᵀ = M⁻¹ on the second device).
    let p = poisson_2d_fd::<f64>(20);
    matches_one_device(
        "poisson2d 20",
        &p,
        &rhs(&p),
        &bicg_opts(Precond::Ic0, 1e-8),
        1e-9,
    );
    // Real nonsymmetric matrices with ILU(0).
    for name in ["sherman4", "pde2961"] {
        let a = load(name);
        let b = rhs(&a);
        matches_one_device(name, &a, &b, &bicg_opts(Precond::Ilu0, 1e-8), 1e-6);
    }
}

/// Launches per iteration: device 1 runs p̃'s update, Aᵀp̃, r̃'s update and M⁻ᵀ (Dᵀ); device
/// 0 p's update, Ap, three inner products, x's and r's updates, M⁻¹ (D) and four inner
/// products — 14 + D + Dᵀ, two fewer on the first iteration (p = z, p̃ = z̃ are copies made
/// at setup). Reads: two partial-sum reads on device 0, p̃ and r̃ from device 1. Uploads: p̃
/// and r̃ to device 0, α's ⟨p̃,q⟩ and [ρ, ρ_old] to both devices.
#[test]
fn two_device_bicg_counts_are_exact() {
    let Some(_) = common::context() else { return };
    let (a, b) = convdiff_system::<f32>(8, 0.1, ConvectionField::Circular);
    let n = a.nrows();
    for (precond, apply) in [
        (Precond::None, 0),
        (Precond::Jacobi, 1),
        (Precond::Ilu0, 6), // sweeps:3, on both sides
    ] {
        let opts = SolveOptions {
            trisolve: Trisolve::Sweeps(3),
            ..bicg_opts(precond, 1e-5)
        };
        let r = solve_dist(&devices(2).unwrap(), &a, &b, None, &opts)
            .unwrap()
            .report;
        assert!(r.converged, "{precond}: {}", r.reason_detail);
        let j = r.iterations as u64;
        assert_eq!(r.iterations_recorded as u64, j, "{precond}");
        let c = &r.loop_counts;
        assert_eq!(
            c.dispatches,
            (14 + 2 * apply) * j - 2,
            "{precond}: {j} iterations"
        );
        assert_eq!(c.readbacks, 4 * j, "{precond}");
        assert_eq!(c.uploads, 6 * j, "{precond}");
        let vec_bytes = (n * size_of::<f32>()) as u64;
        assert!(c.bytes_uploaded >= 2 * j * vec_bytes, "{precond}");
        assert_eq!(r.syncs_per_iteration, 4.0, "{precond}");
        assert_eq!(
            r.devices.as_ref().unwrap().syncs_per_iteration_per_device,
            2.0,
            "{precond}"
        );
        assert!(r.notes[0].contains("BiCG on two devices"), "{:?}", r.notes);
    }
}

#[test]
fn two_device_bicg_breakdowns_are_named_and_restarted_as_on_one_device() {
    if common::context().is_none() {
        return;
    }
    // Skew-symmetric: ⟨p̃0, Ap0⟩ = 0 at once (no progress to restart from).
    let n = 64;
    let mut skew = Coo::new(n, n);
    for i in 0..n - 1 {
        skew.push(i, i + 1, 1.0).unwrap();
        skew.push(i + 1, i, -1.0).unwrap();
    }
    let skew: Csr<f32> = skew.to_csr().unwrap().cast().unwrap();
    let r = solve_dist(
        &devices(2).unwrap(),
        &skew,
        &vec![1.0; n],
        None,
        &bicg_opts(Precond::None, 1e-6),
    )
    .unwrap()
    .report;
    let want = StopReason::Breakdown {
        quantity: bicg::BREAKDOWN_PTQ.into(),
    };
    assert_eq!((&r.reason, r.iterations), (&want, 0), "{}", r.reason_detail);
    assert!(!r.converged);
    // jpwh_991 with b = A·1: r̃ vanishes after one iteration; BiCG restarts with r̃ := r and
    // converges, as the CPU reference and one device do.
    let a: Csr<f32> = load("jpwh_991").cast().unwrap();
    let b = ones_rhs(&a);
    let opts = bicg_opts(Precond::None, 1e-5);
    let r = solve_dist(&devices(2).unwrap(), &a, &b, None, &opts)
        .unwrap()
        .report;
    assert!(r.converged, "{}", r.reason_detail);
    assert!(
        r.restart_log[0].starts_with(&format!("breakdown of {}", bicg::BREAKDOWN_RHO))
            && r.restart_log[0].contains("at iteration 1:"),
        "{:?}",
        r.restart_log
    );
}

#[test]
fn two_device_bicg_refusals_are_clear() {
    if common::context().is_none() {
        return;
    }
    let a = poisson_2d_fd::<f32>(8);
    let b = vec![1.0f32; a.nrows()];
    let opts = bicg_opts(Precond::None, 1e-6);
    match solve_dist(&devices(3).unwrap(), &a, &b, None, &opts) {
        Err(KrylovError::Unsupported(m)) => assert!(m.contains("two devices"), "{m}"),
        other => panic!("three devices: {:?}", other.map(|s| s.report.reason)),
    }
    // A wrong-length right-hand side is the usual input error.
    match solve_dist(&devices(2).unwrap(), &a, &b[1..], None, &opts) {
        Err(KrylovError::DimensionMismatch { .. }) => {}
        other => panic!("short b: {:?}", other.map(|s| s.report.reason)),
    }
}
