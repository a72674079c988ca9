//! GMRES(m) over several logical devices against GMRES on one device and the CPU reference,
//! its exact launch, reduction and read counts per step and per cycle, its stops and
//! refusals.

use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::convection_diffusion_2d;
use krylov_wgpu::solvers::dist::solve_dist;
use krylov_wgpu::solvers::{
    GramSchmidt, Method, Precond, Side, SolveOptions, StopReason, Variant, solve_gpu,
};
use krylov_wgpu::{KrylovError, Precision};

use super::common::{self, problems::rhs};
use super::{cg, devices};

fn gmres(precond: Precond, rtol: f64, restart: usize) -> SolveOptions {
    SolveOptions {
        method: Method::Gmres,
        variant: Variant::Classical,
        gs: GramSchmidt::Cgs2,
        restart,
        ..cg(precond, rtol)
    }
}

/// ‖x − y‖/‖y‖.
fn relative_difference(x: &[f64], y: &[f64]) -> f64 {
    let d: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
    let n: f64 = y.iter().map(|b| b * b).sum();
    (d / n).sqrt()
}

/// GMRES(m) on 1, 2 and 3 logical devices against classical CGS2 GMRES(m) on one device and
/// the CPU reference (whose difference from the one device bounds what rounding alone does),
/// and the solution against the CPU reference's.
fn gmres_matches_one_device(
    name: &str,
    a: &Csr<f64>,
    b: &[f64],
    opts: &SolveOptions,
    counts: &[usize],
) {
    let Some(ctx) = common::context() else { return };
    if !ctx.supports(Precision::F64) {
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
    for &k in counts {
        let sol = solve_dist(&devices(k).unwrap(), a, b, None, opts).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{name} on {k} devices: {}", r.reason_detail);
        let (it1, itk) = (one.report.iterations as i64, r.iterations as i64);
        eprintln!(
            "{name} gmres({}) k={k}: {itk} vs {it1} (cpu {}, spread {spread}), cycles {:?}",
            opts.restart, cpu.report.iterations, r.cycles
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
        // The CPU reference's x and ours both have a residual below rtol·‖b‖: they differ by
        // at most about κ(A)·rtol each; these matrices' κ is below 1e5 (rtol 1e-8).
        let diff = relative_difference(&sol.x, &cpu.x);
        assert!(diff < 1e-3, "{name} on {k} devices: x differs by {diff:e}");
        // One product per step, exchanging every halo once.
        let d = r.devices.as_ref().unwrap();
        assert_eq!(
            d.exchange_values_per_iteration,
            d.devices.iter().map(|p| p.halo).sum::<usize>()
        );
        if itk == it1 {
            assert_eq!(r.cycles, one.report.cycles, "{name}");
        }
    }
}

#[test]
fn gmres_on_devices_matches_one_device_on_nonsymmetric_matrices() {
    for name in ["sherman4", "pde2961"] {
        let (a, b) = common::problems::shipped_system(name, &["sherman4"]);
        gmres_matches_one_device(name, &a, &b, &gmres(Precond::Jacobi, 1e-8, 30), &[2, 3]);
    }
    let (a, b) = common::problems::with_rhs(convection_diffusion_2d::<f64>(16, 10.0));
    // A short restart: many cycles, each closed by the update of x and the restart residual
    // on the devices.
    let opts = gmres(Precond::None, 1e-8, 10);
    gmres_matches_one_device("convdiff2d:16", &a, &b, &opts, &[1, 2, 3]);
}

#[test]
fn gmres_in_f32_meets_its_tolerance_and_counts_are_exact() {
    let Some(devs) = devices(2) else { return };
    let a = convection_diffusion_2d::<f32>(24, 20.0);
    let b = rhs(&a);
    let sol = solve_dist(&devs, &a, &b, None, &gmres(Precond::Jacobi, 1e-5, 10)).unwrap();
    let r = &sol.report;
    assert!(r.converged, "{}", r.reason_detail);
    assert!(r.relative_residual <= 1e-5 * (1.0 + 1e-3));
    assert_eq!(r.restarts, 0);
    // Per step on each device: the next basis vector, its gather, the product over interior
    // and boundary rows (one reduction, two reads), then — from the second step of a cycle —
    // the orthogonalisation (one reduction, one read): 5 launches, 2 reductions, 3 reads
    // (4, 1, 2 on a cycle's first step). Per cycle and once before the first: the update of
    // x (not before the first), x's gather, the residual's two launches (one reduction, two
    // reads).
    let (n, c) = (r.iterations as u64, r.cycles.unwrap() as u64);
    assert!(c >= 2, "{c} cycles");
    assert_eq!(r.loop_counts.dispatches, 5 * n + 3 * c + 3);
    assert_eq!(r.loop_counts.reductions, 2 * n + 1);
    assert_eq!(r.loop_counts.readbacks, 3 * n + c + 2);
    // Submits: three per exchanging phase (update and gather; interior; boundary and sums),
    // two for the orthogonalisation (its launch; its sums' read).
    assert_eq!(r.loop_counts.submits, 3 * n + 2 * (n - c) + 3 * (c + 1));
    assert_eq!(r.syncs_per_cycle, Some((3 * n + c + 2) as f64 / c as f64));
}

#[test]
fn gmres_on_devices_stops_at_the_iteration_limit_inside_a_cycle() {
    let Some(devs) = devices(2) else { return };
    let a = convection_diffusion_2d::<f32>(20, 10.0);
    let b = rhs(&a);
    let opts = SolveOptions {
        max_iter: 7,
        ..gmres(Precond::None, 1e-12, 5)
    };
    let sol = solve_dist(&devs, &a, &b, None, &opts).unwrap();
    let r = &sol.report;
    assert_eq!(r.reason, StopReason::MaxIterations);
    assert!(!r.converged);
    assert_eq!((r.iterations, r.cycles), (7, Some(2)));
    assert_eq!(r.history.len(), 8);
    // What the solve returns is x after the last cycle's update: its true residual is below
    // the initial one and is what the report says.
    assert!(r.relative_residual < 1.0 && r.relative_residual.is_finite());
    assert!(sol.x.iter().all(|v| v.is_finite()));
}

#[test]
fn gmres_on_devices_takes_the_left_side_only_without_a_preconditioner() {
    let Some(devs) = devices(2) else { return };
    let a = convection_diffusion_2d::<f32>(12, 5.0);
    let b = rhs(&a);
    let left = |precond| SolveOptions {
        side: Side::Left,
        ..gmres(precond, 1e-5, 30)
    };
    let err = solve_dist(&devs, &a, &b, None, &left(Precond::Jacobi)).unwrap_err();
    assert!(matches!(err, KrylovError::Unsupported(m) if m.contains("on the right only")));
    // With M = I both sides are the same run.
    let sol = solve_dist(&devs, &a, &b, None, &left(Precond::None)).unwrap();
    assert!(sol.report.converged, "{}", sol.report.reason_detail);
}
