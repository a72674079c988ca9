//! Exact global-reduction and host-sync counts (issue #17): `reductions_per_iteration`,
//! `syncs_per_iteration`, `cycles` and `syncs_per_cycle` of every solver, against the
//! reductions its algorithm needs (the module docs' launch tables: every launch that starts
//! the first stage of a device-wide sum counts once, however many inner products it packs;
//! the stage that finishes it counts nothing).

mod common;

use common::engine;
use common::problems::{convdiff_system, with_ones_rhs};
use krylov_wgpu::cpu;
use krylov_wgpu::cpu::cagmres::ca_counts_per_cycle;
use krylov_wgpu::cpu::cagmres::tsqr::Tsqr;
use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{ConvectionField, poisson_2d_fd};
use krylov_wgpu::solvers::{
    CheckMode, GramSchmidt, Method, Precond, SolveOptions, SolveReport, StopReason, Variant,
    solve_gpu,
};

fn run(engine: &Engine, a: &Csr<f64>, b: &[f64], o: &SolveOptions) -> SolveReport {
    solve_gpu(engine, a, b, None, o, &mut ()).unwrap().report
}

fn opts(method: Method, variant: Variant, mode: CheckMode, precond: Precond) -> SolveOptions {
    SolveOptions {
        method,
        variant,
        check_mode: mode,
        precond,
        rtol: 1e-8,
        max_iter: 2000,
        ..Default::default()
    }
}

/// The per-iteration figures are the loop counts over the iterations recorded.
fn check_ratios(r: &SolveReport, tag: &str) {
    let j = r.iterations_recorded as f64;
    assert!(j > 0.0, "{tag}");
    assert_eq!(
        r.reductions_per_iteration,
        r.loop_counts.reductions as f64 / j,
        "{tag}"
    );
    assert_eq!(
        r.syncs_per_iteration,
        r.loop_counts.readbacks as f64 / j,
        "{tag}"
    );
}

/// CG, paper 000: pipelined (Alg. 2) has two reduction phases per iteration, ⟨r,z⟩ & ⟨r,r⟩
/// (l.16–17, fused into `update_cg`) and ⟨p,Ap⟩ & ⟨Ap,D⁻¹Ap⟩ (l.13–15, `spmv_dot_cg`); fused
/// CG one, all four in `update_spmv_dot_cg`;
/// classical CG (Alg. 1) one reduction per inner product: ⟨p,Ap⟩ and ⟨r,z⟩ (+ ⟨r,r⟩ when
/// z ≠ r, with Jacobi).
#[test]
fn cg_reductions_per_iteration_are_exact() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(poisson_2d_fd::<f64>(16));
    for precond in [Precond::None, Precond::Jacobi] {
        for mode in [CheckMode::Device, CheckMode::Paper] {
            for variant in [
                Variant::Pipelined,
                Variant::Classical,
                Variant::Fused,
                Variant::Workgroup,
                Variant::Cooperative,
            ] {
                let o = SolveOptions {
                    batch: 5,
                    ..opts(Method::Cg, variant, mode, precond)
                };
                let tag = format!("cg {variant} {mode:?} {precond}");
                let r = run(&engine, &a, &b, &o);
                assert!(r.converged, "{tag}: {}", r.reason_detail);
                let j = r.iterations_recorded as u64;
                let per = match variant {
                    Variant::Pipelined => 2,
                    Variant::Classical => 2 + (precond == Precond::Jacobi) as u64,
                    // All four inner products of an iteration in one (the cooperative
                    // variant's across its grid barrier).
                    Variant::Fused | Variant::Cooperative => 1,
                    // Every inner product a workgroup sum.
                    Variant::Workgroup => 0,
                    Variant::P1 => unreachable!("GMRES's variant"),
                };
                assert_eq!(r.loop_counts.reductions, per * j, "{tag}");
                assert_eq!(r.reductions_per_iteration, per as f64, "{tag}");
                check_ratios(&r, &tag);
                let syncs = match mode {
                    // One readback per batch of 5 (the workgroup variant's rounded up to one
                    // launch of 32 iterations).
                    CheckMode::Device if variant == Variant::Workgroup => j.div_ceil(32),
                    CheckMode::Device if variant == Variant::Cooperative => j.div_ceil(16),
                    CheckMode::Device => j.div_ceil(5),
                    // Pipelined: the partial sums once per iteration; classical: both inner
                    // products (3 with Jacobi, read as 2) every iteration.
                    CheckMode::Paper => match variant {
                        Variant::Pipelined
                        | Variant::Fused
                        | Variant::Workgroup
                        | Variant::Cooperative => j,
                        Variant::Classical => 2 * j,
                        Variant::P1 => unreachable!("GMRES's variant"),
                    },
                };
                assert_eq!(r.loop_counts.readbacks, syncs, "{tag}");
                assert_eq!((r.cycles, r.syncs_per_cycle), (None, None), "{tag}");
            }
        }
    }
}

/// BiCGStab, paper 000: pipelined (Alg. 4) has four reduction phases per iteration — ⟨Ap,r0*⟩
/// (l.7), ⟨s,s⟩ (l.9), ⟨As,s⟩ & ⟨As,As⟩ & ⟨As,r0*⟩ (l.11–12), ⟨r,r0*⟩ & ⟨r,r⟩ (l.17/20);
/// classical BiCGStab (Alg. 3, BLAS style) seven dots: ⟨Ap,r0*⟩, ⟨Ap,Ap⟩, ⟨s,s⟩, ⟨As,s⟩,
/// ⟨As,As⟩, ⟨r,r⟩, ⟨r,r0*⟩. A `paper` run that ends on the half step (‖s‖ met the tolerance)
/// stops after ⟨s,s⟩: its last iteration starts 2 (pipelined: no kernel 1, and kernel 4 only
/// moves x) or 3 (classical) reductions.
#[test]
fn bicgstab_reductions_per_iteration_are_exact() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff_system::<f64>(8, 0.1, ConvectionField::Circular);
    for precond in [Precond::None, Precond::Jacobi] {
        for mode in [CheckMode::Device, CheckMode::Paper] {
            for variant in [Variant::Pipelined, Variant::Classical] {
                let o = SolveOptions {
                    batch: 4,
                    rtol: 1e-10,
                    ..opts(Method::Bicgstab, variant, mode, precond)
                };
                let tag = format!("bicgstab {variant} {mode:?} {precond}");
                let r = run(&engine, &a, &b, &o);
                assert!(r.converged, "{tag}: {}", r.reason_detail);
                let j = r.iterations_recorded as u64;
                let c = &r.loop_counts;
                let expected = match (variant, mode) {
                    (Variant::Pipelined, CheckMode::Device) => 4 * j,
                    (Variant::Classical, CheckMode::Device) => 7 * j,
                    // Half step: 4j − 1 launches, the last kernel 4 without its reduction.
                    (Variant::Pipelined, CheckMode::Paper) if c.dispatches == 4 * j - 1 => {
                        4 * j - 2
                    }
                    (Variant::Pipelined, CheckMode::Paper) => 4 * j,
                    // Half step: 4j − 2 readbacks, the last iteration's 4 last dots not run.
                    (Variant::Classical, CheckMode::Paper) if c.readbacks == 4 * j - 2 => 7 * j - 4,
                    (Variant::Classical, CheckMode::Paper) => 7 * j,
                    (
                        Variant::Fused | Variant::Workgroup | Variant::Cooperative | Variant::P1,
                        _,
                    ) => {
                        unreachable!("BiCGStab has neither a fused nor a workgroup variant")
                    }
                };
                assert_eq!(c.reductions, expected, "{tag}");
                check_ratios(&r, &tag);
                assert_eq!((r.cycles, r.syncs_per_cycle), (None, None), "{tag}");
            }
        }
    }
}

/// BiCG (paper 001 §3.1): the pipelined iteration has two reduction phases, (⟨p̃,q⟩, ‖p̃‖,
/// ‖q‖) and (⟨z,r̃⟩, ‖z‖, ‖r̃‖, ‖r‖); the concurrent variant with a factored M (paper 004)
/// starts the second in `bicg_rho` after the stacked apply instead of in `bicg_update`, so
/// it has two as well. Jacobi's method: one ‖r‖² per sweep.
#[test]
fn bicg_and_jacobi_reductions_per_iteration_are_exact() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff_system::<f64>(6, 0.5, ConvectionField::Circular);
    for precond in [Precond::None, Precond::Jacobi, Precond::Ilu0] {
        let o = SolveOptions {
            batch: 4,
            ..opts(Method::Bicg, Variant::Pipelined, CheckMode::Device, precond)
        };
        let tag = format!("bicg pipelined {precond}");
        let r = run(&engine, &a, &b, &o);
        assert!(r.converged, "{tag}: {}", r.reason_detail);
        assert_eq!(
            r.loop_counts.reductions,
            2 * r.iterations_recorded as u64,
            "{tag}"
        );
        check_ratios(&r, &tag);
    }
    let (a, b) = with_ones_rhs(poisson_2d_fd::<f64>(6));
    for mode in [CheckMode::Device, CheckMode::Paper] {
        let o = SolveOptions {
            batch: 4,
            rtol: 1e-6,
            ..opts(Method::Jacobi, Variant::Pipelined, mode, Precond::None)
        };
        let tag = format!("jacobi {mode:?}");
        let r = run(&engine, &a, &b, &o);
        assert!(r.converged, "{tag}: {}", r.reason_detail);
        assert_eq!(r.reductions_per_iteration, 1.0, "{tag}");
        check_ratios(&r, &tag);
        assert_eq!(r.cycles, None, "{tag}");
    }
}

/// Global reductions of step i of a GMRES(m) cycle, from the module docs' tables: pipelined
/// (Alg. 6) step 1 has (⟨v_0,w⟩, ‖w‖²) and ξ_1; from step 2 the ⟨v_j,w⟩ of `gmres_basis_dots`
/// (none in step 2: the range j = 1 … 0 is empty), ‖w‖² after the update, with CGS2 the
/// re-orthogonalisation's ⟨v_j,w⟩ (CGS2's first pass leaves ‖w‖² to the second). Classical
/// (Alg. 5): ‖w‖² (the breakdown scale), the Gram–Schmidt inner products (MGS: one reduction
/// per j < i; CGS: one for all j; CGS2: two), R_{i,i} = ‖w‖ and ξ_i.
fn gmres_reductions_per_step(variant: Variant, gs: GramSchmidt, i: u64) -> u64 {
    match (variant, gs, i) {
        (Variant::Pipelined, _, 1) => 2,
        (Variant::Pipelined, GramSchmidt::Cgs2, 2) => 4,
        (Variant::Pipelined, GramSchmidt::Cgs2, _) => 5,
        (Variant::Pipelined, _, 2) => 3,
        (Variant::Pipelined, _, _) => 4,
        (Variant::Classical, _, 1) => 3,
        (Variant::Classical, GramSchmidt::Mgs, _) => 3 + (i - 1),
        (Variant::Classical, GramSchmidt::Cgs, _) => 4,
        (Variant::Classical, GramSchmidt::Cgs2, _) => 5,
        // Fused: the product's inner products and the update's ‖w‖², ⟨r,w⟩ (the closing
        // launches only finish); CGS2 adds `gmres_basis_dots` (its first update pass starts
        // none).
        (Variant::Fused, GramSchmidt::Cgs2, 2..) => 3,
        (Variant::Fused, _, _) => 2,
        // p(1)-GMRES: one per step, all its inner products (the closing launch only
        // finishes).
        (Variant::P1, _, _) => 1,
        // One workgroup: every inner product a workgroup sum.
        (Variant::Workgroup, _, _) => 0,
        (Variant::Cooperative, _, _) => unreachable!("CG's variant"),
    }
}

/// One full cycle: the restart residual's ‖r‖² (`gmres_residual`) and m steps.
fn gmres_reductions_per_cycle(variant: Variant, gs: GramSchmidt, m: u64) -> u64 {
    1 + (1..=m)
        .map(|i| gmres_reductions_per_step(variant, gs, i))
        .sum::<u64>()
}

const GMRES_FLAVOURS: [(Variant, GramSchmidt); 10] = [
    (Variant::Classical, GramSchmidt::Mgs),
    (Variant::Classical, GramSchmidt::Cgs),
    (Variant::Classical, GramSchmidt::Cgs2),
    (Variant::Pipelined, GramSchmidt::Cgs),
    (Variant::Pipelined, GramSchmidt::Cgs2),
    (Variant::Fused, GramSchmidt::Cgs),
    (Variant::Fused, GramSchmidt::Cgs2),
    (Variant::P1, GramSchmidt::Cgs),
    (Variant::Workgroup, GramSchmidt::Cgs),
    (Variant::Workgroup, GramSchmidt::Cgs2),
];

/// Whole cycles (rtol = 0, max_iter = 2m: no cycle ends early on this slowly converging
/// system), so the loop's reductions are exactly twice a cycle's; `device` mode reads the
/// cycle buffer once per cycle (`syncs_per_cycle` = 1); `paper` mode pipelined reads the
/// restart residual, each step's record and R (m + 2 per cycle).
#[test]
fn gmres_reductions_per_cycle_are_exact() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff_system::<f64>(5, 0.5, ConvectionField::Circular);
    let m = 6u64;
    for (variant, gs) in GMRES_FLAVOURS {
        for mode in [CheckMode::Device, CheckMode::Paper] {
            for precond in [Precond::None, Precond::Jacobi] {
                let o = SolveOptions {
                    gs,
                    restart: m as usize,
                    rtol: 0.0,
                    max_iter: 2 * m as usize,
                    ..opts(Method::Gmres, variant, mode, precond)
                };
                let tag = format!("gmres {variant} {gs:?} {mode:?} {precond}");
                let r = run(&engine, &a, &b, &o);
                assert_eq!(r.reason, StopReason::MaxIterations, "{tag}");
                assert_eq!(r.iterations_recorded as u64, 2 * m, "{tag}");
                assert_eq!(r.cycles, Some(2), "{tag}");
                let per_cycle = gmres_reductions_per_cycle(variant, gs, m);
                assert_eq!(r.loop_counts.reductions, 2 * per_cycle, "{tag}");
                assert_eq!(
                    r.reductions_per_iteration,
                    per_cycle as f64 / m as f64,
                    "{tag}"
                );
                check_ratios(&r, &tag);
                let syncs = r.syncs_per_cycle.expect("GMRES has cycles");
                match (mode, variant) {
                    (CheckMode::Device, _) => assert_eq!(syncs, 1.0, "{tag}"),
                    (
                        CheckMode::Paper,
                        Variant::Pipelined | Variant::Fused | Variant::P1 | Variant::Workgroup,
                    ) => assert_eq!(syncs, (m + 2) as f64, "{tag}"),
                    (CheckMode::Paper, Variant::Classical) => assert!(syncs > m as f64, "{tag}"),
                    (CheckMode::Paper, Variant::Cooperative) => unreachable!("CG's variant"),
                }
            }
        }
    }
}

/// Pipelined GMRES's measured reductions against CA-GMRES(s, m)'s count (paper 002,
/// `ca_counts_per_cycle`, what its GPU port keeps): about 1/s of them, and CA-GMRES's count
/// per cycle is below pipelined GMRES's for every s.
#[test]
fn ca_gmres_needs_about_one_in_s_of_pipelined_gmres_reductions() {
    let Some(engine) = engine() else { return };
    // Large enough that no step of a 16-step cycle meets the truncation ε^(1/3)·ρ0.
    let (a, b) = convdiff_system::<f64>(12, 0.5, ConvectionField::Circular);
    let m = 16usize;
    let o = SolveOptions {
        gs: GramSchmidt::Cgs,
        restart: m,
        rtol: 0.0,
        max_iter: m,
        ..opts(
            Method::Gmres,
            Variant::Pipelined,
            CheckMode::Device,
            Precond::None,
        )
    };
    let r = run(&engine, &a, &b, &o);
    assert_eq!(r.cycles, Some(1), "{}", r.reason_detail);
    let per_cycle = gmres_reductions_per_cycle(Variant::Pipelined, GramSchmidt::Cgs, m as u64);
    assert_eq!(r.loop_counts.reductions, per_cycle);
    let pipelined = per_cycle as f64;
    for s in [2usize, 4, 8] {
        let (ca, _) = ca_counts_per_cycle(s, m, Tsqr::CholQr);
        let ratio = ca as f64 / pipelined;
        assert!(
            ratio > 0.5 / s as f64 && ratio < 1.5 / s as f64,
            "s = {s}: CA-GMRES {ca} vs pipelined GMRES {pipelined} reductions per cycle"
        );
    }
}

/// The CPU reference of GMRES reports the reductions and syncs the algorithm needs per cycle
/// (paper 002's count); the other CPU solvers report none and have no cycles.
#[test]
fn cpu_reports_fill_the_fields() {
    let (a, b) = convdiff_system::<f64>(5, 0.5, ConvectionField::Circular);
    let m = 10;
    for (variant, gs, per_cycle) in [
        (
            Variant::Classical,
            GramSchmidt::Mgs,
            1 + (2..=11).sum::<usize>(),
        ),
        (Variant::Classical, GramSchmidt::Cgs2, 1 + 3 * 10),
        (Variant::Pipelined, GramSchmidt::Cgs, 1 + 2 * 10),
    ] {
        let o = SolveOptions {
            gs,
            restart: m,
            ..opts(Method::Gmres, variant, CheckMode::Device, Precond::None)
        };
        let r = cpu::solve(&a, &b, None, &o).unwrap().report;
        assert!(r.iterations > 0, "{gs:?}: {}", r.reason_detail);
        assert_eq!(r.reductions_per_iteration, per_cycle as f64 / m as f64);
        assert_eq!(r.syncs_per_cycle, Some((1 + m) as f64));
        assert_eq!(r.cycles, Some(r.iterations.div_ceil(m)));
    }
    let r = cpu::solve(
        &a,
        &b,
        None,
        &opts(
            Method::Bicgstab,
            Variant::Pipelined,
            CheckMode::Device,
            Precond::None,
        ),
    )
    .unwrap()
    .report;
    assert_eq!(
        (r.reductions_per_iteration, r.syncs_per_iteration),
        (0.0, 0.0)
    );
    assert_eq!((r.cycles, r.syncs_per_cycle), (None, None));
}
