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

mod common;

use krylov_wgpu::gpu::{Engine, Tuning};
use krylov_wgpu::matrix::generators::{
    ConvectionField, convection_diffusion_3d, poisson_2d_fd, random_nonsymmetric,
};
use krylov_wgpu::matrix::{Coo, Csr, market};
use krylov_wgpu::solvers::{
    CheckMode, Method, Precond, Solution, SolveOptions, SolveReport, StopReason, Variant, bicg,
    jacobi, on_gpu, solve_gpu,
};
use krylov_wgpu::{KrylovError, Scalar, cpu};

const VARIANTS: [Variant; 2] = [Variant::Classical, Variant::Pipelined];
const MODES: [CheckMode; 2] = [CheckMode::Paper, CheckMode::Device];
const PRECONDS: [Precond; 2] = [Precond::None, Precond::Jacobi];
/// Perturbed copies of b in a CPU ensemble.
const ENSEMBLE: usize = 8;

fn bicg_opts(variant: Variant, mode: CheckMode, precond: Precond, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::Bicg,
        variant,
        check_mode: mode,
        precond,
        rtol,
        max_iter: 5000,
        ..Default::default()
    }
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
fn load<T: Scalar>(name: &str) -> (Csr<T>, Vec<T>) {
    let a: Csr<f64> = market::read_matrix_market(common::data(&format!("{name}.mtx"))).unwrap();
    let b: Vec<f64> = if name == "sherman4" {
        market::read_vector(common::data("sherman4_rhs.mtx")).unwrap()
    } else {
        a.mul_vec(&vec![1.0; a.ncols()]).unwrap()
    };
    assert!(!a.is_symmetric(1e-12), "{name} is nonsymmetric");
    (
        a.cast().unwrap(),
        b.iter().map(|&v| T::from_f64(v)).collect(),
    )
}

/// 3D convection–diffusion (circular field, ε = 1) on a k³ grid, b = A·1.
fn convdiff<T: Scalar>(k: usize) -> (Csr<T>, Vec<T>) {
    let a = convection_diffusion_3d::<T>(k, 1.0, ConvectionField::Circular);
    let b = a.mul_vec(&vec![T::one(); a.ncols()]).unwrap();
    (a, b)
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
        if self.unanimous() && r.reason == StopReason::Converged {
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

fn true_rel<T: Scalar>(a: &Csr<T>, b: &[T], x: &[T]) -> f64 {
    cpu::true_relative_residual(a, b, x)
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
        for variant in VARIANTS {
            for mode in MODES {
                let tag = format!("{what} {variant} {mode} {precond} {}", T::PRECISION);
                let o = bicg_opts(variant, mode, precond, rtol);
                let sol = bicg::solve(engine, a, b, None, &o, &mut ()).unwrap();
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
}

/// History tolerance: trajectories that differ by more have separated (f64: far above the
/// round-off of one iteration; f32: a few hundred ulps).
fn hist_tol<T: Scalar>() -> f64 {
    match T::PRECISION {
        krylov_wgpu::Precision::F64 => 1e-6,
        krylov_wgpu::Precision::F32 => 1e-2,
    }
}

#[test]
fn bicg_f64_matches_cpu_on_shared_nonsymmetric_matrices() {
    let Some(engine) = common::engine() else {
        return;
    };
    for name in ["pores_1", "sherman4", "pde2961"] {
        let (a, b) = load::<f64>(name);
        check_bicg(&engine, &a, &b, 1e-10, hist_tol::<f64>(), true, name);
    }
}

#[test]
fn bicg_matches_cpu_on_convection_diffusion_both_precisions() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a, b) = convdiff::<f64>(10);
    check_bicg(
        &engine,
        &a,
        &b,
        1e-10,
        hist_tol::<f64>(),
        true,
        "convdiff3d:10",
    );
    let (a, b) = convdiff::<f32>(10);
    check_bicg(
        &engine,
        &a,
        &b,
        1e-5,
        hist_tol::<f32>(),
        true,
        "convdiff3d:10",
    );
    // Well conditioned: the solutions agree with the CPU's too (κ·rtol).
    let (a, b) = convdiff::<f64>(6);
    for variant in VARIANTS {
        let o = bicg_opts(variant, CheckMode::Device, Precond::Jacobi, 1e-12);
        let g = bicg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
        assert!(g.report.converged, "{}", g.report.reason_detail);
        let err = g.x.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
        assert!(err < 1e-9, "{variant}: max |x − 1| = {err:e}");
    }
}

#[test]
fn bicg_f32_on_shared_matrices_is_honest_and_follows_the_cpu() {
    let Some(engine) = common::engine() else {
        return;
    };
    for name in ["pores_1", "sherman4", "pde2961"] {
        let (a, b) = load::<f32>(name);
        check_bicg(&engine, &a, &b, 1e-4, hist_tol::<f32>(), false, name);
    }
}

#[test]
fn bicg_launch_and_transfer_counts_are_exact() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a, b) = convdiff::<f32>(8);
    let at_bytes = a.transpose().storage_bytes() as u64;
    for precond in PRECONDS {
        for variant in VARIANTS {
            for (mode, batch) in [
                (CheckMode::Paper, 0),
                (CheckMode::Device, 1),
                (CheckMode::Device, 7),
            ] {
                let o = SolveOptions {
                    batch,
                    ..bicg_opts(variant, mode, precond, 1e-5)
                };
                let r = bicg::solve(&engine, &a, &b, None, &o, &mut ())
                    .unwrap()
                    .report;
                let tag = format!("{variant} {mode} k={batch} {precond}");
                assert!(r.converged, "{tag}: {}", r.reason_detail);
                assert_eq!(r.transpose_bytes, Some(at_bytes), "{tag}: Aᵀ memory");
                let j = r.iterations_recorded as u64;
                let c = &r.loop_counts;
                let jac = precond == Precond::Jacobi;
                match (variant, mode) {
                    (Variant::Pipelined, CheckMode::Paper) => {
                        // bicg_update + bicg_direction_spmv; one readback of both slots.
                        assert_eq!(j, r.iterations as u64, "{tag}");
                        assert_eq!(c.dispatches, 2 * j, "{tag}");
                        assert_eq!((c.readbacks, c.uploads, c.submits), (j, 0, j), "{tag}");
                        assert_eq!(r.transfers_per_iteration, 1.0, "{tag}");
                    }
                    (Variant::Pipelined, CheckMode::Device) => {
                        assert_eq!(c.dispatches, 2 * j, "{tag}");
                        assert_eq!(c.readbacks, j.div_ceil(batch as u64), "{tag}");
                        assert_eq!(c.uploads, 0, "{tag}");
                        // One more batch is queued while the converging one is read.
                        assert!(
                            j >= r.iterations as u64 && j < (r.iterations + 2 * batch) as u64,
                            "{tag}: recorded {j}"
                        );
                    }
                    (Variant::Classical, CheckMode::Paper) => {
                        // spmv ×2, dot ×3 | axpy ×3, dot, [diag ×2,] dot ×2 [+1] | xpay ×2
                        // (the xpays of the last iteration are never recorded).
                        let per = if jac { 16 } else { 13 };
                        assert_eq!(j, r.iterations as u64, "{tag}");
                        assert_eq!(c.dispatches, per * j - 2, "{tag}");
                        assert_eq!((c.readbacks, c.uploads), (2 * j, 2 * j), "{tag}");
                        assert_eq!(r.transfers_per_iteration, 4.0, "{tag}");
                    }
                    (Variant::Classical, CheckMode::Device) => {
                        // + bicg_finish after ⟨p̃,q⟩ and after ρ.
                        let per = if jac { 18 } else { 15 };
                        assert_eq!(c.dispatches, per * j, "{tag}");
                        assert_eq!(c.readbacks, j.div_ceil(batch as u64), "{tag}");
                        assert_eq!(c.uploads, 0, "{tag}");
                    }
                }
                if variant == Variant::Pipelined {
                    assert_eq!(r.dispatches_per_iteration, 2.0, "{tag}");
                }
                assert!(
                    r.to_json()
                        .contains(&format!("\"transpose_bytes\":{at_bytes}"))
                );
            }
        }
    }
}

#[test]
fn jacobi_iteration_counts_are_exact() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = random_nonsymmetric::<f32>(2000, 7, 11);
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    for (mode, batch) in [
        (CheckMode::Paper, 0),
        (CheckMode::Device, 1),
        (CheckMode::Device, 5),
    ] {
        let o = SolveOptions {
            batch,
            ..jacobi_opts(mode, 1e-5)
        };
        let r = jacobi::solve(&engine, &a, &b, None, &o, &mut ())
            .unwrap()
            .report;
        let tag = format!("{mode} k={batch}");
        assert!(r.converged, "{tag}");
        assert_eq!(r.transpose_bytes, None);
        let j = r.iterations_recorded as u64;
        let c = &r.loop_counts;
        // One fused launch per sweep.
        assert_eq!(c.dispatches, j, "{tag}");
        assert_eq!(r.dispatches_per_iteration, 1.0, "{tag}");
        assert_eq!(c.uploads, 0, "{tag}");
        match mode {
            CheckMode::Paper => {
                assert_eq!(j, r.iterations as u64, "{tag}");
                assert_eq!((c.readbacks, c.submits), (j, j), "{tag}");
                assert_eq!(r.transfers_per_iteration, 1.0, "{tag}");
            }
            CheckMode::Device => {
                assert_eq!(c.readbacks, j.div_ceil(batch as u64), "{tag}");
                assert!(
                    j >= r.iterations as u64 && j < (r.iterations + 2 * batch) as u64,
                    "{tag}: recorded {j}"
                );
            }
        }
    }
}

/// The Jacobi iteration in both modes agrees with the CPU: same count (±1), true residual.
fn check_jacobi<T: Scalar>(engine: &Engine, a: &Csr<T>, b: &[T], rtol: f64, what: &str) {
    let reference = cpu::solve(a, b, None, &jacobi_opts(CheckMode::Device, rtol)).unwrap();
    assert!(reference.report.converged, "{what}: CPU");
    for variant in VARIANTS {
        for mode in MODES {
            let o = SolveOptions {
                variant,
                ..jacobi_opts(mode, rtol)
            };
            let tag = format!("{what} {variant} {mode} {}", T::PRECISION);
            let sol = jacobi::solve(engine, a, b, None, &o, &mut ()).unwrap();
            let r = &sol.report;
            assert!(r.converged, "{tag}: {}", r.reason_detail);
            assert_eq!(
                r.variant, variant,
                "{tag}: the report says the variant asked for"
            );
            assert!(
                r.iterations.abs_diff(reference.report.iterations) <= 1,
                "{tag}: GPU {} vs CPU {}",
                r.iterations,
                reference.report.iterations
            );
            assert_eq!(r.history.len(), r.iterations + 1, "{tag}");
            let rel = true_rel(a, b, &sol.x);
            assert!(rel <= rtol * 1.001, "{tag}: true residual {rel:e}");
            assert!((rel - r.relative_residual).abs() <= 1e-3 * rel, "{tag}");
        }
    }
}

#[test]
fn jacobi_iteration_converges_on_diagonally_dominant_matrices() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = random_nonsymmetric::<f64>(2000, 7, 42);
    assert!(a.is_diagonally_dominant(true));
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    check_jacobi(&engine, &a, &b, 1e-10, "random_nonsymmetric:2000");
    let a: Csr<f32> = a.cast().unwrap();
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    check_jacobi(&engine, &a, &b, 1e-5, "random_nonsymmetric:2000");
    // Weakly (irreducibly) dominant: slow, hundreds of sweeps, still the CPU's count.
    let (a, b) = convdiff::<f64>(8);
    check_jacobi(&engine, &a, &b, 1e-8, "convdiff3d:8");
}

/// Poisson 2D with its diagonal lowered by `shift`: ρ(I − D⁻¹A) = 4cos(πh)/(4 − shift).
fn shifted_poisson(k: usize, shift: f64) -> Csr<f64> {
    let p = poisson_2d_fd::<f64>(k);
    let mut coo = Coo::new(p.nrows(), p.ncols());
    for i in 0..p.nrows() {
        let (c, v) = p.row(i);
        for (&j, &x) in c.iter().zip(v) {
            let j = j as usize;
            coo.push(i, j, if j == i { x - shift } else { x }).unwrap();
        }
    }
    coo.to_csr().unwrap()
}

#[test]
fn jacobi_iteration_reports_divergence() {
    let Some(engine) = common::engine() else {
        return;
    };
    let two = Csr::<f64>::new(
        2,
        2,
        vec![0, 2, 4],
        vec![0, 1, 0, 1],
        vec![1.0, 2.0, 2.0, 1.0],
    )
    .unwrap();
    for (a, what) in [
        (two, "[[1,2],[2,1]]"),
        (shifted_poisson(12, 2.0), "poisson - 2I"),
    ] {
        let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
        let o = jacobi_opts(CheckMode::Device, 1e-8);
        let reference = cpu::solve(&a, &b, None, &o).unwrap();
        assert_eq!(reference.report.reason, StopReason::Diverged);
        let a32: Csr<f32> = a.cast().unwrap();
        let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
        for mode in MODES {
            let o = jacobi_opts(mode, 1e-8);
            let reports = [
                jacobi::solve(&engine, &a, &b, None, &o, &mut ())
                    .unwrap()
                    .report,
                jacobi::solve(&engine, &a32, &b32, None, &o, &mut ())
                    .unwrap()
                    .report,
            ];
            for r in reports {
                let tag = format!("{what} {mode} {}", r.precision);
                assert_eq!(r.reason, StopReason::Diverged, "{tag}: {}", r.reason_detail);
                assert!(!r.converged, "{tag}");
                assert!(
                    r.reason_detail.contains("not diagonally dominant enough"),
                    "{tag}: {}",
                    r.reason_detail
                );
                assert!(
                    r.iterations.abs_diff(reference.report.iterations) <= 1,
                    "{tag}: diverged at {} (CPU {})",
                    r.iterations,
                    reference.report.iterations
                );
                let last = *r.history.last().unwrap();
                assert!(last > cpu::DIVERGENCE_FACTOR * r.history[0], "{tag}");
                assert!(r.to_json().contains("\"reason\":\"diverged\""), "{tag}");
            }
        }
    }
}

fn tiny(rows: &[&[f64]]) -> Csr<f64> {
    let n = rows.len();
    let mut coo = Coo::new(n, n);
    for (i, row) in rows.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if v != 0.0 {
                coo.push(i, j, v).unwrap();
            }
        }
    }
    coo.to_csr().unwrap()
}

#[test]
fn bicg_breakdowns_are_reported_by_name() {
    let Some(engine) = common::engine() else {
        return;
    };
    // ⟨x, Ax⟩ = 0 for every x (skew-symmetric): ⟨p̃0, Ap0⟩ = ‖r0‖-weighted 0 at once.
    let n = 64;
    let mut skew = Coo::new(n, n);
    for i in 0..n - 1 {
        skew.push(i, i + 1, 1.0).unwrap();
        skew.push(i + 1, i, -1.0).unwrap();
    }
    let skew = skew.to_csr().unwrap();
    // A diagonal of mixed signs with Jacobi: ρ0 = ⟨D⁻¹r0, r0⟩ = 1 − 1 = 0.
    let mixed = tiny(&[&[1.0, 0.5], &[0.25, -1.0]]);
    // jpwh_991 with b = A·1: b is a left eigenvector, so r̃1 = 0 (the CPU test's case).
    let jpwh: Csr<f64> = market::read_matrix_market(common::data("jpwh_991.mtx")).unwrap();
    let jb = jpwh.mul_vec(&vec![1.0; jpwh.ncols()]).unwrap();
    // (matrix, rhs, preconditioner, the quantity that breaks down, at which iteration)
    type Case<'a> = (&'a Csr<f64>, Vec<f64>, Precond, &'static str, usize);
    let cases: [Case<'_>; 3] = [
        (&skew, vec![1.0; n], Precond::None, bicg::BREAKDOWN_PTQ, 0),
        (
            &mixed,
            vec![1.0, 1.0],
            Precond::Jacobi,
            bicg::BREAKDOWN_RHO,
            0,
        ),
        (&jpwh, jb, Precond::None, bicg::BREAKDOWN_RHO, 1),
    ];
    for (a, b, precond, quantity, at) in cases {
        let o = bicg_opts(Variant::Pipelined, CheckMode::Device, precond, 1e-8);
        let cpu_r = cpu::solve(a, &b, None, &o).unwrap().report;
        let want = StopReason::Breakdown {
            quantity: quantity.into(),
        };
        assert_eq!((&cpu_r.reason, cpu_r.iterations), (&want, at), "CPU");
        let a32: Csr<f32> = a.cast().unwrap();
        let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
        for variant in VARIANTS {
            for mode in MODES {
                let o = bicg_opts(variant, mode, precond, 1e-8);
                let reports = [
                    bicg::solve(&engine, a, &b, None, &o, &mut ())
                        .unwrap()
                        .report,
                    bicg::solve(&engine, &a32, &b32, None, &o, &mut ())
                        .unwrap()
                        .report,
                ];
                for r in reports {
                    let tag = format!("{quantity} {variant} {mode} {}", r.precision);
                    assert_eq!(r.reason, want, "{tag}: {}", r.reason_detail);
                    assert_eq!(r.iterations, at, "{tag}");
                    assert!(!r.converged, "{tag}");
                    assert!(
                        r.reason_detail.contains(quantity),
                        "{tag}: {}",
                        r.reason_detail
                    );
                }
            }
        }
    }
}

#[test]
fn bicg_never_converges_on_west0479() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a: Csr<f64> = market::read_matrix_market(common::data("west0479.mtx")).unwrap();
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let o = SolveOptions {
        max_iter: 300,
        ..bicg_opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8)
    };
    let cpu_r = cpu::solve(&a, &b, None, &o).unwrap().report;
    assert!(!cpu_r.converged);
    for variant in VARIANTS {
        for mode in MODES {
            let o = SolveOptions {
                variant,
                check_mode: mode,
                ..o.clone()
            };
            let r = bicg::solve(&engine, &a, &b, None, &o, &mut ())
                .unwrap()
                .report;
            let tag = format!("{variant} {mode}");
            assert!(!r.converged, "{tag}: {}", r.reason_detail);
            assert_eq!(
                r.reason.name(),
                cpu_r.reason.name(),
                "{tag}: {}",
                r.reason_detail
            );
            assert!(r.relative_residual > 1e-8, "{tag}");
        }
    }
    // With Jacobi it is a typed error: west0479 has zero diagonal entries.
    let o = bicg_opts(Variant::Pipelined, CheckMode::Device, Precond::Jacobi, 1e-8);
    assert!(matches!(
        bicg::solve(&engine, &a, &b, None, &o, &mut ()),
        Err(KrylovError::ZeroDiagonal { .. })
    ));
}

#[test]
fn device_mode_returns_the_x_of_the_converging_iteration() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a, b) = convdiff::<f32>(8);
    let r = random_nonsymmetric::<f32>(1500, 7, 5);
    let rb = r.mul_vec(&vec![1.0; r.ncols()]).unwrap();
    // A device-mode solve for (batch, max_iter), with the true residual of the x it returns.
    type Solver<'a> = Box<dyn Fn(usize, usize) -> (Solution<f32>, f64) + 'a>;
    let mut runs: Vec<(String, Solver<'_>)> = Vec::new();
    for variant in VARIANTS {
        let (a, b, engine) = (&a, &b, &engine);
        runs.push((
            format!("bicg {variant}"),
            Box::new(move |batch, max_iter| {
                let o = SolveOptions {
                    batch,
                    max_iter,
                    ..bicg_opts(variant, CheckMode::Device, Precond::Jacobi, 1e-5)
                };
                let s = bicg::solve(engine, a, b, None, &o, &mut ()).unwrap();
                let rel = true_rel(a, b, &s.x);
                (s, rel)
            }),
        ));
    }
    runs.push((
        "jacobi".into(),
        Box::new(|batch, max_iter| {
            let o = SolveOptions {
                batch,
                max_iter,
                ..jacobi_opts(CheckMode::Device, 1e-5)
            };
            let s = jacobi::solve(&engine, &r, &rb, None, &o, &mut ()).unwrap();
            let rel = true_rel(&r, &rb, &s.x);
            (s, rel)
        }),
    ));
    for (what, run) in &runs {
        // A batch of 13 overshoots convergence: the iterations recorded after it are no-ops.
        let (big, _) = run(13, 5000);
        assert!(big.report.converged, "{what}");
        let j = big.report.iterations;
        assert!(
            big.report.iterations_recorded > j,
            "{what}: the batch overshoots"
        );
        // One iteration per batch stops there too (with one no-op batch queued behind it);
        // so does a run limited to j iterations.
        let (single, _) = run(1, 5000);
        assert_eq!(single.report.iterations, j, "{what}");
        assert!(single.report.iterations_recorded <= j + 1, "{what}");
        let (limited, _) = run(1, j);
        for (other, how) in [(&single, "batch 1"), (&limited, "max_iter = j")] {
            assert!(
                big.x
                    .iter()
                    .zip(&other.x)
                    .all(|(p, q)| p.to_bits() == q.to_bits()),
                "{what}: x after overshooting differs from x at iteration {j} ({how})"
            );
        }
        assert_eq!(big.report.history, single.report.history, "{what}");
        // A run stopped by the iteration limit returns the x of its last iteration.
        let (short, rel) = run(4, j / 2);
        assert_eq!(short.report.reason, StopReason::MaxIterations, "{what}");
        assert!(
            (rel - short.report.relative_residual).abs() <= 1e-6 * rel,
            "{what}: the reported residual is that of the returned x"
        );
        if what == "jacobi" {
            // The Jacobi iteration tracks b − Ax itself: its last entry is the returned x's
            // (x_{k+1}, already computed by the sweep that finished ‖r_k‖, is not returned;
            // it would be ~3× smaller here).
            let tracked = short.report.history.last().unwrap() / short.report.b_norm;
            assert!(
                (tracked - rel).abs() <= 1e-3 * rel,
                "{tracked:e} vs {rel:e}"
            );
        }
    }
}

#[test]
fn trivial_systems_and_initial_guesses() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a, _) = convdiff::<f64>(4);
    let n = a.nrows();
    let ones = vec![1.0; n];
    let b = a.mul_vec(&ones).unwrap();
    for mode in MODES {
        let mut sols = Vec::new();
        for variant in VARIANTS {
            let o = bicg_opts(variant, mode, Precond::None, 1e-10);
            sols.push(bicg::solve(&engine, &a, &vec![0.0; n], None, &o, &mut ()).unwrap());
            sols.push(bicg::solve(&engine, &a, &b, Some(&ones), &o, &mut ()).unwrap());
        }
        let o = jacobi_opts(mode, 1e-10);
        sols.push(jacobi::solve(&engine, &a, &vec![0.0; n], None, &o, &mut ()).unwrap());
        sols.push(jacobi::solve(&engine, &a, &b, Some(&ones), &o, &mut ()).unwrap());
        for s in sols {
            let r = &s.report;
            assert!(
                r.converged && r.iterations == 0,
                "{} {mode}: {}",
                r.method,
                r.reason_detail
            );
            assert!(s.x.iter().all(|&v| v == 0.0) || s.x == ones, "{}", r.method);
        }
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let Some(engine) = common::engine() else {
        return;
    };
    let err = |r: Result<Solution<f64>, KrylovError>| r.expect_err("an error");
    // Zero diagonal: the Jacobi iteration and Jacobi-preconditioned BiCG refuse it.
    let zero_diag = tiny(&[&[0.0, 1.0], &[1.0, 2.0]]);
    let o = jacobi_opts(CheckMode::Device, 1e-8);
    assert!(matches!(
        err(jacobi::solve(
            &engine,
            &zero_diag,
            &[1.0, 1.0],
            None,
            &o,
            &mut ()
        )),
        KrylovError::ZeroDiagonal { row: 0 }
    ));
    let o = bicg_opts(Variant::Classical, CheckMode::Paper, Precond::Jacobi, 1e-8);
    assert!(matches!(
        err(bicg::solve(
            &engine,
            &zero_diag,
            &[1.0, 1.0],
            None,
            &o,
            &mut ()
        )),
        KrylovError::ZeroDiagonal { row: 0 }
    ));
    // Without Jacobi BiCG runs on it (and solves it).
    let o = bicg_opts(Variant::Classical, CheckMode::Paper, Precond::None, 1e-8);
    assert!(
        bicg::solve(&engine, &zero_diag, &[1.0, 1.0], None, &o, &mut ())
            .unwrap()
            .report
            .converged
    );
    let (a, b) = convdiff::<f64>(3);
    assert!(matches!(
        err(bicg::solve(&engine, &a, &b[1..], None, &o, &mut ())),
        KrylovError::DimensionMismatch { .. }
    ));
    assert!(matches!(
        err(bicg::solve(&engine, &a, &b, Some(&[0.0; 3]), &o, &mut ())),
        KrylovError::DimensionMismatch { .. }
    ));
    let wrong = SolveOptions {
        method: Method::Cg,
        ..o.clone()
    };
    assert!(matches!(
        err(bicg::solve(&engine, &a, &b, None, &wrong, &mut ())),
        KrylovError::InvalidOption(_)
    ));
    assert!(matches!(
        err(jacobi::solve(&engine, &a, &b, None, &wrong, &mut ())),
        KrylovError::InvalidOption(_)
    ));
}

#[test]
fn both_methods_run_through_solve_gpu() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a, b) = convdiff::<f64>(5);
    for method in [Method::Bicg, Method::Jacobi] {
        for variant in VARIANTS {
            assert!(on_gpu(method, variant));
            let o = SolveOptions {
                method,
                variant,
                rtol: 1e-8,
                ..Default::default()
            };
            let s = solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
            assert!(s.report.converged && s.report.method == method && s.report.device.is_gpu());
        }
    }
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
    let (a, b) = convdiff::<f64>(3);
    let o = bicg_opts(Variant::Pipelined, CheckMode::Device, Precond::None, 1e-8);
    let e = bicg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap_err();
    assert!(matches!(e, KrylovError::MissingFeature { .. }), "{e}");
    let o = jacobi_opts(CheckMode::Device, 1e-8);
    let e = jacobi::solve(&engine, &a, &b, None, &o, &mut ()).unwrap_err();
    assert!(matches!(e, KrylovError::MissingFeature { .. }), "{e}");
    // f32 still works there.
    let (a, b) = convdiff::<f32>(3);
    assert!(
        jacobi::solve(&engine, &a, &b, None, &o, &mut ())
            .unwrap()
            .report
            .converged
    );
}

/// rtol 3e-7 sits at the f32 floor of convection–diffusion: the tracked residual meets it
/// while the true one does not, so the driver restarts from x (up to 3 times). Through the
/// restarts the x returned is the x the report describes (Jacobi keeps x in a rotation of
/// three buffers; a restart continues from wherever x_k is) and convergence is never false.
#[test]
fn restarts_keep_report_and_solution_consistent() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a, b) = convdiff::<f32>(10);
    let rtol = 3e-7;
    for mode in MODES {
        let mut sols = vec![(
            "jacobi".to_string(),
            jacobi::solve(&engine, &a, &b, None, &jacobi_opts(mode, rtol), &mut ()).unwrap(),
        )];
        assert!(
            sols[0].1.report.restarts >= 1,
            "{mode}: the Jacobi run restarts"
        );
        for variant in VARIANTS {
            let o = bicg_opts(variant, mode, Precond::None, rtol);
            let s = bicg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
            sols.push((format!("bicg {variant}"), s));
        }
        for (what, s) in sols {
            let r = &s.report;
            let rel = true_rel(&a, &b, &s.x);
            let tag = format!("{what} {mode}: {}", r.reason_detail);
            assert!(
                (rel - r.relative_residual).abs() <= 1e-6 * rel,
                "{tag}: reported {:e}, x has {rel:e}",
                r.relative_residual
            );
            assert_eq!(r.history.len(), r.iterations + 1, "{tag}");
            if r.converged {
                assert!(rel <= rtol * 1.001, "{tag}");
            } else {
                assert_eq!(r.reason, StopReason::ResidualGap, "{tag}");
            }
        }
    }
}

/// The workgroup-memory reduction (adapters without subgroups) and grids of few workgroups
/// (grid-stride loops over many rows per thread) give the same results.
#[test]
fn reduction_paths_and_small_grids_agree() {
    let Some(ctx) = common::context() else { return };
    let (a, b) = convdiff::<f64>(9);
    let mut counts = Vec::new();
    for tuning in [
        Tuning::default(),
        Tuning {
            subgroups: Some(false),
            ..Tuning::default()
        },
        Tuning {
            workgroup_size: 64,
            max_groups: 3,
            subgroups: Some(false),
            ..Tuning::default()
        },
        Tuning {
            workgroup_size: 512,
            ..Tuning::default()
        },
    ] {
        let engine = Engine::with_tuning(ctx.clone(), tuning);
        let mut row = Vec::new();
        for variant in VARIANTS {
            for mode in MODES {
                let o = bicg_opts(variant, mode, Precond::Jacobi, 1e-10);
                let s = bicg::solve(&engine, &a, &b, None, &o, &mut ()).unwrap();
                assert!(s.report.converged, "{tuning:?} {variant} {mode}");
                assert!(true_rel(&a, &b, &s.x) <= 1e-10 * 1.001, "{tuning:?}");
                row.push(s.report.iterations);
            }
        }
        for mode in MODES {
            let s =
                jacobi::solve(&engine, &a, &b, None, &jacobi_opts(mode, 1e-8), &mut ()).unwrap();
            assert!(s.report.converged, "{tuning:?} jacobi {mode}");
            row.push(s.report.iterations);
        }
        counts.push(row);
    }
    for row in &counts[1..] {
        for (x, y) in row.iter().zip(&counts[0]) {
            assert!(x.abs_diff(*y) <= 1, "{counts:?}");
        }
    }
}
