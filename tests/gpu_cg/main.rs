//! GPU CG (classical, pipelined and fused) against the CPU reference of the same variant, with
//! exact launch/transfer counts, the device-mode exact-stop property and failure reporting.
//!
//! Grouped by concern: agreement with the CPU reference (`agreement`), launch and transfer
//! counts and the exact stop (`counts`), tunings, formats and kernel reuse (`kernels`),
//! failures, the monitor and typed errors (`failures`).

#[path = "../common/mod.rs"]
mod common;

mod agreement;
mod counts;
mod failures;
mod kernels;

use common::solve::{MODES, PRECONDS, assert_converged, cg_variants_for, rtol_for, true_rel};
use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::{
    CheckMode, Method, Precond, Solution, SolveOptions, SolveReport, Variant, cg,
};
use krylov_wgpu::{Scalar, cpu};

fn opts(variant: Variant, mode: CheckMode, precond: Precond, rtol: f64) -> SolveOptions {
    common::solve::opts(Method::Cg, variant, mode, precond, rtol)
}

/// A GPU CG solve from x0 = 0 without a monitor.
fn solve<T: Scalar>(engine: &Engine, a: &Csr<T>, b: &[T], o: &SolveOptions) -> Solution<T> {
    cg::solve(engine, a, b, None, o, &mut ()).unwrap()
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

/// The GPU solve with `o` and the CPU reference: the GPU converges, its true residual within
/// rtol, in about as many iterations as the reference. Returns the reference's report.
fn assert_close_to_cpu<T: Scalar>(
    engine: &Engine,
    (a, b): (&Csr<T>, &[T]),
    o: &SolveOptions,
    tag: &str,
) -> SolveReport {
    let reference = cpu::solve(a, b, None, o).unwrap().report;
    let sol = solve(engine, a, b, o);
    assert!(sol.report.converged, "{tag}: {}", sol.report.reason_detail);
    assert!(true_rel(a, b, &sol.x) <= o.rtol * 1.001, "{tag}");
    assert_iterations_close(sol.report.iterations, reference.iterations, a.nrows(), tag);
    reference
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

/// Every variant × mode × preconditioner in precision T on one system: the GPU converges,
/// its true residual (recomputed here in f64) meets the tolerance, its iteration count
/// matches the CPU reference of the same variant, and its solution matches the CPU's to the
/// accuracy the tolerance and the conditioning allow.
fn check_all<T: Scalar>(engine: &Engine, a: &Csr<T>, b: &[T], cond: f64, what: &str) {
    let rtol = rtol_for(T::PRECISION);
    for variant in cg_variants_for(engine, a.nrows(), T::PRECISION) {
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
                let sol = solve(engine, a, b, &o);
                let r = &sol.report;
                let rel = assert_converged(&sol, a, b, rtol, &tag);
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
            }
        }
    }
}
