//! Exact launch and transfer counts of every variant × mode × batch, and the exact stop of
//! `device` mode.

use krylov_wgpu::matrix::generators::poisson_2d_fd;
use krylov_wgpu::solvers::cg::cooperative::ITERATIONS_PER_LAUNCH as COOPERATIVE_PER_LAUNCH;
use krylov_wgpu::solvers::cg::workgroup::ITERATIONS_PER_LAUNCH;
use krylov_wgpu::solvers::{CheckMode, Precond, SolveOptions, Variant};

use super::common::engine;
use super::common::problems::with_ones_rhs;
use super::common::solve::{CG_VARIANTS, assert_device_mode_stops_exactly_in, count_cases_of};
use super::{opts, solve};

#[test]
fn launch_and_transfer_counts_are_exact() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(poisson_2d_fd::<f32>(20));
    for (precond, variant, mode, batch, tag) in count_cases_of(&CG_VARIANTS) {
        let o = SolveOptions {
            batch,
            ..opts(variant, mode, precond, 1e-5)
        };
        let r = solve(&engine, &a, &b, &o).report;
        assert!(r.converged, "{tag}");
        let j = r.iterations_recorded;
        let c = &r.loop_counts;
        let jac = precond == Precond::Jacobi;
        match (variant, mode) {
            (Variant::Pipelined, CheckMode::Paper) => {
                assert_eq!(j, r.iterations, "{tag}");
                assert_eq!(
                    c.dispatches,
                    2 * j as u64,
                    "{tag}: 2 launches per iteration"
                );
                assert_eq!(
                    (c.readbacks, c.uploads, c.submits),
                    (j as u64, 0, j as u64),
                    "{tag}"
                );
                assert_eq!(r.transfers_per_iteration, 1.0, "{tag}");
            }
            (Variant::Pipelined, CheckMode::Device) => {
                assert_eq!(
                    c.dispatches,
                    2 * j as u64,
                    "{tag}: 2 launches per iteration"
                );
                assert_eq!(
                    c.readbacks,
                    j.div_ceil(batch) as u64,
                    "{tag}: one readback per batch"
                );
                assert_eq!(c.uploads, 0, "{tag}");
                assert!(
                    r.transfers_per_iteration <= 1.0 / batch as f64 + 1e-12,
                    "{tag}"
                );
                // One more batch is queued while the converging one is read.
                assert!(
                    j >= r.iterations && j < r.iterations + 2 * batch,
                    "{tag}: recorded {j}"
                );
            }
            (Variant::Classical, CheckMode::Paper) => {
                // spmv, dot, axpy, axpy, [diag_scale, dot,] dot, xpay (none after the last).
                let per = if jac { 8 } else { 6 };
                assert_eq!(j, r.iterations, "{tag}");
                assert_eq!(c.dispatches, (per * j - 1) as u64, "{tag}");
                assert_eq!(
                    (c.readbacks, c.uploads),
                    (2 * j as u64, 2 * j as u64),
                    "{tag}"
                );
                assert_eq!(r.transfers_per_iteration, 4.0, "{tag}");
            }
            (Variant::Classical, CheckMode::Device) => {
                // + a dot_finish per inner product.
                let per = if jac { 11 } else { 8 };
                assert_eq!(c.dispatches, (per * j) as u64, "{tag}");
                assert_eq!(c.readbacks, j.div_ceil(batch) as u64, "{tag}");
                assert_eq!(c.uploads, 0, "{tag}");
            }
            (Variant::Fused, CheckMode::Paper) => {
                // update_spmv_dot_cg and one readback of its slot per iteration.
                assert_eq!(j, r.iterations, "{tag}");
                assert_eq!(
                    (c.dispatches, c.reductions),
                    (j as u64, j as u64),
                    "{tag}: 1 launch, 1 reduction per iteration"
                );
                assert_eq!(
                    (c.readbacks, c.uploads, c.submits),
                    (j as u64, 0, j as u64),
                    "{tag}"
                );
            }
            (Variant::Workgroup, CheckMode::Paper) => {
                // cg_workgroup of one iteration and one readback of its ‖r‖² per iteration.
                assert_eq!(j, r.iterations, "{tag}");
                assert_eq!(
                    (c.dispatches, c.reductions),
                    (j as u64, 0),
                    "{tag}: 1 launch per iteration, no global reduction"
                );
                assert_eq!(
                    (c.readbacks, c.uploads, c.submits),
                    (j as u64, 0, j as u64),
                    "{tag}"
                );
            }
            (Variant::Workgroup, CheckMode::Device) => {
                // Batches of whole launches of 32 iterations: one readback per batch.
                let per_batch = batch.next_multiple_of(ITERATIONS_PER_LAUNCH);
                assert_eq!(j % per_batch, 0, "{tag}: recorded {j}");
                assert_eq!(
                    (c.dispatches, c.reductions),
                    ((j / ITERATIONS_PER_LAUNCH) as u64, 0),
                    "{tag}: 1 launch per 32 iterations, no global reduction"
                );
                assert_eq!(c.readbacks, (j / per_batch) as u64, "{tag}");
                assert_eq!(c.uploads, 0, "{tag}");
                assert!(
                    j >= r.iterations && j < r.iterations + 2 * per_batch,
                    "{tag}: recorded {j}"
                );
            }
            (Variant::Cooperative, CheckMode::Paper) => {
                // cg_cooperative of one iteration and one readback of its slot per iteration.
                assert_eq!(j, r.iterations, "{tag}");
                assert_eq!(
                    (c.dispatches, c.reductions),
                    (j as u64, j as u64),
                    "{tag}: 1 launch, 1 reduction per iteration"
                );
                assert_eq!(
                    (c.readbacks, c.uploads, c.submits),
                    (j as u64, 0, j as u64),
                    "{tag}"
                );
            }
            (Variant::Cooperative, CheckMode::Device) => {
                // Batches of whole launches of 16 iterations, one reduction per iteration.
                let per_batch = batch.next_multiple_of(COOPERATIVE_PER_LAUNCH);
                assert_eq!(j % per_batch, 0, "{tag}: recorded {j}");
                assert_eq!(
                    (c.dispatches, c.reductions),
                    ((j / COOPERATIVE_PER_LAUNCH) as u64, j as u64),
                    "{tag}: 1 launch per 16 iterations, 1 reduction per iteration"
                );
                assert_eq!(c.readbacks, (j / per_batch) as u64, "{tag}");
                assert_eq!(c.uploads, 0, "{tag}");
                assert!(
                    j >= r.iterations && j < r.iterations + 2 * per_batch,
                    "{tag}: recorded {j}"
                );
            }
            (Variant::Fused, CheckMode::Device) => {
                assert_eq!(
                    (c.dispatches, c.reductions),
                    (j as u64, j as u64),
                    "{tag}: 1 launch, 1 reduction per iteration"
                );
                assert_eq!(c.readbacks, j.div_ceil(batch) as u64, "{tag}");
                assert_eq!(c.uploads, 0, "{tag}");
                assert!(
                    j >= r.iterations && j < r.iterations + 2 * batch,
                    "{tag}: recorded {j}"
                );
            }
            (Variant::P1, _) => unreachable!("GMRES's variant"),
        }
        if variant == Variant::Fused {
            assert_eq!(r.dispatches_per_iteration, 1.0, "{tag}");
            assert_eq!(r.reductions_per_iteration, 1.0, "{tag}");
        } else if variant == Variant::Cooperative {
            assert_eq!(r.reductions_per_iteration, 1.0, "{tag}");
            if mode == CheckMode::Device {
                assert_eq!(r.dispatches_per_iteration, 1.0 / 16.0, "{tag}");
            }
        } else if variant == Variant::Workgroup {
            assert_eq!(r.reductions_per_iteration, 0.0, "{tag}");
            if mode == CheckMode::Device {
                assert_eq!(r.dispatches_per_iteration, 1.0 / 32.0, "{tag}");
            }
        } else if variant == Variant::Pipelined {
            assert_eq!(r.dispatches_per_iteration, 2.0, "{tag}");
        } else if mode == CheckMode::Device {
            assert!(r.dispatches_per_iteration >= 8.0, "{tag}");
        }
    }
}

#[test]
fn device_mode_returns_the_x_of_the_converging_iteration() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(poisson_2d_fd::<f32>(30));
    for variant in CG_VARIANTS {
        let run = |batch, max_iter| {
            let o = SolveOptions {
                batch,
                max_iter,
                ..opts(variant, CheckMode::Device, Precond::None, 1e-5)
            };
            solve(&engine, &a, &b, &o)
        };
        let per_launch = match variant {
            Variant::Workgroup => ITERATIONS_PER_LAUNCH,
            Variant::Cooperative => COOPERATIVE_PER_LAUNCH,
            _ => 1,
        };
        assert_device_mode_stops_exactly_in(run, &variant.to_string(), per_launch);
    }
}
