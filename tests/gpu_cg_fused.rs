//! Fused CG (`--variant fused`, `update_spmv_dot_cg`): pipelined CG's recurrences in one
//! launch per iteration. Checked iterate by iterate against pipelined CG on the GPU (the same
//! α, β and vectors, up to the summation order of the inner products), in every storage
//! format and on fresh random SPD matrices, with its launch and reduction counts; other
//! methods refuse the variant by name.

mod common;

use common::engine;
use common::problems::{load, with_ones_rhs};
use common::solve::rel_diff_inf;
use common::{assert_cg_converges_in_every_format, cg_options as opts, random_spd};
use krylov_wgpu::matrix::{Csr, generators};
use krylov_wgpu::solvers::{CheckMode, Method, Precond, SolveOptions, Variant, cg, solve_gpu};
use krylov_wgpu::{KrylovError, Scalar, cpu};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The iterates of fused and pipelined CG after each k of `ks` iterations (rtol 0, max_iter =
/// k: fused's last launch only records): the same to the rounding of the inner products'
/// summation order, within `tol` relative (x) and 10·`tol` (each residual norm). In f64
/// that is ≤ 1e-9 after 40 iterations of a moderately conditioned system (the differences
/// grow like κ·k·ε).
fn assert_same_iterates<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    precond: Precond,
    (ks, tol): (&[usize], f64),
    what: &str,
) {
    let Some(engine) = engine() else { return };
    let n = a.nrows();
    for mode in [CheckMode::Device, CheckMode::Paper] {
        for &k in ks {
            let run = |variant| {
                let o = SolveOptions {
                    max_iter: k,
                    ..opts(variant, mode, precond)
                };
                cg::solve(&engine, a, b, None, &o, &mut ()).unwrap()
            };
            let (p, f) = (run(Variant::Pipelined), run(Variant::Fused));
            let tag = format!("{what} {mode} {precond} k={k}");
            // Both stop at k, or both earlier for the same reason (n < k: the recurrence
            // reaches ‖r‖ = 0 exactly, and rtol = 0 asks the true residual for 0 too).
            assert_eq!(f.report.iterations, p.report.iterations, "{tag}");
            assert_eq!(
                f.report.reason, p.report.reason,
                "{tag}: {} / {}",
                f.report.reason_detail, p.report.reason_detail
            );
            assert!(
                p.report.iterations == k || n < k,
                "{tag}: {}",
                p.report.reason_detail
            );
            let d = rel_diff_inf(&f.x, &p.x);
            assert!(d <= tol, "{tag}: fused x differs from pipelined by {d:e}");
            for (i, (hf, hp)) in f.report.history.iter().zip(&p.report.history).enumerate() {
                assert!(
                    (hf - hp).abs() <= tol * hp.abs().max(f64::MIN_POSITIVE) * 10.0,
                    "{tag}: residual {i}: fused {hf:e}, pipelined {hp:e}"
                );
            }
            assert_eq!(f.report.dispatches_per_iteration, 1.0, "{tag}");
        }
    }
}

#[test]
fn fused_follows_pipelined_iterate_by_iterate_on_random_spd_matrices() {
    let seed: u64 = rand::random();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for n in [1, 7, 300, 1234] {
        let a = random_spd(&mut rng, n);
        let b: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        for precond in [Precond::None, Precond::Jacobi] {
            let what = format!("random spd n={n} (seed {seed})");
            assert_same_iterates(&a, &b, precond, (&[1, 2, 3, 10, 40], 1e-9), &what);
        }
    }
}

#[test]
fn fused_follows_pipelined_on_a_shared_matrix_in_f32() {
    // mesh1e1 (48 rows) in f32 with Jacobi, within its first 10 iterations (before f32's
    // round-off floor, where two summation orders part): the differences are κ·k·2⁻²⁴.
    let (a, b) = with_ones_rhs::<f32>(load("mesh1e1").cast().unwrap());
    assert_same_iterates(
        &a,
        &b,
        Precond::Jacobi,
        (&[1, 2, 3, 10], 1e-3),
        "mesh1e1 f32",
    );
}

/// Every storage format: the product forms the new direction inside the format's row loop
/// (`spmv_x`), so each format's loop is exercised; iterations as pipelined's in CSR ± 1, the
/// true residual within the tolerance, one launch per iteration.
#[test]
fn fused_converges_like_pipelined_in_every_format() {
    assert_cg_converges_in_every_format(Variant::Fused, Variant::Pipelined, |r, format| {
        assert_eq!(r.dispatches_per_iteration, 1.0, "{format}");
        assert_eq!(r.reductions_per_iteration, 1.0, "{format}");
    });
}

#[test]
fn other_methods_refuse_the_fused_variant_by_name() {
    let a: Csr<f64> = generators::from_spec("poisson2d:8").unwrap();
    let b = vec![1.0; a.nrows()];
    for method in [Method::Bicgstab, Method::Bicg, Method::CaGmres] {
        let o = SolveOptions {
            method,
            variant: Variant::Fused,
            ..Default::default()
        };
        let check = |e: KrylovError, what: &str| {
            assert!(
                matches!(e, KrylovError::InvalidOption(ref m) if m.contains("fused") && m.contains("CG")),
                "{method} {what}: {e}"
            );
        };
        check(cpu::solve(&a, &b, None, &o).unwrap_err(), "cpu");
        if let Some(engine) = engine() {
            check(
                solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap_err(),
                "gpu",
            );
        }
    }
    assert!(Variant::of(Method::Cg).contains(&Variant::Fused));
    assert!(Variant::of(Method::Gmres).contains(&Variant::Fused));
}
