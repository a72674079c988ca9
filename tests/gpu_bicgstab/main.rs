//! GPU BiCGStab (classical and pipelined, f32 and f64, `paper` and `device` checks, with and
//! without Jacobi) against the CPU reference of the same variant, with exact launch/transfer
//! counts, the device-mode exact-stop property and failure reporting by name.
//!
//! Grouped by concern: agreement with the CPU reference (`agreement`), launch and transfer
//! counts and the exact stop (`counts`), failures reported by name and typed errors
//! (`failures`), tunings and the library/CLI entry points (`kernels`).

#[path = "../common/mod.rs"]
mod common;

mod agreement;
mod counts;
mod failures;
mod kernels;

use common::solve::{MODES, VARIANTS, assert_converged, rtol_for};
use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::{Coo, Csr};
use krylov_wgpu::solvers::{CheckMode, Method, Precond, Solution, SolveOptions, Variant, bicgstab};
use krylov_wgpu::{Precision, Scalar, cpu};

fn opts(variant: Variant, mode: CheckMode, precond: Precond, rtol: f64) -> SolveOptions {
    common::solve::opts(Method::Bicgstab, variant, mode, precond, rtol)
}

/// A GPU BiCGStab solve from x0 = 0 without a monitor.
fn solve<T: Scalar>(engine: &Engine, a: &Csr<T>, b: &[T], o: &SolveOptions) -> Solution<T> {
    bicgstab::solve(engine, a, b, None, o, &mut ()).unwrap()
}

/// A shipped matrix with its right-hand side: sherman4 comes with its own, the others get A·x*
/// (b = A·1 breaks BiCGStab down on jpwh_991, whose column sums are constant: r0 is then a
/// left eigenvector and ⟨r1, r0*⟩ = 0).
fn system(name: &str) -> (Csr<f64>, Vec<f64>) {
    common::problems::shipped_system(name, &["sherman4"])
}

/// P A Pᵀ and P b for the permutation i ↦ (m·i + shift) mod n (m coprime to n): the same
/// system, the same Krylov method in exact arithmetic, only the summation order changes.
fn permuted<T: Scalar>(a: &Csr<T>, b: &[T], m: usize, shift: usize) -> (Csr<T>, Vec<T>) {
    let n = a.nrows();
    let perm = |i: usize| (m * i + shift) % n;
    let mut coo = Coo::new(n, n);
    let mut pb = vec![T::zero(); n];
    for i in 0..n {
        let (cols, vals) = a.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            coo.push(perm(i), perm(j as usize), v).unwrap();
        }
        pb[perm(i)] = b[i];
    }
    (coo.to_csr().unwrap(), pb)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The iteration counts the CPU reference (same variant, same precision) takes on the system
/// and on symmetric permutations of it (5; 16 for n ≤ 100, where they cost nothing), and its
/// own result on the unpermuted system.
///
/// Why a band and not one number: BiCGStab's count at these tolerances is set by rounding on
/// several of the shared matrices. The GPU sums in a different order (tree reductions) than
/// the CPU (left to right), and where that matters the CPU reference itself moves as much
/// when only its summation order changes: pores_1 without preconditioning (n = 30, hundreds
/// of iterations — far past finite termination) takes between 206 and 654 iterations over
/// eight permutations, sherman4 110–114, and the GPU's own count moves likewise with the
/// workgroup size (add32 pipelined at 1e-10: 65, 69, 62 for 256, 64, 128×3 workgroups).
/// Where the count is a property of the problem (the convection–diffusion generators,
/// jpwh_991 with Jacobi, ...) every permutation gives the same count and the band collapses
/// to the usual ±2 % (at least ±1) around the CPU reference. (Runs of more than n
/// iterations get no count check at all: see `check_all`.)
fn reference_band<T: Scalar>(a: &Csr<T>, b: &[T], o: &SolveOptions) -> (usize, usize, Solution<T>) {
    let reference = cpu::solve(a, b, None, o).unwrap();
    assert!(
        reference.report.converged,
        "CPU reference did not converge: {}",
        reference.report.reason_detail
    );
    let n = a.nrows();
    let coprime: Vec<usize> = [7, 11, 13, 17, 19, 23, 29, 31, 37, 41]
        .into_iter()
        .filter(|&m| gcd(m, n) == 1)
        .collect();
    let count = if n <= 100 { 16 } else { 5 };
    let (mut lo, mut hi) = (reference.report.iterations, reference.report.iterations);
    for k in 0..count {
        let (pa, pb) = permuted(a, b, coprime[k % coprime.len()], k + 1);
        let r = cpu::solve(&pa, &pb, None, o).unwrap().report;
        if r.converged {
            lo = lo.min(r.iterations);
            hi = hi.max(r.iterations);
        }
    }
    (lo, hi, reference)
}

/// The GPU count must lie in the band, widened by 2 % of the CPU count (at least 1; at least
/// 2 in f32). f32 at rtol 1e-5 ends within a small factor of what f32 can attain on these
/// matrices, where BiCGStab's residual moves irregularly (jpwh_991 in f32: …4.9e-5, 1.8e-5,
/// 5.1e-6), so one or two iterations move with rounding alone: the same GPU kernels take 28
/// iterations on jpwh_991 in `device` mode (scalars summed in f32 on the GPU) and 30 in
/// `paper` mode (the same partial sums finished in f64 on the host).
fn assert_iterations_in_band(
    gpu: usize,
    band: (usize, usize),
    cpu: usize,
    precision: Precision,
    what: &str,
) {
    let floor = if precision == Precision::F32 {
        2.0
    } else {
        1.0
    };
    let slack = ((cpu as f64) * 0.02).ceil().max(floor) as usize;
    assert!(
        gpu + slack >= band.0 && gpu <= band.1 + slack,
        "{what}: GPU {gpu} iterations, CPU reference {cpu} (band {band:?} ±{slack})"
    );
}

/// Every variant × preconditioner × check mode in precision T on one system: the GPU
/// converges, its true residual (recomputed here in f64) meets the tolerance, and its
/// iteration count lies in the band of the CPU reference of the same variant.
fn check_all<T: Scalar>(engine: &Engine, a: &Csr<T>, b: &[T], precs: &[Precond], what: &str) {
    let rtol = rtol_for(T::PRECISION);
    for variant in VARIANTS {
        for &precond in precs {
            let (lo, hi, reference) =
                reference_band(a, b, &opts(variant, CheckMode::Device, precond, rtol));
            for mode in MODES {
                let tag = format!("{what} {variant} {precond} {mode} {}", T::PRECISION);
                let sol = solve(engine, a, b, &opts(variant, mode, precond, rtol));
                let r = &sol.report;
                let rel = assert_converged(&sol, a, b, rtol, &tag);
                assert!(
                    (rel - r.relative_residual).abs() <= 1e-3 * rel + 1e-300,
                    "{tag}: reported residual {:e} vs {rel:e}",
                    r.relative_residual
                );
                // A run the CPU reference needs more than n iterations for is past BiCGStab's
                // finite termination and its count is set by rounding alone: pores_1 (n = 30)
                // without preconditioning takes 206–654 iterations on the CPU over eight
                // reorderings, 363 (classical) and 284 (pipelined) on lavapipe (subgroups of
                // 8) and 387 (pipelined) on an H200 (subgroups of 32). No tolerance on the
                // count means anything there; convergence and the true residual are checked.
                if reference.report.iterations <= a.nrows() {
                    assert_iterations_in_band(
                        r.iterations,
                        (lo, hi),
                        reference.report.iterations,
                        T::PRECISION,
                        &tag,
                    );
                }
                if variant == Variant::Pipelined && mode == CheckMode::Device {
                    assert_eq!(r.dispatches_per_iteration, 4.0, "{tag}");
                }
            }
        }
    }
}
