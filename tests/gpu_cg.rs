//! GPU CG (classical and pipelined) against the CPU reference of the same variant, with
//! exact launch/transfer counts, the device-mode exact-stop property and failure reporting.

mod common;

use krylov_wgpu::gpu::{Engine, Tuning};
use krylov_wgpu::matrix::generators::{laplace_3d, poisson_2d_fd};
use krylov_wgpu::matrix::{Coo, Csr, market};
use krylov_wgpu::solvers::{
    CheckMode, FnMonitor, Method, Monitor, Precond, SolveOptions, StopReason, Variant, cg,
};
use krylov_wgpu::{KrylovError, Precision, Scalar, cpu};

const VARIANTS: [Variant; 2] = [Variant::Classical, Variant::Pipelined];
const MODES: [CheckMode; 2] = [CheckMode::Paper, CheckMode::Device];
const PRECONDS: [Precond; 2] = [Precond::None, Precond::Jacobi];

/// A tolerance each precision can reach on these problems: f64 far below, f32 a few
/// hundred ulps above its round-off so the true residual can confirm it.
fn rtol_for(p: Precision) -> f64 {
    match p {
        Precision::F32 => 1e-5,
        Precision::F64 => 1e-10,
    }
}

fn opts(variant: Variant, mode: CheckMode, precond: Precond, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::Cg,
        variant,
        check_mode: mode,
        precond,
        rtol,
        max_iter: 5000,
        ..Default::default()
    }
}

/// Iteration counts agree within 2 % (at least ±1) — when CG works as in exact arithmetic.
/// A run that needs more than n iterations (494_bus and nos6 without preconditioning) is
/// past CG's finite termination: its count is set by rounding errors alone, and two correct
/// implementations with different summation orders differ by several per cent (the GPU's
/// tree sums are the more accurate: nos6 classical takes 993 iterations on the GPU, 1067 on
/// the CPU). Those get 10 %.
fn assert_iterations_close(gpu: usize, cpu: usize, n: usize, what: &str) {
    let share = if cpu > n { 0.10 } else { 0.02 };
    let slack = ((cpu as f64) * share).ceil().max(1.0) as usize;
    assert!(
        gpu.abs_diff(cpu) <= slack,
        "{what}: GPU {gpu} iterations vs CPU {cpu} (±{slack})"
    );
}

/// How far two correct f64 evaluations of ‖b − Ax‖/‖b‖ may differ: each entry of b − Ax
/// carries a rounding error up to γ·(|b_i| + Σ|a_ij x_j|), γ = (row length + 2)·u.
fn residual_floor<T: Scalar>(a: &Csr<T>, b: &[T], x: &[T]) -> f64 {
    let maxrow = a.row_length_stats().2 as f64;
    let gamma = (maxrow + 2.0) * f64::EPSILON;
    let mut s = 0.0;
    for (i, bi) in b.iter().enumerate() {
        let (c, v) = a.row(i);
        let t: f64 = bi.as_f64().abs()
            + c.iter()
                .zip(v)
                .map(|(&j, v)| (v.as_f64() * x[j as usize].as_f64()).abs())
                .sum::<f64>();
        s += t * t;
    }
    let bn: f64 = b.iter().map(|v| v.as_f64().powi(2)).sum::<f64>().sqrt();
    2.0 * gamma * s.sqrt() / bn.max(f64::MIN_POSITIVE)
}

fn true_rel<T: Scalar>(a: &Csr<T>, b: &[T], x: &[T]) -> f64 {
    cpu::true_relative_residual(a, b, x)
}

/// Every variant × mode × preconditioner in precision T on one system: the GPU converges,
/// its true residual (recomputed here in f64) meets the tolerance, its iteration count
/// matches the CPU reference of the same variant, and its solution matches the CPU's to the
/// accuracy the tolerance and the conditioning allow.
fn check_all<T: Scalar>(engine: &Engine, a: &Csr<T>, b: &[T], cond: f64, what: &str) {
    let rtol = rtol_for(T::PRECISION);
    for variant in VARIANTS {
        for precond in PRECONDS {
            let o = opts(variant, CheckMode::Device, precond, rtol);
            let reference = cpu::solve(a, b, None, &o).unwrap();
            assert!(
                reference.report.converged,
                "{what}: CPU reference did not converge: {:?}",
                reference.report.reason
            );
            for mode in MODES {
                let o = opts(variant, mode, precond, rtol);
                let tag = format!("{what} {variant} {mode} {precond} {}", T::PRECISION);
                let sol = cg::solve(engine, a, b, None, &o, &mut ()).unwrap();
                let r = &sol.report;
                assert!(r.converged, "{tag}: {}", r.reason_detail);
                assert_eq!(r.history.len(), r.iterations + 1, "{tag}: history length");
                assert!(
                    r.history.iter().all(|h| h.is_finite()),
                    "{tag}: history finite"
                );
                let rel = true_rel(a, b, &sol.x);
                assert!(
                    rel <= rtol * 1.001,
                    "{tag}: true residual {rel:e} > rtol {rtol:e}"
                );
                let floor = residual_floor(a, b, &sol.x);
                assert!(
                    (rel - r.relative_residual).abs() <= 1e-3 * rel + floor,
                    "{tag}: reported residual {:e} vs recomputed {rel:e} (rounding floor {floor:e})",
                    r.relative_residual
                );
                assert_iterations_close(r.iterations, reference.report.iterations, a.nrows(), &tag);
                // ‖x − x_cpu‖/‖x_cpu‖ ≤ κ·(rtol_gpu + rtol_cpu): both are within κ·rtol of A⁻¹b.
                let num: f64 = sol
                    .x
                    .iter()
                    .zip(&reference.x)
                    .map(|(g, c)| (g.as_f64() - c.as_f64()).powi(2))
                    .sum();
                let den: f64 = reference.x.iter().map(|c| c.as_f64().powi(2)).sum();
                let err = (num / den).sqrt();
                assert!(
                    err <= 2.0 * cond * rtol,
                    "{tag}: solution differs from CPU by {err:e} (κ = {cond:e})"
                );
                assert!(sol.x.iter().all(|v| v.is_finite()), "{tag}: x finite");
            }
        }
    }
}

/// κ₂ of the 5-point Poisson matrix on a k×k grid: cot²(πh/2), h = 1/(k+1).
fn poisson_cond(k: usize) -> f64 {
    let h = 1.0 / (k + 1) as f64;
    (1.0 / (std::f64::consts::PI * h / 2.0).tan()).powi(2)
}

fn ones_rhs<T: Scalar>(a: &Csr<T>) -> Vec<T> {
    a.mul_vec(&vec![T::one(); a.ncols()]).unwrap()
}

#[test]
fn cg_matches_cpu_on_poisson_f32() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f32>(23);
    check_all(&engine, &a, &ones_rhs(&a), poisson_cond(23), "poisson2d:23");
}

#[test]
fn cg_matches_cpu_on_poisson_f64() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f64>(23);
    check_all(&engine, &a, &ones_rhs(&a), poisson_cond(23), "poisson2d:23");
}

#[test]
fn cg_matches_cpu_on_laplace_3d_both_precisions() {
    let Some(engine) = common::engine() else {
        return;
    };
    // κ of the 7-point Laplacian: cot²(πh/2) as in 2D.
    let a = laplace_3d::<f64>(9);
    check_all(&engine, &a, &ones_rhs(&a), poisson_cond(9), "laplace3d:9");
    let a = laplace_3d::<f32>(9);
    check_all(&engine, &a, &ones_rhs(&a), poisson_cond(9), "laplace3d:9");
}

/// Estimate of κ₂ for an SPD matrix: λ_max ≤ the Gershgorin bound; 1/λ_min from a power
/// iteration on A⁻¹, each application a tight f64 CG solve of the CPU reference. (The
/// estimate only scales the solution-error tolerance below.)
fn cond_estimate(a: &Csr<f64>) -> f64 {
    let n = a.nrows();
    let gersh = (0..n)
        .map(|i| a.row(i).1.iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let tight = SolveOptions {
        variant: Variant::Classical,
        rtol: 1e-13,
        max_iter: 20 * n,
        ..Default::default()
    };
    let mut v: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 / 7.0).collect();
    let mut inv_norm = 0.0;
    for _ in 0..12 {
        let w = cpu::solve(a, &v, None, &tight).unwrap().x;
        let nw = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        let nv = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        inv_norm = nw / nv;
        v = w.iter().map(|x| x / nw).collect();
    }
    gersh * inv_norm
}

#[test]
fn cg_matches_cpu_on_shared_spd_matrices_f64() {
    let Some(engine) = common::engine() else {
        return;
    };
    for name in [
        "bcsstk01.mtx",
        "494_bus.mtx",
        "nos6.mtx",
        "mesh1e1.mtx",
        "Trefethen_2000.mtx",
        "ani4.mtx",
    ] {
        let a: Csr<f64> = market::read_matrix_market(common::data(name)).unwrap();
        let b = if name == "mesh1e1.mtx" {
            market::read_vector(common::data("mesh1e1_rhs.mtx")).unwrap()
        } else {
            ones_rhs(&a)
        };
        let cond = cond_estimate(&a);
        check_all(&engine, &a, &b, cond, name);
    }
}

#[test]
fn cg_matches_cpu_on_bcsstk21_f64() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a: Csr<f64> = market::read_matrix_market(common::data("bcsstk21.mtx")).unwrap();
    let b = ones_rhs(&a);
    for variant in VARIANTS {
        let o = opts(variant, CheckMode::Device, Precond::Jacobi, 1e-10);
        let reference = cpu::solve(&a, &b, None, &o).unwrap();
        let sol = cg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
        assert!(
            sol.report.converged && reference.report.converged,
            "{variant}: {}",
            sol.report.reason_detail
        );
        assert_iterations_close(
            sol.report.iterations,
            reference.report.iterations,
            a.nrows(),
            &format!("bcsstk21 {variant}"),
        );
        assert!(true_rel(&a, &b, &sol.x) <= 1e-10 * 1.001);
    }
}

#[test]
fn cg_f32_on_shared_spd_matrices_with_jacobi() {
    let Some(engine) = common::engine() else {
        return;
    };
    // Moderately conditioned shared matrices in f32 with Jacobi: the GPU result meets the
    // tolerance (true residual) and agrees with the f32 CPU reference in iteration count.
    for name in [
        "494_bus.mtx",
        "nos6.mtx",
        "mesh1e1.mtx",
        "Trefethen_2000.mtx",
        "ani4.mtx",
    ] {
        let a64: Csr<f64> = market::read_matrix_market(common::data(name)).unwrap();
        let a: Csr<f32> = a64.cast().unwrap();
        let b = ones_rhs(&a);
        for variant in VARIANTS {
            for mode in MODES {
                let o = opts(variant, mode, Precond::Jacobi, 1e-4);
                let reference = cpu::solve(&a, &b, None, &o).unwrap();
                let sol = cg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
                let tag = format!("{name} f32 {variant} {mode}");
                assert!(sol.report.converged, "{tag}: {}", sol.report.reason_detail);
                assert!(true_rel(&a, &b, &sol.x) <= 1e-4 * 1.001, "{tag}");
                assert_iterations_close(
                    sol.report.iterations,
                    reference.report.iterations,
                    a.nrows(),
                    &tag,
                );
            }
        }
    }
}

#[test]
fn launch_and_transfer_counts_are_exact() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f32>(20);
    let b = ones_rhs(&a);
    for precond in PRECONDS {
        for variant in VARIANTS {
            for (mode, batch) in [
                (CheckMode::Paper, 0),
                (CheckMode::Device, 1),
                (CheckMode::Device, 7),
            ] {
                let o = SolveOptions {
                    batch,
                    ..opts(variant, mode, precond, 1e-5)
                };
                let r = cg::solve(&engine, &a, &b, None, &o, &mut ())
                    .unwrap()
                    .report;
                let tag = format!("{variant} {mode} k={batch} {precond}");
                assert!(r.converged, "{tag}");
                let j = r.recorded();
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
                }
                if variant == Variant::Pipelined {
                    assert_eq!(r.dispatches_per_iteration, 2.0, "{tag}");
                } else if mode == CheckMode::Device {
                    assert!(r.dispatches_per_iteration >= 8.0, "{tag}");
                }
            }
        }
    }
}

trait Recorded {
    fn recorded(&self) -> usize;
}
impl Recorded for krylov_wgpu::solvers::SolveReport {
    fn recorded(&self) -> usize {
        self.iterations_recorded
    }
}

#[test]
fn device_mode_returns_the_x_of_the_converging_iteration() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f32>(30);
    let b = ones_rhs(&a);
    for variant in VARIANTS {
        let run = |mode, batch, max_iter| {
            let o = SolveOptions {
                batch,
                max_iter,
                ..opts(variant, mode, Precond::None, 1e-5)
            };
            cg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap()
        };
        // A batch of 13 overshoots convergence: the iterations recorded after it are no-ops.
        let big = run(CheckMode::Device, 13, 5000);
        assert!(big.report.converged);
        let j = big.report.iterations;
        assert!(
            big.report.iterations_recorded > j,
            "{variant}: the batch overshoots ({})",
            big.report.iterations_recorded
        );
        // One iteration per batch stops there too (with one no-op batch queued behind it);
        // so does a run limited to j iterations.
        let single = run(CheckMode::Device, 1, 5000);
        assert_eq!(single.report.iterations, j);
        assert!(single.report.iterations_recorded <= j + 1);
        let limited = run(CheckMode::Device, 1, j);
        for (other, what) in [(&single, "batch 1"), (&limited, "max_iter = j")] {
            assert!(
                big.x
                    .iter()
                    .zip(&other.x)
                    .all(|(p, q)| p.to_bits() == q.to_bits()),
                "{variant}: x after overshooting differs from x at iteration {j} ({what})"
            );
        }
        assert_eq!(big.report.history, single.report.history);
    }
}

#[test]
fn both_reduction_paths_agree() {
    let Some(ctx) = common::context() else { return };
    let a = poisson_2d_fd::<f64>(40);
    let b = ones_rhs(&a);
    let mut results = Vec::new();
    for subgroups in [false, true] {
        let engine = common::engine_with(Tuning {
            subgroups: Some(subgroups),
            ..Tuning::default()
        })
        .unwrap();
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
    for tuning in [
        Tuning {
            workgroup_size: 64,
            max_groups: 3,
            ..Tuning::default()
        },
        Tuning {
            workgroup_size: 512,
            max_groups: 1024,
            ..Tuning::default()
        },
    ] {
        let engine = common::engine_with(tuning).unwrap();
        let sol = cg::solve(
            &engine,
            &a,
            &b,
            None,
            &opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-10),
            &mut (),
        )
        .unwrap();
        assert!(sol.report.converged, "{tuning:?}");
        assert!(true_rel(&a, &b, &sol.x) <= 1e-10 * 1.001, "{tuning:?}");
    }
}

/// A symmetric indefinite matrix: diag(1, −2, 3, −4, ...).
fn indefinite(n: usize) -> Csr<f64> {
    let mut coo = Coo::new(n, n);
    for i in 0..n {
        let v = (i + 1) as f64;
        coo.push(i, i, if i % 2 == 0 { v } else { -v }).unwrap();
    }
    coo.to_csr().unwrap()
}

#[test]
fn non_spd_matrices_are_reported_not_iterated() {
    let Some(engine) = common::engine() else {
        return;
    };
    // Poisson shifted past its smallest eigenvalue is symmetric indefinite too.
    let mut shifted = Coo::new(400, 400);
    let p = poisson_2d_fd::<f64>(20);
    for i in 0..400 {
        let (c, v) = p.row(i);
        for (&j, &x) in c.iter().zip(v) {
            shifted
                .push(i, j as usize, if j as usize == i { x - 1.0 } else { x })
                .unwrap();
        }
    }
    for a in [indefinite(64), shifted.to_csr().unwrap()] {
        let b = vec![1.0; a.nrows()];
        for variant in VARIANTS {
            for mode in MODES {
                let sol = cg::solve(
                    &engine,
                    &a,
                    &b,
                    None,
                    &opts(variant, mode, Precond::None, 1e-10),
                    &mut (),
                )
                .unwrap();
                assert_eq!(
                    sol.report.reason,
                    StopReason::NotSpd,
                    "{variant} {mode}: {}",
                    sol.report.reason_detail
                );
                assert!(!sol.report.converged);
                assert!(
                    sol.report.iterations < 200,
                    "{variant} {mode}: detected late"
                );
                assert!(sol.x.iter().all(|v| v.is_finite()));
            }
        }
    }
}

#[test]
fn never_reports_false_convergence_in_f32() {
    let Some(engine) = common::engine() else {
        return;
    };
    // rtol 1e-9 is below what f32 can attain here: the solver must not claim convergence.
    let a = poisson_2d_fd::<f32>(40);
    let b = ones_rhs(&a);
    for variant in VARIANTS {
        for mode in MODES {
            let o = SolveOptions {
                max_iter: 600,
                ..opts(variant, mode, Precond::None, 1e-9)
            };
            let sol = cg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
            let rel = true_rel(&a, &b, &sol.x);
            assert!(
                !sol.report.converged || rel <= 1e-9,
                "{variant} {mode}: false convergence at {rel:e}"
            );
            assert!(
                matches!(
                    sol.report.reason,
                    StopReason::ResidualGap | StopReason::MaxIterations | StopReason::Converged
                ),
                "{:?}",
                sol.report.reason
            );
        }
    }
}

#[test]
fn monitor_sees_the_history_and_can_cancel() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f64>(16);
    let b = ones_rhs(&a);
    for mode in MODES {
        let mut seen = Vec::new();
        let sol = cg::solve(
            &engine,
            &a,
            &b,
            None,
            &opts(Variant::Pipelined, mode, Precond::None, 1e-8),
            &mut FnMonitor(|it, r| seen.push((it, r))),
        )
        .unwrap();
        let expected: Vec<(usize, f64)> = sol.report.history.iter().copied().enumerate().collect();
        assert_eq!(seen, expected, "{mode}");
    }
    struct CancelAfterFirst(usize);
    impl Monitor for CancelAfterFirst {
        fn on_residual(&mut self, _: usize, _: f64) {
            self.0 += 1;
        }
        fn cancelled(&self) -> bool {
            self.0 > 0
        }
    }
    let sol = cg::solve(
        &engine,
        &a,
        &b,
        None,
        &opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8),
        &mut CancelAfterFirst(0),
    )
    .unwrap();
    assert_eq!(sol.report.reason, StopReason::Cancelled);
    assert_eq!(sol.report.iterations, 0);
}

#[test]
fn trivial_systems_and_initial_guesses() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f64>(10);
    for variant in VARIANTS {
        for mode in MODES {
            let o = opts(variant, mode, Precond::None, 1e-10);
            let zero = cg::solve(&engine, &a, &vec![0.0; 100], None, &o, &mut ()).unwrap();
            assert!(zero.report.converged && zero.report.iterations == 0);
            assert!(zero.x.iter().all(|v| *v == 0.0));
            let ones = vec![1.0; 100];
            let b = a.mul_vec(&ones).unwrap();
            let exact = cg::solve(&engine, &a, &b, Some(&ones), &o, &mut ()).unwrap();
            assert!(
                exact.report.converged && exact.report.iterations == 0,
                "{variant} {mode}"
            );
        }
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let Some(engine) = common::engine() else {
        return;
    };
    let o = opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8);
    let a = poisson_2d_fd::<f64>(4);
    let err =
        |r: Result<krylov_wgpu::solvers::Solution<f64>, KrylovError>| r.expect_err("an error");
    assert!(matches!(
        err(cg::solve(&engine, &a, &[1.0; 15], None, &o, &mut ())),
        KrylovError::DimensionMismatch { .. }
    ));
    let mut b = vec![1.0; 16];
    b[3] = f64::NAN;
    assert!(matches!(
        err(cg::solve(&engine, &a, &b, None, &o, &mut ())),
        KrylovError::NonFinite { .. }
    ));
    let nonsym: Csr<f64> = market::read_matrix_market(common::data("pores_1.mtx")).unwrap();
    assert!(matches!(
        err(cg::solve(
            &engine,
            &nonsym,
            &vec![1.0; 30],
            None,
            &o,
            &mut ()
        )),
        KrylovError::MethodMismatch(_)
    ));
    let mut zero_diag = Coo::new(2, 2);
    zero_diag.push(0, 1, 1.0).unwrap();
    zero_diag.push(1, 0, 1.0).unwrap();
    let jac = SolveOptions {
        precond: Precond::Jacobi,
        ..o.clone()
    };
    assert!(matches!(
        err(cg::solve(
            &engine,
            &zero_diag.to_csr().unwrap(),
            &[1.0, 1.0],
            None,
            &jac,
            &mut ()
        )),
        KrylovError::ZeroDiagonal { row: 0 }
    ));
    let rect = Csr::<f64>::new(2, 3, vec![0, 1, 2], vec![0, 1], vec![1.0, 1.0]).unwrap();
    assert!(matches!(
        err(cg::solve(&engine, &rect, &[1.0, 1.0], None, &o, &mut ())),
        KrylovError::NotSquare { .. }
    ));
}

#[test]
fn f64_without_shader_f64_is_a_typed_error() {
    if common::context().is_none() {
        return;
    }
    let ctx = krylov_wgpu::gpu::GpuContext::new_with_features(
        &krylov_wgpu::gpu::DeviceRequest::from_env(),
        krylov_wgpu::wgpu::Features::empty(),
    )
    .unwrap();
    let engine = Engine::new(ctx);
    let a = poisson_2d_fd::<f64>(4);
    let o = opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8);
    let e = cg::solve(&engine, &a, &[1.0; 16], None, &o, &mut ()).unwrap_err();
    assert!(matches!(e, KrylovError::MissingFeature { .. }), "{e}");
}

#[test]
fn a_second_solve_reuses_the_compiled_kernels() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f32>(12);
    let b = ones_rhs(&a);
    let o = opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-5);
    let first = cg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
    let compiled = engine.compiled_kernels();
    assert!(compiled >= 3, "cg_init, update_cg, spmv_dot_cg");
    let second = cg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
    assert_eq!(
        engine.compiled_kernels(),
        compiled,
        "no kernel compiled twice"
    );
    assert_eq!(first.report.iterations, second.report.iterations);
    assert!(
        first
            .x
            .iter()
            .zip(&second.x)
            .all(|(p, q)| p.to_bits() == q.to_bits())
    );
}

#[test]
fn pipelined_cg_on_ell_matches_csr() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f64>(21);
    let b = ones_rhs(&a);
    for mode in MODES {
        for precond in PRECONDS {
            let csr = opts(Variant::Pipelined, mode, precond, 1e-10);
            let ell = SolveOptions {
                format: krylov_wgpu::solvers::Format::Ell,
                ..csr.clone()
            };
            let s_csr = cg::solve(&engine, &a, &b, None, &csr, &mut ()).unwrap();
            let s_ell = cg::solve(&engine, &a, &b, None, &ell, &mut ()).unwrap();
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
        format: krylov_wgpu::solvers::Format::Ell,
        ..opts(Variant::Classical, CheckMode::Device, Precond::None, 1e-8)
    };
    let s = cg::solve(&engine, &a, &b, None, &classical, &mut ()).unwrap();
    assert!(s.report.converged, "{}", s.report.reason_detail);
    assert_eq!(s.report.format, "ell");
    assert_eq!(s.report.dispatches_per_iteration, 8.0);
    // f32 too, on a shared matrix with ragged rows.
    let m: Csr<f32> = market::read_matrix_market::<f64>(common::data("bcsstk01.mtx"))
        .unwrap()
        .cast()
        .unwrap();
    let bm = ones_rhs(&m);
    let o = SolveOptions {
        format: krylov_wgpu::solvers::Format::Ell,
        ..opts(Variant::Pipelined, CheckMode::Device, Precond::Jacobi, 1e-4)
    };
    let s = cg::solve(&engine, &m, &bm, None, &o, &mut ()).unwrap();
    assert!(s.report.converged, "{}", s.report.reason_detail);
    assert!(true_rel(&m, &bm, &s.x) <= 1e-4 * 1.001);
}
