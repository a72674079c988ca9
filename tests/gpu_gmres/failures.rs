//! Orthogonality loss, breakdown and stagnation reported by name, trivial systems, the
//! monitor, and typed errors.

use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{ConvectionField, convection_diffusion_3d};
use krylov_wgpu::solvers::{
    CheckMode, GramSchmidt, Method, Precond, Solution, SolveOptions, StopReason, Variant, gmres,
};
use krylov_wgpu::{KrylovError, Precision, cpu};

use super::common::engine;
use super::common::problems::{neumann_laplacian_2d, singular_diag, with_ones_rhs};
use super::common::solve::{
    assert_monitor_sees_history, assert_trivial_solves, cancelled_solve, expect_err,
};
use super::{FLAVOURS, MODES, check_report, opts, solve, system, tag};

/// ‖I − VᵀV‖_F of the last cycle's basis on pores_1 (κ₁ ≈ 1e8), solved to 1e-10: CGS loses
/// orthogonality, CGS2 keeps it to round-off, MGS in between. (The value belongs to the last
/// cycle, whose length the truncation rule sets, so only orders of magnitude are asserted.)
#[test]
fn orthogonality_loss_cgs_vs_cgs2() {
    let Some(engine) = engine() else { return };
    let (a, b) = system("pores_1");
    let mut table = Vec::new();
    for flavour in FLAVOURS {
        for mode in MODES {
            let o = opts(flavour, mode, Precond::None, 1e-10);
            let r = solve(&engine, &a, &b, &o).report;
            assert!(r.converged, "{}", r.reason_detail);
            table.push((flavour, mode, r.orthogonality_loss.unwrap()));
        }
    }
    println!("orthogonality loss |I - V'V|_F of the last basis, pores_1, rtol 1e-10 (f64):");
    for (f, mode, loss) in &table {
        println!(
            "  {:>9} {:>4} {mode:>6}: {loss:.2e}",
            f.0.as_str(),
            f.1.as_str()
        );
    }
    let loss = |v, gs| {
        table
            .iter()
            .filter(|(f, _, _)| f.0 == v && f.1 == gs)
            .map(|t| t.2)
            .collect::<Vec<_>>()
    };
    for v in [Variant::Pipelined, Variant::Fused, Variant::Classical] {
        for (cgs, cgs2) in loss(v, GramSchmidt::Cgs)
            .into_iter()
            .zip(loss(v, GramSchmidt::Cgs2))
        {
            assert!(cgs2 <= 1e-13, "{v}: CGS2 loss {cgs2:e}");
            assert!(cgs >= 100.0 * cgs2, "{v}: CGS {cgs:e} vs CGS2 {cgs2:e}");
            assert!(
                cgs >= 1e-8,
                "{v}: CGS loss {cgs:e} unexpectedly small on pores_1"
            );
        }
    }
    for mgs in loss(Variant::Classical, GramSchmidt::Mgs) {
        assert!(mgs < 1e-6, "MGS loss {mgs:e}");
    }
    // f32 on a well-conditioned problem: CGS2 to round-off (ε ≈ 1.2e-7), CGS within the
    // basis condition the truncation allows (ρ0/‖r_k‖ ≤ 1/ε^(1/3) ≈ 200) times ε.
    let (a, b) = with_ones_rhs(convection_diffusion_3d::<f32>(
        6,
        0.1,
        ConvectionField::Diagonal,
    ));
    for (flavour, bound) in [(FLAVOURS[0], 1e-3), (FLAVOURS[1], 1e-5)] {
        let o = SolveOptions {
            max_iter: 20,
            ..opts(flavour, CheckMode::Device, Precond::None, 0.0)
        };
        let r = solve(&engine, &a, &b, &o).report;
        let l = r.orthogonality_loss.unwrap();
        assert!(l < bound, "f32 {} loss {l:e}", flavour.1);
    }
}

/// Every flavour of `flavours` × mode, unpreconditioned and limited to `max_iter` steps, on the
/// GPU and the CPU reference of the system `what` = (A, b): `check` gets (GPU, CPU, tag).
fn on_gpu_and_cpu(
    engine: &Engine,
    (what, a, b): (&str, &Csr<f64>, &[f64]),
    flavours: &[(Variant, GramSchmidt)],
    (max_iter, rtol): (usize, f64),
    check: impl Fn(&Solution<f64>, &Solution<f64>, &str),
) {
    for &flavour in flavours {
        for mode in MODES {
            let o = SolveOptions {
                max_iter,
                ..opts(flavour, mode, Precond::None, rtol)
            };
            let t = tag(what, &o, Precision::F64);
            let c = cpu::solve(a, b, None, &o).unwrap();
            check(&solve(engine, a, b, &o), &c, &t);
        }
    }
}

/// diag(1, 0) with b = (1, 1): A v0 lies in span{v0}… the second equation reads 0 = 1; the
/// Neumann Laplacian (constants in its kernel) with b = e_0 is consistent only in the
/// least-squares sense. Both stop with a named reason, never "converged".
#[test]
fn breakdown_and_stagnation_are_reported_by_name() {
    let Some(engine) = engine() else { return };
    let a = singular_diag();
    let diag = ("diag(1,0)", &a, &[1.0, 1.0][..]);
    on_gpu_and_cpu(&engine, diag, &FLAVOURS, (50, 1e-10), |sol, c, t| {
        assert_eq!(
            sol.report.reason,
            StopReason::Breakdown {
                quantity: "R_ii".into()
            },
            "{t}: {}",
            sol.report.reason_detail
        );
        assert_eq!(sol.report.reason, c.report.reason, "{t}");
        assert_eq!(sol.report.iterations, c.report.iterations, "{t}");
        assert!(!sol.report.converged, "{t}");
        assert!(sol.report.reason_detail.contains("R_ii"), "{t}");
        assert!(sol.x.iter().all(|v| v.is_finite()), "{t}");
        // The minimal residual over span{r0} = span{(1, 1)}: x = (1, 1), residual (0, 1).
        assert!(
            sol.x.iter().zip(&c.x).all(|(g, c)| (g - c).abs() < 1e-12),
            "{t}: {:?} vs {:?}",
            sol.x,
            c.x
        );
        assert!(
            (sol.report.relative_residual - 0.5f64.sqrt()).abs() < 1e-12,
            "{t}"
        );
    });
    // Neumann Laplacian on an 8×8 grid.
    let k = 8;
    let a = neumann_laplacian_2d(k);
    let mut b = vec![0.0; k * k];
    b[0] = 1.0;
    let neumann = ("neumann", &a, &b[..]);
    let flavours = [FLAVOURS[0], FLAVOURS[2]];
    on_gpu_and_cpu(&engine, neumann, &flavours, (150, 1e-8), |sol, c, t| {
        assert!(!sol.report.converged, "{t}: {}", sol.report.reason_detail);
        // The residual creeps towards the least-squares one, so the per-cycle gain crosses
        // the stagnation ratio (0.01 %) smoothly: rounding decides whether the last two
        // cycles count as stagnant before the limit, on either side.
        for r in [&sol.report.reason, &c.report.reason] {
            assert!(
                matches!(r, StopReason::MaxIterations | StopReason::Stagnation),
                "{t}: {r}"
            );
        }
        // The least-squares residual is the component of b along the constants: 1/k.
        assert!(
            sol.report.relative_residual >= 1.0 / k as f64 * 0.999,
            "{t}"
        );
    });
    // west0479: 471 zero diagonal entries. Unpreconditioned GMRES(30) stagnates and says so;
    // Jacobi is a typed error.
    let (a, b) = system("west0479");
    let west = ("west0479", &a, &b[..]);
    let flavours = [FLAVOURS[0], FLAVOURS[3]];
    on_gpu_and_cpu(&engine, west, &flavours, (120, 1e-8), |sol, c, t| {
        assert_eq!(sol.report.reason, StopReason::MaxIterations, "{t}");
        assert_eq!(c.report.reason, StopReason::MaxIterations, "{t}");
        assert_eq!(sol.report.iterations, 120, "{t}");
        assert!(sol.report.relative_residual > 1e-8, "{t}");
        check_report(&sol.report, &a, &b, &sol.x, t);
    });
    for flavour in flavours {
        let o = opts(flavour, CheckMode::Device, Precond::Jacobi, 1e-8);
        assert!(matches!(
            gmres::solve(&engine, &a, &b, None, &o, &mut ()),
            Err(KrylovError::ZeroDiagonal { .. })
        ));
    }
}

#[test]
fn trivial_systems_monitor_and_typed_errors() {
    let Some(engine) = engine() else { return };
    let a = convection_diffusion_3d::<f64>(4, 0.1, ConvectionField::X);
    let ones = vec![1.0; a.nrows()];
    let b = a.mul_vec(&ones).unwrap();
    for flavour in [FLAVOURS[0], FLAVOURS[2]] {
        for mode in MODES {
            let o = opts(flavour, mode, Precond::None, 1e-10);
            let t = format!("{flavour:?} {mode}");
            assert_trivial_solves(gmres::solve, &engine, &a, &ones, &o, &t);
            // The monitor sees exactly the history, and can cancel.
            assert_monitor_sees_history(gmres::solve, &engine, (&a, &b), &o, &t);
            let c = cancelled_solve(gmres::solve, &engine, (&a, &b), &o, &t);
            assert!(c.iterations <= 30);
        }
    }
    let o = opts(FLAVOURS[0], CheckMode::Device, Precond::None, 1e-8);
    let gpu = |a: &Csr<f64>, b: &[f64], x0: Option<&[f64]>, o: &SolveOptions| {
        expect_err(gmres::solve(&engine, a, b, x0, o, &mut ()))
    };
    assert!(matches!(
        gpu(&a, &b[1..], None, &o),
        KrylovError::DimensionMismatch { .. }
    ));
    assert!(matches!(
        gpu(&a, &b, Some(&ones[1..]), &o),
        KrylovError::DimensionMismatch { .. }
    ));
    let cg_opts = SolveOptions {
        method: Method::Cg,
        ..o.clone()
    };
    assert!(matches!(
        gpu(&a, &b, None, &cg_opts),
        KrylovError::InvalidOption(_)
    ));
    let no_restart = SolveOptions {
        restart: 0,
        ..o.clone()
    };
    assert!(matches!(
        gpu(&a, &b, None, &no_restart),
        KrylovError::InvalidOption(_)
    ));
    // The basis may go over two storage bindings, but R ((m + 1)² entries) must fit one: a
    // restart length that cannot fit is refused up front, naming it.
    let limit = engine.context().limits.max_storage_buffer_binding_size;
    let big = ((limit as f64 / 8.0).sqrt() as usize + 8).max(64);
    if big <= 40_000 {
        let d = Csr::<f64>::new(
            big,
            big,
            (0..=big as u32).collect(),
            (0..big as u32).collect(),
            vec![2.0; big],
        )
        .unwrap();
        let o = SolveOptions {
            restart: big,
            ..o.clone()
        };
        let e = gpu(&d, &vec![1.0; big], None, &o);
        assert!(matches!(e, KrylovError::BufferTooLarge { .. }), "{e}");
        assert!(e.to_string().contains("restart"), "{e}");
    }
}
