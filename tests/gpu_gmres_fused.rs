//! Fused GMRES (`--variant fused`, `gmres_scale_spmv_dots` + `gmres_gs_update`): pipelined
//! GMRES's step in two launches, its basis kept unnormalised. Checked step by step against
//! pipelined GMRES on the GPU (the same R, ξ and iterates up to the summation order of the
//! inner products) on fresh random nonsymmetric matrices, across restarts, with Jacobi and
//! CGS2, in every storage format, and in f32. (Exact launch, transfer and reduction counts:
//! `gpu_gmres/counts.rs`, `reduction_counts.rs`; the CPU reference: `gpu_gmres/agreement.rs`.)

mod common;

use common::engine;
use common::problems::{load, random_nonsymmetric, with_ones_rhs};
use common::solve::rel_diff_inf;
use krylov_wgpu::matrix::{Csr, generators};
use krylov_wgpu::solvers::{
    CheckMode, Format, GramSchmidt, Method, Precond, SolveOptions, Variant, gmres, solve_gpu,
};
use krylov_wgpu::{Scalar, cpu};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn opts(variant: Variant, mode: CheckMode, precond: Precond, gs: GramSchmidt) -> SolveOptions {
    SolveOptions {
        method: Method::Gmres,
        variant,
        check_mode: mode,
        precond,
        gs,
        rtol: 0.0,
        restart: 12,
        max_iter: 5000,
        ..Default::default()
    }
}

/// Fused and pipelined GMRES after each k of `ks` steps (rtol 0, max_iter = k): the same
/// iterate and the same estimates, within `tol` relative (x) and 10·`tol` (each entry of the
/// history), in both check modes. In f64 that is ≤ 1e-9 after 40 steps of a moderately
/// conditioned system: the two differ only in where v_j's division by R_{j,j} happens.
fn assert_same_steps<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    (precond, gs): (Precond, GramSchmidt),
    (ks, tol): (&[usize], f64),
    what: &str,
) {
    let Some(engine) = engine() else { return };
    for mode in [CheckMode::Device, CheckMode::Paper] {
        for &k in ks {
            let run = |variant| {
                let o = SolveOptions {
                    max_iter: k,
                    ..opts(variant, mode, precond, gs)
                };
                gmres::solve(&engine, a, b, None, &o, &mut ()).unwrap()
            };
            let (p, f) = (run(Variant::Pipelined), run(Variant::Fused));
            let tag = format!("{what} {mode} {precond} {gs} k={k}");
            assert_eq!(f.report.iterations, p.report.iterations, "{tag}");
            assert_eq!(
                f.report.reason, p.report.reason,
                "{tag}: {} / {}",
                f.report.reason_detail, p.report.reason_detail
            );
            assert_eq!(f.report.cycles, p.report.cycles, "{tag}");
            let d = rel_diff_inf(&f.x, &p.x);
            assert!(d <= tol, "{tag}: fused x differs from pipelined by {d:e}");
            // The estimate resolves ‖r‖ only to about √ε·ρ0 (it subtracts ξ² from ‖r‖²).
            let floor = 10.0 * T::PRECISION.epsilon().sqrt() * p.report.history[0];
            for (i, (hf, hp)) in f.report.history.iter().zip(&p.report.history).enumerate() {
                assert!(
                    (hf - hp).abs() <= tol * hp.abs() * 10.0 + floor,
                    "{tag}: estimate {i}: fused {hf:e}, pipelined {hp:e}"
                );
            }
            let (lf, lp) = (
                f.report.orthogonality_loss.unwrap(),
                p.report.orthogonality_loss.unwrap(),
            );
            assert!(
                lf.is_finite() && lf <= 100.0 * lp.max(1e-14),
                "{tag}: orthogonality loss fused {lf:e}, pipelined {lp:e}"
            );
            assert_eq!(f.report.variant, Variant::Fused, "{tag}");
        }
    }
}

#[test]
fn fused_follows_pipelined_step_by_step_on_random_matrices() {
    let seed: u64 = rand::random();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for n in [50, 300, 1234] {
        let a = random_nonsymmetric(&mut rng, n);
        let b: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let what = format!("random n={n} (seed {seed})");
        // 1, 2, 3: the first steps; 12, 13: a cycle's end and the next cycle's first step;
        // 40: four cycles.
        let ks: &[usize] = &[1, 2, 3, 12, 13, 40];
        for precond in [Precond::None, Precond::Jacobi] {
            assert_same_steps(&a, &b, (precond, GramSchmidt::Cgs), (ks, 1e-9), &what);
        }
        assert_same_steps(
            &a,
            &b,
            (Precond::None, GramSchmidt::Cgs2),
            (&[3, 13], 1e-9),
            &what,
        );
    }
}

#[test]
fn fused_follows_pipelined_on_a_shared_matrix_in_f32() {
    // sherman4 in f32 with Jacobi, within its first cycle (before f32's round-off floor):
    // the two differ by κ·k·2⁻²⁴ at most.
    let (a, b) = with_ones_rhs::<f32>(load("sherman4").cast().unwrap());
    assert_same_steps(
        &a,
        &b,
        (Precond::Jacobi, GramSchmidt::Cgs),
        (&[1, 2, 6], 1e-3),
        "sherman4 f32",
    );
}

/// Every storage format: the product reads its vector and hands its rows back through the
/// format's row loop (`spmv_x`, `spmv_row_of`), so each format's loop is exercised:
/// iterations as pipelined's in CSR ± 1 (43 steps over two cycles of 40), the true residual
/// within the tolerance, about two launches and two global reductions per step.
#[test]
fn fused_converges_like_pipelined_in_every_format() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs::<f64>(generators::from_spec("convdiff3d:8:x").unwrap());
    let base = SolveOptions {
        rtol: 1e-10,
        max_padding: 1e9,
        restart: 40,
        format: Format::Csr,
        ..opts(
            Variant::Pipelined,
            CheckMode::Device,
            Precond::Jacobi,
            GramSchmidt::Cgs,
        )
    };
    let reference = gmres::solve(&engine, &a, &b, None, &base, &mut ())
        .unwrap()
        .report
        .iterations;
    for &format in Format::ALL.iter().filter(|&&f| f != Format::Auto) {
        let o = SolveOptions {
            variant: Variant::Fused,
            format,
            ..base.clone()
        };
        let sol = solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{format}: {}", r.reason_detail);
        assert_eq!(r.format, format.as_str());
        assert!(
            r.iterations.abs_diff(reference) <= 1,
            "{format}: {} iterations, pipelined csr {reference}",
            r.iterations
        );
        let rel = cpu::true_relative_residual(&a, &b, &sol.x);
        assert!(rel <= 1e-10 * 1.001, "{format}: true residual {rel:e}");
        // 2 per step, 1 per cycle for the last step's closing, and the restarts' residual and
        // update: between 2 and 2.5 for cycles of 40.
        let d = r.dispatches_per_iteration;
        assert!((2.0..2.5).contains(&d), "{format}: {d} launches per step");
        let red = r.reductions_per_iteration;
        assert!(
            (2.0..2.1).contains(&red),
            "{format}: {red} reductions per step"
        );
    }
}
