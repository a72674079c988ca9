//! GPU BiCG (classical and pipelined, Aᵀ stored explicitly) and the GPU Jacobi iteration
//! against the CPU reference, with exact launch/transfer counts, the device-mode exact stop,
//! breakdown and divergence reporting by name, and typed errors.
//!
//! **How agreement with the CPU is judged.** BiCG has no minimisation property: on the
//! ill-conditioned shared matrices its residual history is chaotic after a few dozen
//! iterations, and the iteration count is set by rounding. That is measured, not assumed:
//! every comparison runs the CPU reference on b and on [`ENSEMBLE`] copies of b perturbed by
//! one ulp in some entries (an "ensemble"). Then
//! * the GPU history must follow the reference's (relative deviation ≤ `hist_tol`) for as
//!   long as the CPU's own perturbed runs do (minus 2 iterations): the same recurrence,
//!   computed with different rounding — proof that it is the same algorithm and variant;
//! * the GPU iteration count must lie within ±2 % (at least ±1) of the span of the ensemble's
//!   counts. Where the CPU is stable (convection–diffusion, sherman4 with Jacobi in f64) the
//!   span is one number and this is the plain ±2 % rule; where a 1-ulp change of b moves the
//!   CPU itself (pde2961 f64: 312 vs 305 iterations; pores_1: 86 vs 82), no implementation
//!   with a different summation order can be held closer than that span.
//!
//! f64 solves must converge with a true residual ≤ 1e-10. f32 solves use rtol 1e-5 on the
//! well-conditioned convection–diffusion matrix (a few hundred ulps above f32 round-off, so
//! the true residual can confirm it) and 1e-4 on the shared matrices; there f32 BiCG is
//! chaotic from the first ~10 iterations (one-ulp perturbations of b turn the CPU's
//! convergence into a breakdown), so the f32 checks there are: honest reporting (a converged
//! solve meets rtol in the true residual), the history prefix, and — where the ensemble is
//! unanimous about the outcome — the same outcome within the ensemble's iteration span.
//!
//! Grouped by concern: BiCG against the CPU ensemble, its counts and breakdowns (`bicg`), the
//! Jacobi iteration (`jacobi`), and what both share — exact stop, trivial systems, restarts,
//! tunings, typed errors (`both`).

#[path = "../common/mod.rs"]
mod common;

mod bicg;
mod both;
mod jacobi;

use common::solve::{GpuSolve, PRECONDS, true_rel, variants_and_modes};
use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{ConvectionField, convection_diffusion_3d};
use krylov_wgpu::solvers::{
    CheckMode, Method, Precond, Solution, SolveOptions, SolveReport, StopReason, Variant,
};
use krylov_wgpu::{Scalar, cpu};

/// Perturbed copies of b in a CPU ensemble.
const ENSEMBLE: usize = 8;

fn bicg_opts(variant: Variant, mode: CheckMode, precond: Precond, rtol: f64) -> SolveOptions {
    common::solve::opts(Method::Bicg, variant, mode, precond, rtol)
}

fn jacobi_opts(mode: CheckMode, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::Jacobi,
        check_mode: mode,
        rtol,
        max_iter: 5000,
        ..Default::default()
    }
}

/// A shared nonsymmetric matrix with its rhs (sherman4's own, else A·1).
fn load_nonsymmetric<T: Scalar>(name: &str) -> (Csr<T>, Vec<T>) {
    let a = common::problems::load(name);
    let b: Vec<f64> = if name == "sherman4" {
        common::problems::rhs_for(name, &a, &["sherman4"])
    } else {
        common::problems::ones_rhs(&a)
    };
    assert!(!a.is_symmetric(1e-12), "{name} is nonsymmetric");
    common::problems::cast(&a, &b)
}

/// The reports of the GPU solve with `o` on (A, b) in f64 and on the system rounded to f32.
fn reports_f64_and_f32(
    engine: &Engine,
    (solve64, solve32): (GpuSolve<f64>, GpuSolve<f32>),
    (a, b): (&Csr<f64>, &[f64]),
    o: &SolveOptions,
) -> [SolveReport; 2] {
    let (a32, b32) = common::problems::cast::<f32>(a, b);
    [
        solve64(engine, a, b, None, o, &mut ()).unwrap().report,
        solve32(engine, &a32, &b32, None, o, &mut ())
            .unwrap()
            .report,
    ]
}

/// 3D convection–diffusion (circular field, ε = 1) on a k³ grid, b = A·1.
fn convdiff<T: Scalar>(k: usize) -> (Csr<T>, Vec<T>) {
    common::problems::with_ones_rhs(convection_diffusion_3d::<T>(
        k,
        1.0,
        ConvectionField::Circular,
    ))
}

/// b with the entries i ≡ 0 (mod m) scaled by 1 + ε_T (a one-ulp perturbation).
fn perturbed<T: Scalar>(b: &[T], m: usize) -> Vec<T> {
    let f = T::from_f64(1.0 + T::PRECISION.epsilon());
    b.iter()
        .enumerate()
        .map(|(i, &v)| if i % m == 0 { v * f } else { v })
        .collect()
}

/// The CPU reference on b and its rounding-level ensemble.
struct Reference<T> {
    sol: Solution<T>,
    members: Vec<SolveReport>,
}

fn reference<T: Scalar>(a: &Csr<T>, b: &[T], o: &SolveOptions) -> Reference<T> {
    let sol = cpu::solve(a, b, None, o).unwrap();
    let members = (2..2 + ENSEMBLE)
        .map(|m| cpu::solve(a, &perturbed(b, m), None, o).unwrap().report)
        .collect();
    Reference { sol, members }
}

/// Length of the common prefix of two histories (relative deviation ≤ tol).
fn prefix(h: &[f64], r: &[f64], tol: f64) -> usize {
    h.iter()
        .zip(r)
        .take_while(|(x, y)| (*x - *y).abs() <= tol * y.abs())
        .count()
}

/// The outcome class: "the tracked residual met the tolerance" whether or not the true
/// residual then confirmed it (f32 recurrences drift differently), else the reason.
fn outcome(r: &StopReason) -> &'static str {
    match r {
        StopReason::Converged | StopReason::ResidualGap => "tracked",
        other => other.name(),
    }
}

impl<T: Scalar> Reference<T> {
    /// Whether the reference and every ensemble member stopped for the same reason.
    fn unanimous(&self) -> bool {
        let o = &self.sol.report.reason;
        self.members.iter().all(|m| m.reason.name() == o.name())
    }

    /// The history-prefix and iteration-span rules of the module docs.
    fn assert_agrees(&self, gpu: &SolveReport, hist_tol: f64, tag: &str) {
        let r = &self.sol.report;
        let ens_prefix = self
            .members
            .iter()
            .map(|m| prefix(&m.history, &r.history, hist_tol))
            .min()
            .unwrap();
        let gpu_prefix = prefix(&gpu.history, &r.history, hist_tol);
        assert!(
            gpu_prefix + 2 >= ens_prefix.min(gpu.history.len()),
            "{tag}: GPU history follows the CPU's for {gpu_prefix} iterations, the CPU's own \
             perturbed runs for {ens_prefix}"
        );
        // Only where every CPU run converged (true residual confirmed) are the outcome and
        // the count a reference. A CPU whose tracked residual drifted from the true one
        // (residual_gap: its serial f32 sums on sherman4) says nothing about when the
        // tolerance is met; where the CPU runs break down, when and even whether a run
        // meets a near-breakdown is chaotic (pde2961 in f32: breakdowns at iterations 36
        // to 649 across the ensemble, and GPU runs that avoid them and converge — honestly,
        // as checked above).
        // (Nor does a run that restarted: a restart's timing is as chaotic.)
        let restarted =
            r.restarts > 0 || gpu.restarts > 0 || self.members.iter().any(|m| m.restarts > 0);
        if self.unanimous() && r.reason == StopReason::Converged && !restarted {
            assert_eq!(
                outcome(&gpu.reason),
                outcome(&r.reason),
                "{tag}: {} (CPU: {})",
                gpu.reason_detail,
                r.reason_detail
            );
            let counts = self.members.iter().map(|m| m.iterations);
            let lo = counts.clone().chain([r.iterations]).min().unwrap();
            let hi = counts.chain([r.iterations]).max().unwrap();
            let slack = ((r.iterations as f64) * 0.02).ceil().max(1.0) as usize;
            assert!(
                gpu.iterations + slack >= lo && gpu.iterations <= hi + slack,
                "{tag}: GPU {} iterations, CPU {} (ensemble {lo}..={hi}, ±{slack})",
                gpu.iterations,
                r.iterations
            );
        }
    }
}

/// Every variant × mode × preconditioner of BiCG on one system. `strict`: the CPU and the
/// GPU must converge (f64 and well-conditioned problems); otherwise the GPU must be honest.
fn check_bicg<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    b: &[T],
    rtol: f64,
    hist_tol: f64,
    strict: bool,
    what: &str,
) {
    for precond in PRECONDS {
        // The CPU reference runs one BiCG for both variants.
        let reference = reference(
            a,
            b,
            &bicg_opts(Variant::Pipelined, CheckMode::Device, precond, rtol),
        );
        if strict {
            assert!(
                reference.sol.report.converged && reference.unanimous(),
                "{what} {precond}: CPU reference: {}",
                reference.sol.report.reason_detail
            );
        }
        for (variant, mode) in variants_and_modes() {
            let tag = format!("{what} {variant} {mode} {precond} {}", T::PRECISION);
            let o = bicg_opts(variant, mode, precond, rtol);
            let sol = krylov_wgpu::solvers::bicg::solve(engine, a, b, None, &o, &mut ()).unwrap();
            let r = &sol.report;
            assert_eq!(r.history.len(), r.iterations + 1, "{tag}: history length");
            assert!(sol.x.iter().all(|v| v.is_finite()), "{tag}: x finite");
            let rel = true_rel(a, b, &sol.x);
            assert!(
                (rel - r.relative_residual).abs() <= 1e-3 * rel + 1e-300,
                "{tag}: reported residual {} vs {rel}",
                r.relative_residual
            );
            if strict {
                assert!(r.converged, "{tag}: {}", r.reason_detail);
            }
            if r.converged {
                assert!(
                    rel <= rtol * 1.001,
                    "{tag}: true residual {rel:e} > {rtol:e}"
                );
            } else {
                assert!(
                    matches!(
                        r.reason,
                        StopReason::Breakdown { .. }
                            | StopReason::ResidualGap
                            | StopReason::MaxIterations
                    ),
                    "{tag}: {}",
                    r.reason_detail
                );
            }
            reference.assert_agrees(r, hist_tol, &tag);
        }
    }
}

/// History tolerance: trajectories that differ by more have separated (f64: far above the
/// round-off of one iteration; f32: a few hundred ulps).
fn hist_tol<T: Scalar>() -> f64 {
    match T::PRECISION {
        krylov_wgpu::Precision::F64 => 1e-6,
        krylov_wgpu::Precision::F32 => 1e-2,
    }
}
