//! Both reduction paths and odd launch shapes, and the library's method dispatch and the CLI
//! running BiCGStab on the GPU.

use krylov_wgpu::Precision;
use krylov_wgpu::matrix::generators::ConvectionField;
use krylov_wgpu::solvers::{CheckMode, Method, Precond, on_gpu, solve_gpu};

use super::common::cli::krylov_line;
use super::common::problems::convdiff_system;
use super::common::solve::{MODES, PRECONDS, VARIANTS, true_rel};
use super::common::{context, engine, engine_with, large_workgroups, small_grid, with_subgroups};
use super::{assert_iterations_in_band, opts, reference_band, solve};

#[test]
fn both_reduction_paths_and_odd_launch_shapes() {
    let Some(ctx) = context() else { return };
    let (a, b) = convdiff_system::<f64>(9, 0.1, ConvectionField::Diagonal);
    // Few workgroups of few threads: grid-stride loops in every kernel.
    let mut tunings = vec![small_grid(Some(false)), large_workgroups(Some(false))];
    if ctx.has_subgroups() {
        tunings.extend([with_subgroups(true), small_grid(Some(true))]);
    }
    for variant in VARIANTS {
        for precond in PRECONDS {
            let (lo, hi, reference) =
                reference_band(&a, &b, &opts(variant, CheckMode::Device, precond, 1e-10));
            for tuning in &tunings {
                let engine = engine_with(*tuning).unwrap();
                for mode in MODES {
                    let tag = format!("{variant} {precond} {mode} {tuning:?}");
                    let sol = solve(&engine, &a, &b, &opts(variant, mode, precond, 1e-10));
                    assert!(sol.report.converged, "{tag}: {}", sol.report.reason_detail);
                    assert!(true_rel(&a, &b, &sol.x) <= 1e-10 * 1.001, "{tag}");
                    assert_iterations_in_band(
                        sol.report.iterations,
                        (lo, hi),
                        reference.report.iterations,
                        Precision::F64,
                        &tag,
                    );
                }
            }
        }
    }
}

/// The library's method dispatch and the CLI run BiCGStab on the GPU.
#[test]
fn solve_gpu_and_cli_run_bicgstab_on_the_gpu() {
    let Some(engine) = engine() else { return };
    let (a, b) = convdiff_system::<f32>(6, 0.1, ConvectionField::X);
    for variant in VARIANTS {
        assert!(on_gpu(Method::Bicgstab, variant));
        let o = opts(variant, CheckMode::Paper, Precond::Jacobi, 1e-5);
        let sol = solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        assert!(
            sol.report.converged && sol.report.device.is_gpu(),
            "{variant}"
        );
    }
    for (variant, per_iteration) in [("pipelined", 4.0), ("classical", 18.0)] {
        let run = krylov_line(&format!(
            "solve --device gpu --method bicgstab --variant {variant} \
             --generate convdiff3d:6:circular:0.1 --rtol 1e-8 --batch 4 --json"
        ));
        run.assert_code(0);
        let r = run.json();
        let ctx = run.context();
        assert_eq!(r["device"]["kind"], "gpu", "{ctx}");
        assert_eq!(r["method"], "bicgstab", "{ctx}");
        assert_eq!(r["variant"], variant, "{ctx}");
        assert_eq!(r["converged"], true, "{ctx}");
        assert_eq!(r["dispatches_per_iteration"], per_iteration, "{ctx}");
    }
}
