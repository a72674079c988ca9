//! CA-GMRES(s, m) over several logical devices against CA-GMRES on one device and the CPU
//! reference: iterations, solution, the per-cycle report, exact reduction counts, and the
//! refusals of what is not built on several devices.

use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{convection_diffusion_2d, poisson_2d_fd};
use krylov_wgpu::solvers::dist::solve_dist;
use krylov_wgpu::solvers::{Basis, Method, Precond, SolveOptions, Tsqr, solve_gpu};
use krylov_wgpu::{KrylovError, Precision};

use super::common::{self, problems::rhs};
use super::{cg, devices};

fn cagmres(precond: Precond, s: usize, m: usize, basis: Basis, tsqr: Tsqr) -> SolveOptions {
    SolveOptions {
        method: Method::CaGmres,
        s_step: s,
        restart: m,
        basis,
        tsqr,
        ..cg(precond, 1e-8)
    }
}

/// ‖x − y‖/‖y‖.
fn relative_difference(x: &[f64], y: &[f64]) -> f64 {
    let d: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
    let n: f64 = y.iter().map(|b| b * b).sum();
    (d / n).sqrt()
}

/// CA-GMRES on 2 and 3 logical devices against one device and the CPU reference (whose
/// difference from the one device bounds what rounding alone does).
fn matches_one_device(name: &str, a: &Csr<f64>, opts: &SolveOptions) {
    let Some(ctx) = common::context() else { return };
    if !ctx.supports(Precision::F64) {
        eprintln!("the test adapter has no f64 shaders: the f64 cases do nothing here");
        return;
    }
    let b = rhs(a);
    let one = solve_gpu(&Engine::new(ctx), a, &b, None, opts, &mut ()).unwrap();
    assert!(
        one.report.converged,
        "{name}: one device: {}",
        one.report.reason_detail
    );
    let cpu = krylov_wgpu::cpu::solve(a, &b, None, opts).unwrap();
    assert!(
        cpu.report.converged,
        "{name}: cpu: {}",
        cpu.report.reason_detail
    );
    let spread = (cpu.report.iterations as i64 - one.report.iterations as i64).abs();
    for k in [2, 3] {
        let sol = solve_dist(&devices(k).unwrap(), a, &b, None, opts).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{name} on {k} devices: {}", r.reason_detail);
        let (it1, itk) = (one.report.iterations as i64, r.iterations as i64);
        let ca = r.cagmres.as_ref().expect("the CA-GMRES section");
        let ca1 = one.report.cagmres.as_ref().unwrap();
        eprintln!(
            "{name} k={k}: {itk} vs {it1} (cpu {}), cycles {} vs {}, orth {:?}",
            cpu.report.iterations,
            ca.cycles.len(),
            ca1.cycles.len(),
            r.orthogonality_loss
        );
        assert!(
            (itk - it1).abs() <= 1 + spread,
            "{name}: {k} devices took {itk} iterations, one device {it1} (±{spread} CPU vs GPU)"
        );
        assert!(
            r.relative_residual <= opts.rtol * (1.0 + 1e-3),
            "{name}: {}",
            r.relative_residual
        );
        // Both residuals are below rtol·‖b‖ = 1e-8‖b‖; κ of these matrices is below 1e4.
        let diff = relative_difference(&sol.x, &cpu.x);
        assert!(diff < 1e-4, "{name} on {k} devices: x differs by {diff:e}");
        // The same shifts (Ritz values of the same first cycle, to rounding) and the
        // algorithm's counts per cycle.
        assert_eq!(ca.shifts.len(), ca1.shifts.len(), "{name}");
        assert_eq!(ca.reductions_per_cycle, ca1.reductions_per_cycle, "{name}");
        assert!(
            r.orthogonality_loss.is_some_and(|l| l < 1e-8),
            "{name}: {:?}",
            r.orthogonality_loss
        );
        assert_eq!(r.devices.as_ref().unwrap().devices.len(), k);
        // Every reduction the device ran is one the cycles account for (an Arnoldi step 2,
        // a block 2 + the TSQR's, a restart 1), and one more: the restart that ended it.
        let counted: usize = ca.cycles.iter().map(|c| c.reductions).sum();
        assert_eq!(r.loop_counts.reductions, counted as u64 + 1, "{name}");
    }
}

#[test]
fn cagmres_on_devices_matches_one_device_newton_cholqr2() {
    let a = convection_diffusion_2d::<f64>(40, 20.0);
    matches_one_device(
        "convdiff2d:40",
        &a,
        &cagmres(Precond::None, 5, 30, Basis::Newton, Tsqr::CholQr2),
    );
    // A real nonsymmetric matrix (oil reservoir), with Jacobi.
    let (a, _) = common::problems::shipped_system("sherman4", &["sherman4"]);
    matches_one_device(
        "sherman4 jacobi",
        &a,
        &cagmres(Precond::Jacobi, 5, 30, Basis::Newton, Tsqr::CholQr2),
    );
}

#[test]
fn cagmres_on_devices_matches_one_device_jacobi_monomial_and_svqr() {
    let a = poisson_2d_fd::<f64>(32);
    matches_one_device(
        "poisson2d:32 jacobi monomial cholqr",
        &a,
        &cagmres(Precond::Jacobi, 4, 20, Basis::Monomial, Tsqr::CholQr),
    );
    let c = convection_diffusion_2d::<f64>(30, 5.0);
    matches_one_device(
        "convdiff2d:30 svqr",
        &c,
        &cagmres(Precond::None, 4, 24, Basis::Newton, Tsqr::Svqr),
    );
}

#[test]
fn cagmres_on_devices_refuses_what_is_not_built_there() {
    let Some(devs) = devices(2) else { return };
    let a = poisson_2d_fd::<f32>(8);
    let b = rhs(&a);
    let err = |o: SolveOptions| solve_dist(&devs, &a, &b, None, &o).unwrap_err();
    let caqr = cagmres(Precond::None, 4, 20, Basis::Newton, Tsqr::Caqr);
    assert!(matches!(err(caqr), KrylovError::Unsupported(m) if m.contains("cholqr2")));
    let ilu = cagmres(Precond::Ilu0, 4, 20, Basis::Newton, Tsqr::CholQr2);
    assert!(matches!(err(ilu), KrylovError::Unsupported(_)));
    // m + 1 above a block's rows.
    let long = cagmres(Precond::None, 5, 40, Basis::Newton, Tsqr::CholQr2);
    assert!(matches!(err(long), KrylovError::InvalidOption(m) if m.contains("row block")));
}

#[test]
fn cagmres_on_devices_in_f32_counts_are_exact() {
    let Some(devs) = devices(2) else { return };
    let a = convection_diffusion_2d::<f32>(24, 10.0);
    let b = rhs(&a);
    let (s, m) = (4, 12);
    let opts = SolveOptions {
        rtol: 1e-5,
        ..cagmres(Precond::Jacobi, s, m, Basis::Monomial, Tsqr::CholQr)
    };
    let sol = solve_dist(&devs, &a, &b, None, &opts).unwrap();
    let r = &sol.report;
    assert!(r.converged, "{}", r.reason_detail);
    assert!(r.relative_residual <= 1e-5 * (1.0 + 1e-3));
    let ca = r.cagmres.as_ref().unwrap();
    assert!(ca.cycles.len() >= 2, "{} cycles", ca.cycles.len());
    // On each device, per cycle: the restart phase (load, gather, the residual over interior
    // and boundary rows: one reduction, two reads), q₀ = r/ρ, then per block of s vectors the
    // matrix powers (the start vector's load and deep gather, one read: the exchange; then s
    // steps on the extended rows, no read: the next read waits for them), BOrth's first pass
    // (dots, finish, update: one reduction and one read) and its second fused with CholQR
    // (the dots of [Q, W]ᵀW, finish, W·R⁻¹ − Q·C₂R⁻¹: the same), and x's update. Once more
    // at the end: the restart that confirms convergence.
    let cycles = ca.cycles.iter();
    let blocks: u64 = cycles.clone().map(|c| c.blocks as u64).sum();
    let c = ca.cycles.len() as u64;
    let s = s as u64;
    assert_eq!(
        blocks,
        ca.cycles
            .iter()
            .map(|c| c.columns.div_ceil(4) as u64)
            .sum::<u64>()
    );
    assert_eq!(
        r.loop_counts.reductions,
        cycles.map(|c| c.reductions as u64).sum::<u64>() + 1
    );
    assert_eq!(r.loop_counts.reductions, c + 2 * blocks + 1);
    assert_eq!(r.loop_counts.readbacks, 2 * c + 3 * blocks + 2);
    assert_eq!(r.loop_counts.dispatches, 6 * c + (s + 7) * blocks + 4);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("one exchange per block of a depth-4 halo"))
    );
    // About 1/s of GMRES's reductions, and one read per block where GMRES has three per vector.
    assert!(
        r.reductions_per_iteration < 1.0,
        "{}",
        r.reductions_per_iteration
    );
    assert!(r.syncs_per_iteration < 1.5, "{}", r.syncs_per_iteration);
}
