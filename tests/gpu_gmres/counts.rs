//! Exact launch and transfer counts: per step of a cycle (by difference) and of whole solves,
//! in both check modes, as the module docs of the solver state them.

use krylov_wgpu::Precision;
use krylov_wgpu::matrix::generators::ConvectionField;
use krylov_wgpu::solvers::{CheckMode, GramSchmidt, Precond, SolveOptions, StopReason, Variant};

use super::common::engine;
use super::common::problems::convdiff_system;
use super::{FLAVOURS, MODES, PRECONDS, opts, solve, tag};

/// Launches of step i of a cycle (i ≥ 1) as the module docs state them.
fn launches_per_step(o: &SolveOptions, i: usize) -> u64 {
    let jac = (o.precond == Precond::Jacobi) as u64;
    let i = i as u64;
    match (o.variant, o.gs, o.check_mode) {
        // Paper 000 §3.3: two launches in the first step, four from the second on.
        (Variant::Pipelined, GramSchmidt::Cgs2, _) => match i {
            1 => 2,
            _ => 6,
        },
        (Variant::Pipelined, _, _) => match i {
            1 => 2,
            _ => 4,
        },
        (Variant::Classical, gs, mode) => {
            // (first step, MGS, CGS, CGS2) launches in `device` and in `paper` mode.
            let (first, mgs, cgs, cgs2) = match mode {
                CheckMode::Device => (8, 3 * i + 6, 12, 15),
                CheckMode::Paper => (5, 2 * i + 4, 8, 10),
            };
            jac + match (gs, i) {
                (_, 1) => first,
                (GramSchmidt::Mgs, _) => mgs,
                (GramSchmidt::Cgs, _) => cgs,
                (GramSchmidt::Cgs2, _) => cgs2,
            }
        }
        // Fused: product + update (CGS2: + its second pass, two launches, from step 2); in
        // `paper` mode each step also closes itself in a third launch (in `device` mode the
        // next step's product closes it, and one launch per cycle closes the last step).
        (Variant::Fused, gs, mode) => {
            let cgs2 = 2 * (gs == GramSchmidt::Cgs2 && i >= 2) as u64;
            2 + cgs2 + (mode == CheckMode::Paper) as u64
        }
        // p(1)-GMRES: one launch per step; in `paper` mode each step also closes itself.
        (Variant::P1, _, mode) => 1 + (mode == CheckMode::Paper) as u64,
        // One workgroup: a cycle is one launch in `device` mode (counted per cycle), a step
        // one launch in `paper` mode.
        (Variant::Workgroup, _, mode) => (mode == CheckMode::Paper) as u64,
        (Variant::Cooperative, _, _) => unreachable!("CG's variant"),
    }
}

/// (readbacks, uploads) of step i in `paper` mode, pipelined: the step record; classical: one
/// readback per inner product, one upload per value the device needs.
fn paper_transfers_per_step(o: &SolveOptions, i: usize) -> (u64, u64) {
    let i = i as u64;
    match (o.variant, o.gs, i) {
        (Variant::Pipelined | Variant::Fused | Variant::P1 | Variant::Workgroup, _, _) => (1, 0),
        (Variant::Classical, _, 1) => (3, 1),
        (Variant::Classical, GramSchmidt::Mgs, _) => (i + 2, i + 1),
        (Variant::Classical, GramSchmidt::Cgs, _) => (4, 3),
        (Variant::Classical, GramSchmidt::Cgs2, _) => (5, 4),
        (Variant::Cooperative, _, _) => unreachable!("CG's variant"),
    }
}

/// Expected loop counts (dispatches, submits, readbacks, uploads) of a solve that never
/// converges: `cycles` full cycles of `m` steps then one of `last` steps (rtol = 0, no
/// truncation), ending with the last update applied alone.
fn expected_counts(o: &SolveOptions, cycle_steps: &[usize]) -> (u64, u64, u64, u64) {
    let classical = o.variant == Variant::Classical;
    // Fused and p(1)-GMRES close a cycle's last step in one more launch; one-workgroup
    // GMRES's `device` cycle is one launch.
    let fused = matches!(o.variant, Variant::Fused | Variant::P1)
        || (o.variant == Variant::Workgroup && o.check_mode == CheckMode::Device);
    let (mut d, mut s, mut rb, mut up) = (0u64, 0u64, 0u64, 0u64);
    for (c, &k) in cycle_steps.iter().enumerate() {
        let update = (c > 0) as u64;
        let steps: u64 = (1..=k).map(|i| launches_per_step(o, i)).sum();
        match o.check_mode {
            CheckMode::Device => {
                // One submit: [update] + residual (+ finish ρ0 + v0 = r/ρ0) + the steps (+ the
                // closing of the last step, fused); one readback of the cycle buffer; η
                // uploaded before it.
                d += update + 1 + 2 * classical as u64 + steps + fused as u64;
                s += 1;
                rb += 1;
                up += update;
            }
            CheckMode::Paper => {
                // Restart: [update] + residual, readback of ‖r‖² partials.
                d += update + 1 + steps + classical as u64;
                s += 1;
                rb += 1;
                up += update;
                let (r, u): (u64, u64) = (1..=k)
                    .map(|i| paper_transfers_per_step(o, i))
                    .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
                rb += r;
                up += u;
                s += r;
                if classical {
                    up += 1; // ρ0 sent up for v0 = r/ρ0
                } else {
                    rb += 1; // R once per cycle
                    s += 1;
                }
            }
        }
    }
    // The last cycle's update, applied on its own.
    (d + 1, s + 1, rb, up + 1)
}

#[test]
fn launch_and_transfer_counts_are_exact() {
    let Some(engine) = engine() else { return };
    // A slowly converging system: no cycle ends early (rtol = 0, no truncation, no breakdown).
    let (a, b) = convdiff_system::<f64>(5, 0.5, ConvectionField::Circular);
    let m = 6;
    for flavour in FLAVOURS {
        for mode in MODES {
            for precond in PRECONDS {
                let o = SolveOptions {
                    restart: m,
                    max_iter: 2 * m + 3,
                    ..opts(flavour, mode, precond, 0.0)
                };
                let t = tag("counts", &o, Precision::F64);
                let r = solve(&engine, &a, &b, &o).report;
                assert_eq!(
                    r.reason,
                    StopReason::MaxIterations,
                    "{t}: {}",
                    r.reason_detail
                );
                assert_eq!(r.iterations, 2 * m + 3, "{t}");
                assert_eq!(r.iterations_recorded, 2 * m + 3, "{t}");
                let (d, s, rb, up) = expected_counts(&o, &[m, m, 3]);
                let c = &r.loop_counts;
                assert_eq!(
                    (c.dispatches, c.submits, c.readbacks, c.uploads),
                    (d, s, rb, up),
                    "{t}: (dispatches, submits, readbacks, uploads)"
                );
                if mode == CheckMode::Device {
                    // No transfer inside a cycle: one readback (R, ξ, ρ0) and one upload (η)
                    // per cycle.
                    assert_eq!(c.readbacks, 3, "{t}");
                }
                // Per step, by difference: max_iter = j − 1 vs j inside one cycle.
                let run = |j| {
                    let o = SolveOptions {
                        max_iter: j,
                        ..o.clone()
                    };
                    solve(&engine, &a, &b, &o).report.loop_counts
                };
                let mut prev = run(1);
                for j in 2..=4 {
                    let now = run(j);
                    assert_eq!(
                        now.dispatches - prev.dispatches,
                        launches_per_step(&o, j),
                        "{t}: launches of step {j}"
                    );
                    if mode == CheckMode::Device {
                        assert_eq!(
                            (now.readbacks, now.uploads),
                            (1, 1),
                            "{t}: transfers of a {j}-step solve"
                        );
                    } else {
                        let (rb, up) = paper_transfers_per_step(&o, j);
                        assert_eq!(
                            (now.readbacks - prev.readbacks, now.uploads - prev.uploads),
                            (rb, up),
                            "{t}: transfers of step {j}"
                        );
                    }
                    prev = now;
                }
            }
        }
    }
    // The pipelined kernels of paper 000: 2 launches in the first step, 4 from the second on.
    let p = opts(FLAVOURS[0], CheckMode::Device, Precond::None, 0.0);
    let per: Vec<u64> = (1..=5).map(|i| launches_per_step(&p, i)).collect();
    assert_eq!(per, [2, 4, 4, 4, 4]);
    // Fused GMRES: two per step (+ one per cycle).
    let f = opts(FLAVOURS[5], CheckMode::Device, Precond::None, 0.0);
    let per: Vec<u64> = (1..=5).map(|i| launches_per_step(&f, i)).collect();
    assert_eq!(per, [2, 2, 2, 2, 2]);
    // p(1)-GMRES: one per step (+ one per cycle).
    let p1 = opts(FLAVOURS[7], CheckMode::Device, Precond::None, 0.0);
    let per: Vec<u64> = (1..=5).map(|i| launches_per_step(&p1, i)).collect();
    assert_eq!(per, [1, 1, 1, 1, 1]);
    // One-workgroup GMRES: none per step, one per cycle.
    let w = opts(FLAVOURS[8], CheckMode::Device, Precond::None, 0.0);
    let per: Vec<u64> = (1..=5).map(|i| launches_per_step(&w, i)).collect();
    assert_eq!(per, [0, 0, 0, 0, 0]);
}

/// A solve that converges inside its first cycle, in `device` mode: that cycle (one submit,
/// one readback), then — its estimate having met the threshold — the update and the restart
/// residual alone (one upload of η, one readback of ‖r‖²), which confirms convergence. No step
/// is recorded past the converging cycle. (rtol = 1e-5: above the truncation ε^(1/3) ≈ 6e-6 at
/// which a cycle ends anyway.)
#[test]
fn device_mode_converging_solve_counts() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff_system::<f64>(6, 0.2, ConvectionField::X);
    for flavour in FLAVOURS {
        let o = SolveOptions {
            restart: 60,
            ..opts(flavour, CheckMode::Device, Precond::None, 1e-5)
        };
        let t = tag("one cycle", &o, Precision::F64);
        let r = solve(&engine, &a, &b, &o).report;
        assert!(r.converged && r.iterations < 60, "{t}: {}", r.reason_detail);
        // expected_counts of one cycle ends with the update alone; here the restart residual
        // goes with it, and is read back.
        let (d, s, rb, up) = expected_counts(&o, &[60]);
        let c = &r.loop_counts;
        assert_eq!(
            (c.dispatches, c.submits, c.readbacks, c.uploads),
            (d + 1, s, rb + 1, up),
            "{t}"
        );
        assert_eq!((s, up), (2, 1), "{t}");
        assert_eq!(r.iterations_recorded, 60, "{t}");
        assert_eq!(r.batch_size, 60, "{t}");
    }
}
