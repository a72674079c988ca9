//! The host's last word on a GPU solve that claims convergence: ‖b − A x‖₂ in f64 from the
//! x the device returned. The solvers' own true-residual guard runs on the device with the
//! same kernels, so a fault of those kernels is invisible to it: Mesa's llvmpipe (lavapipe)
//! ends every loop of an invocation after 65535 steps, so a row of more entries is cut short
//! in every SpMV — CG on an arrow matrix with a dense row of 10⁵ entries "converged" in 39
//! iterations there (the CPU reference: 10) with the host's |b − Ax|∞ at 34. One SpMV on the
//! host (O(nnz), beside a solve of many) turns such a claim into a named failure.

use crate::base::report::{Solution, StopReason};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// How far the host's residual may exceed the stopping threshold before it contradicts a
/// claimed convergence, beyond the rounding of computing b − Ax in the working precision.
const SLACK: f64 = 10.0;

/// Marks `sol` as not converged (reason `residual_gap`, the detail saying why) when it
/// claims convergence but the host's f64 ‖b − A x‖₂ exceeds `SLACK`× the threshold
/// max(rtol·‖b‖₂, atol) plus `SLACK`× the rounding of b − Ax in the solve's precision
/// (ε·‖ |A||x| + |b| ‖₂). Returns whether it did.
///
/// ```
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::host_check::contradicts_convergence;
/// use krylov_wgpu::solvers::{Method, Solution, SolveReport, StopReason, Variant};
/// use krylov_wgpu::Precision;
/// let a = poisson_2d_fd::<f64>(8);
/// let b = a.mul_vec(&vec![1.0; 64])?;
/// let mut report = SolveReport::new(Method::Cg, Variant::Pipelined, Precision::F64, 64, a.nnz());
/// (report.converged, report.reason) = (true, StopReason::Converged);
/// // A device that claims convergence for x = 0.
/// let mut sol = Solution { x: vec![0.0; 64], report };
/// assert!(contradicts_convergence(&a, &b, 1e-6, 0.0, &mut sol));
/// assert!(!sol.report.converged && sol.report.reason == StopReason::ResidualGap);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn contradicts_convergence<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    rtol: f64,
    atol: f64,
    sol: &mut Solution<T>,
) -> bool {
    if !sol.report.converged || sol.x.len() != a.nrows() || b.len() != a.nrows() {
        return false;
    }
    let (mut r2, mut rho2, mut b2) = (0.0f64, 0.0f64, 0.0f64);
    let mut longest = 0usize;
    for (i, bi) in b.iter().enumerate() {
        let (cols, vals) = a.row(i);
        longest = longest.max(cols.len());
        let bi = bi.as_f64();
        let (mut ax, mut abs) = (0.0f64, bi.abs());
        for (&c, v) in cols.iter().zip(vals) {
            let t = v.as_f64() * sol.x[c as usize].as_f64();
            ax += t;
            abs += t.abs();
        }
        r2 += (bi - ax).powi(2);
        rho2 += abs * abs;
        b2 += bi * bi;
    }
    let (r, b_norm) = (r2.sqrt(), b2.sqrt());
    let eps = match T::PRECISION {
        crate::base::Precision::F32 => f32::EPSILON as f64,
        crate::base::Precision::F64 => f64::EPSILON,
    };
    let limit = SLACK * (rtol * b_norm).max(atol) + SLACK * eps * rho2.sqrt();
    if r.is_finite() && r <= limit {
        return false;
    }
    let report = &mut sol.report;
    let claimed = report.relative_residual;
    report.converged = false;
    report.reason = StopReason::ResidualGap;
    report.relative_residual = if b_norm > 0.0 { r / b_norm } else { r };
    report.reason_detail = format!(
        "the device reported convergence (|r|/|b| = {claimed:.3e}), but the host's f64 check \
         of the x it returned gives |b - Ax|/|b| = {:.3e}: a fault of the device's kernels{}",
        report.relative_residual,
        if longest > 60_000 {
            format!(
                " (A has a row of {longest} entries; software adapters such as llvmpipe end a \
                 loop after 65535 steps: use --device cpu or a hardware GPU)"
            )
        } else {
            String::new()
        }
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::options::{Method, Variant};
    use crate::base::report::SolveReport;
    use crate::base::scalar::Precision;
    use crate::matrix::generators::poisson_2d_fd;

    fn claimed<T: Scalar>(x: Vec<T>, n: usize, precision: Precision) -> Solution<T> {
        let mut report = SolveReport::new(Method::Cg, Variant::Pipelined, precision, n, 5 * n);
        report.converged = true;
        report.reason = StopReason::Converged;
        report.relative_residual = 1e-7;
        Solution { x, report }
    }

    #[test]
    fn a_claim_the_host_residual_contradicts_becomes_a_residual_gap() {
        let a = poisson_2d_fd::<f64>(10);
        let n = a.nrows();
        let b = a.mul_vec(&vec![1.0; n]).unwrap();
        // The exact solution, and one off by 1e-9 relative: consistent with rtol 1e-6.
        for x in [vec![1.0; n], vec![1.0 + 1e-9; n]] {
            let mut sol = claimed(x, n, Precision::F64);
            assert!(!contradicts_convergence(&a, &b, 1e-6, 0.0, &mut sol));
            assert!(sol.report.converged);
        }
        // One entry wrong by 1%: |b - Ax|/|b| ~ 1e-3, far beyond 10 × 1e-6.
        let mut x = vec![1.0; n];
        x[17] = 1.01;
        let mut sol = claimed(x, n, Precision::F64);
        assert!(contradicts_convergence(&a, &b, 1e-6, 0.0, &mut sol));
        assert!(!sol.report.converged);
        assert_eq!(sol.report.reason, StopReason::ResidualGap);
        assert!(
            sol.report.relative_residual > 1e-4,
            "{}",
            sol.report.relative_residual
        );
        assert!(sol.report.reason_detail.contains("host's f64 check"));
        // A NaN is never consistent with convergence.
        let mut x = vec![1.0; n];
        x[3] = f64::NAN;
        assert!(contradicts_convergence(
            &a,
            &b,
            1e-6,
            0.0,
            &mut claimed(x, n, Precision::F64)
        ));
    }

    #[test]
    fn f32_rounding_of_the_residual_is_not_a_contradiction() {
        // x rounded to f32 after an f64 solve: its f64 residual is at f32's rounding level,
        // ~1e-7 relative, which an rtol of 1e-8 cannot ask for but the rounding slack covers.
        let a = poisson_2d_fd::<f32>(16);
        let n = a.nrows();
        let x: Vec<f32> = (0..n).map(|i| 1.0 + (i as f32) * 1e-3).collect();
        let b = a.mul_vec(&x).unwrap();
        let mut sol = claimed(x, n, Precision::F32);
        assert!(!contradicts_convergence(&a, &b, 1e-8, 0.0, &mut sol));
        // Unclaimed convergence is left alone.
        let mut sol = claimed(vec![0.0f32; n], n, Precision::F32);
        sol.report.converged = false;
        assert!(!contradicts_convergence(&a, &b, 1e-6, 0.0, &mut sol));
    }
}
