//! BiCGStab over several logical devices, classical (three phases per iteration) and
//! pipelined (two), against one device and the CPU reference, their exact counts, and a
//! breakdown it cannot restart from.

use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::dist::solve_dist;
use krylov_wgpu::solvers::{Method, Precond, SolveOptions, StopReason, Variant, solve_gpu};

use super::common::{self, problems::rhs};
use super::{cg, devices};

pub(super) fn bicgstab(precond: Precond, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::Bicgstab,
        variant: Variant::Classical,
        ..cg(precond, rtol)
    }
}

fn pipelined(precond: Precond, rtol: f64) -> SolveOptions {
    SolveOptions {
        variant: Variant::Pipelined,
        ..bicgstab(precond, rtol)
    }
}

/// BiCGStab of `opts.variant` on `k` logical devices against the same variant on one device
/// and the CPU reference (whose difference from the one device bounds what rounding alone
/// does).
fn bicgstab_matches_one_device(name: &str, a: &Csr<f64>, b: &[f64], opts: &SolveOptions) {
    bicgstab_matches_one_device_on(name, a, b, opts, &[1, 2, 3]);
}

fn bicgstab_matches_one_device_on(
    name: &str,
    a: &Csr<f64>,
    b: &[f64],
    opts: &SolveOptions,
    ks: &[usize],
) {
    let rtol = opts.rtol;
    let Some(ctx) = common::context() else { return };
    if !ctx.supports(krylov_wgpu::Precision::F64) {
        eprintln!("the test adapter has no f64 shaders: the f64 cases do nothing here");
        return;
    }
    let one = solve_gpu(&Engine::new(ctx), a, b, None, opts, &mut ()).unwrap();
    assert!(
        one.report.converged,
        "{name}: one device: {}",
        one.report.reason_detail
    );
    let cpu = krylov_wgpu::cpu::solve(a, b, None, opts).unwrap();
    let spread = (cpu.report.iterations as i64 - one.report.iterations as i64).abs();
    for &k in ks {
        let sol = solve_dist(&devices(k).unwrap(), a, b, None, opts).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{name} on {k} devices: {}", r.reason_detail);
        assert_eq!(r.variant, opts.variant);
        let err = sol
            .x
            .iter()
            .zip(&cpu.x)
            .map(|(u, v)| (u - v).abs())
            .fold(0.0f64, f64::max);
        assert!(err.is_finite(), "{name}: the solution is not finite");
        let (it1, itk) = (one.report.iterations as i64, r.iterations as i64);
        eprintln!(
            "{name} {} bicgstab k={k}: {itk} vs {it1} (cpu {}, spread {spread}), max |x - x_cpu| {err:.1e}",
            opts.variant, cpu.report.iterations
        );
        assert!(
            (itk - it1).abs() <= 1 + spread,
            "{name}: {k} devices took {itk} iterations, one device {it1} (±{spread} CPU vs GPU)"
        );
        assert!(
            r.relative_residual <= rtol * (1.0 + 1e-3),
            "{name}: {}",
            r.relative_residual
        );
        let d = r.devices.as_ref().unwrap();
        // Two products per iteration, each exchanging every halo once.
        assert_eq!(
            d.exchange_values_per_iteration,
            2 * d.devices.iter().map(|p| p.halo).sum::<usize>()
        );
    }
}

#[test]
fn bicgstab_on_devices_matches_one_device_on_nonsymmetric_matrices() {
    for name in ["sherman4", "pde2961"] {
        let (a, b) = common::problems::shipped_system(name, &["sherman4"]);
        bicgstab_matches_one_device(name, &a, &b, &bicgstab(Precond::Jacobi, 1e-8));
    }
    let (a, b) =
        common::problems::with_rhs(krylov_wgpu::matrix::generators::convection_diffusion_2d::<
            f64,
        >(30, 50.0));
    bicgstab_matches_one_device("convdiff2d:30", &a, &b, &bicgstab(Precond::None, 1e-8));
}

#[test]
fn pipelined_bicgstab_on_devices_matches_one_device() {
    let (a, b) = common::problems::shipped_system("sherman4", &["sherman4"]);
    bicgstab_matches_one_device_on(
        "sherman4",
        &a,
        &b,
        &pipelined(Precond::Jacobi, 1e-8),
        &[2, 3],
    );
    let (a, b) =
        common::problems::with_rhs(krylov_wgpu::matrix::generators::convection_diffusion_2d::<
            f64,
        >(30, 50.0));
    bicgstab_matches_one_device_on(
        "convdiff2d:30",
        &a,
        &b,
        &pipelined(Precond::None, 1e-8),
        &[1, 2],
    );
}

#[test]
fn pipelined_bicgstab_needs_two_phases_per_iteration() {
    let Some(devs) = devices(2) else { return };
    let a = krylov_wgpu::matrix::generators::convection_diffusion_2d::<f32>(24, 20.0);
    let b = rhs(&a);
    let sol = solve_dist(&devs, &a, &b, None, &pipelined(Precond::Jacobi, 1e-5)).unwrap();
    let r = &sol.report;
    assert!(r.converged, "{}", r.reason_detail);
    assert!(r.relative_residual <= 1e-5 * (1.0 + 1e-3));
    assert_eq!(r.restarts, 0);
    // Per iteration on each device: s and its gather, the product over interior and boundary
    // rows; the x, r update, the direction update and its gather, the next product's two
    // launches: 9 launches, four reads (halo, sums, halo, sums). Before the first iteration
    // the first product (2 launches, one read of its sums).
    let n = r.iterations as u64;
    assert_eq!(r.loop_counts.dispatches, 9 * n + 2);
    assert_eq!(r.loop_counts.readbacks, 4 * n + 1);
    // Four global reductions per iteration (s, As, x and r, Ap), one before.
    assert_eq!(r.loop_counts.reductions, 4 * n + 1);
    // The classical recurrence on the same system: five reads per iteration.
    let c = solve_dist(&devs, &a, &b, None, &bicgstab(Precond::Jacobi, 1e-5)).unwrap();
    assert!(c.report.converged, "{}", c.report.reason_detail);
    assert_eq!(
        c.report.loop_counts.readbacks,
        5 * c.report.iterations as u64 - 1
    );
    assert!(r.syncs_per_iteration < c.report.syncs_per_iteration);
}

#[test]
fn bicgstab_in_f32_meets_its_tolerance_and_counts_are_exact() {
    let Some(devs) = devices(2) else { return };
    let a = krylov_wgpu::matrix::generators::convection_diffusion_2d::<f32>(24, 20.0);
    let b = rhs(&a);
    let sol = solve_dist(&devs, &a, &b, None, &bicgstab(Precond::Jacobi, 1e-5)).unwrap();
    let r = &sol.report;
    assert!(r.converged, "{}", r.reason_detail);
    assert!(r.relative_residual <= 1e-5 * (1.0 + 1e-3));
    // Per iteration on each device: the direction update and its gather (not on the first),
    // the product over interior and boundary rows, the half step and its gather, the second
    // product's two launches, the x, r update: 9 launches (7 on the first); four global
    // reductions; five reads (halo, sums, halo, sums, sums; four on the first).
    let n = r.iterations as u64;
    assert_eq!(r.restarts, 0);
    assert_eq!(r.loop_counts.dispatches, 9 * n - 2);
    assert_eq!(r.loop_counts.reductions, 4 * n);
    assert_eq!(r.loop_counts.readbacks, 5 * n - 1);
    assert_eq!(r.reductions_per_iteration, 4.0);
}

#[test]
fn bicgstab_stops_on_a_breakdown_it_cannot_restart_from() {
    let Some(devs) = devices(2) else { return };
    // A skew-symmetric A: ⟨Ap, r0*⟩ = ⟨Ar, r⟩ = 0 at once, so α's denominator breaks down
    // before any progress (no restart can help: it would start from the same x).
    let n = 40;
    let mut e = Vec::new();
    for i in 0..n - 1 {
        e.push((i, i + 1, 1.0f32));
        e.push((i + 1, i, -1.0f32));
    }
    let a = Csr::from_triplets(n, &e).unwrap();
    let b = vec![1.0f32; n];
    let sol = solve_dist(&devs, &a, &b, None, &bicgstab(Precond::None, 1e-6)).unwrap();
    assert!(
        matches!(&sol.report.reason, StopReason::Breakdown { quantity } if quantity == "<Ap, r0*>")
    );
    assert!(!sol.report.converged);
}
