//! Both reduction paths, odd launch shapes, the ELL format, and kernel reuse across solves.

use krylov_wgpu::KrylovError;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::poisson_2d_fd;
use krylov_wgpu::solvers::{CheckMode, Format, Precond, SolveOptions, Variant, cg};

use super::common::problems::{load, ones_rhs, with_ones_rhs};
use super::common::solve::{MODES, PRECONDS, VARIANTS, same_bits, true_rel};
use super::common::{context, engine, engine_with, large_workgroups, small_grid, with_subgroups};
use super::{opts, solve};

#[test]
fn both_reduction_paths_agree() {
    let Some(ctx) = context() else { return };
    let (a, b) = with_ones_rhs(poisson_2d_fd::<f64>(40));
    let mut results = Vec::new();
    for subgroups in [false, true] {
        let engine = engine_with(with_subgroups(subgroups)).unwrap();
        for variant in VARIANTS {
            let o = opts(variant, CheckMode::Device, Precond::None, 1e-10);
            match cg::solve(&engine, &a, &b, None, &o, &mut ()) {
                Ok(sol) => {
                    assert!(sol.report.converged);
                    results.push((subgroups, variant, sol.report.iterations));
                }
                Err(KrylovError::MissingFeature { feature, .. }) => {
                    assert!(subgroups && !ctx.has_subgroups(), "{feature}");
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    if ctx.has_subgroups() {
        assert_eq!(results.len(), 4);
        for (s, v, it) in &results {
            let other = results
                .iter()
                .find(|(s2, v2, _)| s2 != s && v2 == v)
                .unwrap();
            assert!(
                it.abs_diff(other.2) <= 1,
                "{v} subgroups={s}: {it} vs {}",
                other.2
            );
        }
    }
    // Small and large workgroups, and few reduction groups (grid-stride loops).
    for tuning in [small_grid(None), large_workgroups(None)] {
        let engine = engine_with(tuning).unwrap();
        let o = opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-10);
        let sol = solve(&engine, &a, &b, &o);
        assert!(sol.report.converged, "{tuning:?}");
        assert!(true_rel(&a, &b, &sol.x) <= 1e-10 * 1.001, "{tuning:?}");
    }
}

#[test]
fn a_second_solve_reuses_the_compiled_kernels() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(poisson_2d_fd::<f32>(12));
    let o = opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-5);
    let first = solve(&engine, &a, &b, &o);
    let compiled = engine.compiled_kernels();
    assert!(compiled >= 3, "cg_init, update_cg, spmv_dot_cg");
    let second = solve(&engine, &a, &b, &o);
    assert_eq!(
        engine.compiled_kernels(),
        compiled,
        "no kernel compiled twice"
    );
    assert_eq!(first.report.iterations, second.report.iterations);
    assert!(same_bits(&first.x, &second.x));
}

#[test]
fn pipelined_cg_on_ell_matches_csr() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(poisson_2d_fd::<f64>(21));
    for mode in MODES {
        for precond in PRECONDS {
            let csr = opts(Variant::Pipelined, mode, precond, 1e-10);
            let ell = SolveOptions {
                format: Format::Ell,
                ..csr.clone()
            };
            let s_csr = solve(&engine, &a, &b, &csr);
            let s_ell = solve(&engine, &a, &b, &ell);
            let tag = format!("ell {mode} {precond}");
            assert!(
                s_ell.report.converged,
                "{tag}: {}",
                s_ell.report.reason_detail
            );
            assert_eq!(s_ell.report.format, "ell");
            assert!(
                s_ell.report.iterations.abs_diff(s_csr.report.iterations) <= 1,
                "{tag}"
            );
            assert!(true_rel(&a, &b, &s_ell.x) <= 1e-10 * 1.001, "{tag}");
            assert_eq!(s_ell.report.dispatches_per_iteration, 2.0, "{tag}");
        }
    }
    // The classical variant runs on ELL too (every kernel is format-generic).
    let classical = SolveOptions {
        format: Format::Ell,
        ..opts(Variant::Classical, CheckMode::Device, Precond::None, 1e-8)
    };
    let s = solve(&engine, &a, &b, &classical);
    assert!(s.report.converged, "{}", s.report.reason_detail);
    assert_eq!(s.report.format, "ell");
    assert_eq!(s.report.dispatches_per_iteration, 8.0);
    // f32 too, on a shared matrix with ragged rows.
    let m: Csr<f32> = load("bcsstk01").cast().unwrap();
    let bm = ones_rhs(&m);
    let o = SolveOptions {
        format: Format::Ell,
        ..opts(Variant::Pipelined, CheckMode::Device, Precond::Jacobi, 1e-4)
    };
    let s = solve(&engine, &m, &bm, &o);
    assert!(s.report.converged, "{}", s.report.reason_detail);
    assert!(true_rel(&m, &bm, &s.x) <= 1e-4 * 1.001);
}
