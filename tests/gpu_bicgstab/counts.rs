//! Exact launch and transfer counts of every variant × mode × batch (both ends of a
//! converging iteration in `paper` mode), and the exact stop of `device` mode.

use krylov_wgpu::matrix::generators::ConvectionField;
use krylov_wgpu::solvers::{CheckMode, Precond, SolveOptions, Variant};

use super::common::engine;
use super::common::problems::convdiff_system;
use super::common::solve::{PRECONDS, VARIANTS, assert_device_mode_stops_exactly, count_cases};
use super::{opts, solve};

#[test]
fn launch_and_transfer_counts_are_exact() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff_system::<f64>(8, 0.1, ConvectionField::Circular);
    // `paper` runs end either on the half step (‖s‖ met the tolerance: kernel 4
    // alone makes x += αD⁻¹p, no readback) or on a residual estimate that the directly
    // reduced ⟨r,r⟩ confirms (kernels 4 and 1, one readback); classical ones on ‖s‖ or on
    // ‖r‖. This problem has both ends in both variants (without / with Jacobi).
    let mut paper_ends = std::collections::BTreeSet::new();
    for (precond, variant, mode, batch, tag) in count_cases() {
        let jac = (precond == Precond::Jacobi) as u64;
        let o = SolveOptions {
            batch,
            ..opts(variant, mode, precond, 1e-10)
        };
        let r = solve(&engine, &a, &b, &o).report;
        assert!(r.converged, "{tag}: {}", r.reason_detail);
        let j = r.iterations as u64;
        let rec = r.iterations_recorded as u64;
        let c = &r.loop_counts;
        match (variant, mode) {
            (Variant::Pipelined, CheckMode::Paper) => {
                assert_eq!(rec, j, "{tag}");
                assert_eq!(c.uploads, 0, "{tag}: no uploads");
                assert_eq!(c.submits, j + 1, "{tag}");
                if c.dispatches == 4 * j - 1 {
                    // Half step: 4 launches per iteration but the last one's
                    // kernel 1, exactly one readback per iteration.
                    assert_eq!(c.readbacks, j, "{tag}");
                    paper_ends.insert((variant.as_str(), "half step"));
                } else {
                    // Exactly 4 launches and 1 readback per iteration, + the
                    // readback of the direct ⟨r,r⟩ confirming the estimate.
                    assert_eq!(c.dispatches, 4 * j, "{tag}: 4 launches per iteration");
                    assert_eq!(c.readbacks, j + 1, "{tag}");
                    assert_eq!(r.dispatches_per_iteration, 4.0, "{tag}");
                    paper_ends.insert((variant.as_str(), "full step"));
                }
            }
            (Variant::Pipelined, CheckMode::Device) => {
                assert_eq!(c.dispatches, 4 * rec, "{tag}: 4 launches per iteration");
                assert_eq!(c.readbacks, rec.div_ceil(batch as u64), "{tag}");
                assert_eq!(c.uploads, 0, "{tag}");
                assert_eq!(r.dispatches_per_iteration, 4.0, "{tag}");
                // One more batch is queued while the converging one is read.
                assert!(
                    rec >= j && rec < j + 2 * batch as u64,
                    "{tag}: recorded {rec} for {j} iterations"
                );
            }
            (Variant::Classical, CheckMode::Paper) => {
                // 2 SpMV, 7 dot, 5 axpy, 1 xpay (+ 2 diag_scale); the first
                // iteration has no p update (−2). 4 readbacks, 3 uploads.
                let per = 15 + 2 * jac;
                assert_eq!(rec, j, "{tag}");
                if c.readbacks == 4 * j {
                    // Converged on ‖r‖: no ρ/β upload after the last iteration.
                    assert_eq!(c.dispatches, per * j - 2, "{tag}");
                    assert_eq!(c.uploads, 3 * j - 1, "{tag}");
                    paper_ends.insert((variant.as_str(), "full step"));
                } else {
                    // Converged on ‖s‖ (the half step): the last iteration stops
                    // after ⟨s,s⟩ with x += αp̂.
                    assert_eq!(c.readbacks, 4 * j - 2, "{tag}");
                    assert_eq!(c.dispatches, per * j - 9 - jac, "{tag}");
                    assert_eq!(c.uploads, 3 * j - 2, "{tag}");
                    paper_ends.insert((variant.as_str(), "half step"));
                }
                assert!(r.dispatches_per_iteration >= 10.0, "{tag}");
            }
            (Variant::Classical, CheckMode::Device) => {
                // + 3 bicgstab_finish launches.
                let per = 18 + 2 * jac;
                assert_eq!(c.dispatches, per * rec, "{tag}");
                assert_eq!(c.readbacks, rec.div_ceil(batch as u64), "{tag}");
                assert_eq!(c.uploads, 0, "{tag}");
            }
            (Variant::Fused | Variant::Workgroup | Variant::Cooperative | Variant::P1, _) => {
                unreachable!("BiCGStab has neither a fused nor a workgroup variant")
            }
        }
    }
    assert_eq!(paper_ends.len(), 4, "{paper_ends:?}");
}

#[test]
fn device_mode_returns_the_x_of_the_converging_iteration() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff_system::<f32>(8, 0.1, ConvectionField::Circular);
    for variant in VARIANTS {
        for precond in PRECONDS {
            let run = |batch, max_iter| {
                let o = SolveOptions {
                    batch,
                    max_iter,
                    ..opts(variant, CheckMode::Device, precond, 1e-5)
                };
                solve(&engine, &a, &b, &o)
            };
            assert_device_mode_stops_exactly(run, &format!("{variant} {precond}"));
        }
    }
}
