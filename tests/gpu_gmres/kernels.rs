//! The kernels themselves: cycles longer than what one workgroup holds, small grids and both
//! reduction paths, and the storage-buffer limit of every GMRES kernel.

use krylov_wgpu::Precision;
use krylov_wgpu::matrix::{Coo, Csr};
use krylov_wgpu::solvers::{CheckMode, Precond, SolveOptions, StopReason};

use super::common::problems::with_rhs;
use super::common::{context, engine_with, small_grid, with_subgroups};
use super::{FLAVOURS, check_report, opts, solve, tag};

/// The 1D Laplacian tridiag(−1, 2, −1): SPD, κ ≈ 4n²/π², GMRES converges slowly on it.
fn laplace_1d(n: usize) -> Csr<f64> {
    let mut coo = Coo::new(n, n);
    for i in 0..n {
        coo.push(i, i, 2.0).unwrap();
        if i > 0 {
            coo.push(i, i - 1, -1.0).unwrap();
        }
        if i + 1 < n {
            coo.push(i, i + 1, -1.0).unwrap();
        }
    }
    coo.to_csr().unwrap()
}

/// Cycles longer than the 64 coefficients `gmres_gs_update` holds in workgroup memory at a
/// time (72 steps of one cycle of 80, rtol = 0, on a system converging slowly enough that no
/// truncation ends it), few reduction workgroups (grid-stride loops), and both reduction paths:
/// the Walker–Zhou history agrees with the CPU's step by step.
#[test]
fn long_cycles_small_grids_and_both_reduction_paths() {
    let Some(ctx) = context() else { return };
    let (a, b) = with_rhs(laplace_1d(300));
    for tuning in [small_grid(Some(false)), with_subgroups(true)] {
        if tuning.subgroups == Some(true) && !ctx.has_subgroups() {
            continue;
        }
        let engine = engine_with(tuning).unwrap();
        for (flavour, mode) in [
            (FLAVOURS[0], CheckMode::Device),
            (FLAVOURS[1], CheckMode::Paper),
            (FLAVOURS[3], CheckMode::Device),
        ] {
            let o = SolveOptions {
                restart: 80,
                max_iter: 72,
                ..opts(flavour, mode, Precond::Jacobi, 0.0)
            };
            let t = format!(
                "{} {tuning:?}",
                tag("laplace1d:300 m=80", &o, Precision::F64)
            );
            let sol = solve(&engine, &a, &b, &o);
            let c = krylov_wgpu::cpu::solve(&a, &b, None, &o).unwrap();
            let r = &sol.report;
            check_report(r, &a, &b, &sol.x, &t);
            assert_eq!(
                r.reason,
                StopReason::MaxIterations,
                "{t}: {}",
                r.reason_detail
            );
            // One cycle: a single readback in device mode.
            if mode == CheckMode::Device {
                assert_eq!(r.loop_counts.readbacks, 1, "{t}: one cycle");
            }
            assert_eq!(r.history.len(), c.report.history.len(), "{t}");
            for (i, (g, h)) in r.history.iter().zip(&c.report.history).enumerate() {
                // Rounding only (CGS over 70 steps): a wrong coefficient would show at O(1).
                assert!(
                    (g - h).abs() <= 1e-6 * h,
                    "{t}: step {i}: GPU {g:e} vs CPU {h:e}"
                );
            }
            let (g, h) = (r.relative_residual, c.report.relative_residual);
            assert!((g - h).abs() <= 1e-6 * h, "{t}: residual {g:e} vs {h:e}");
        }
    }
}

/// Every GMRES kernel binds at most 8 storage buffers (WebGPU's default
/// `max_storage_buffers_per_shader_stage`), in both precisions and reduction flavours.
#[test]
fn gmres_kernels_fit_the_default_storage_buffer_limit() {
    use krylov_wgpu::gpu::shader::{KERNELS, ShaderConfig, specialise};
    let mut seen = 0;
    for k in KERNELS.iter().filter(|k| k.name.starts_with("gmres_")) {
        for precision in [Precision::F32, Precision::F64] {
            for subgroups in [false, true] {
                let config = ShaderConfig {
                    subgroups,
                    ..ShaderConfig::new(precision)
                };
                let src = specialise(k, config);
                let module = naga::front::wgsl::parse_str(&src).unwrap();
                let info = naga::valid::Validator::new(
                    naga::valid::ValidationFlags::all(),
                    naga::valid::Capabilities::all(),
                )
                .validate(&module)
                .unwrap();
                let ep = info.get_entry_point(0);
                let storage = module
                    .global_variables
                    .iter()
                    .filter(|(h, g)| {
                        !ep[*h].is_empty() && matches!(g.space, naga::AddressSpace::Storage { .. })
                    })
                    .count();
                assert!(storage <= 8, "{} uses {storage} storage buffers", k.name);
            }
        }
        seen += 1;
    }
    assert_eq!(seen, 14, "GMRES kernels registered");
}
