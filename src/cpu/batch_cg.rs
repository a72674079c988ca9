//! The CPU twin of the batched CG kernels (`shaders/lib/batch_cg.wgsl`, host side
//! `solvers::batch`): the same recurrence, stopping tests and true-residual guard, one column
//! at a time in `T`. It is the oracle of the GPU batch tests and what `solve_batch_on` runs
//! where no GPU is.

use std::time::Instant;

use crate::base::batch::{BatchReport, BatchSolution, ColumnReport};
use crate::base::error::Result;
use crate::base::options::{Precond, SolveOptions};
use crate::base::report::{DeviceInfo, StopReason, WorkCounts};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;
use crate::matrix::batch::{BatchSystem, validate_batch};

use super::{MAX_GAP_RESTARTS, TRUE_RESIDUAL_SLACK, true_relative_residual};

/// How a column's recurrence stopped (the kernels' `STATUS_*` words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnStop {
    Converged,
    NotSpd,
    NonFinite,
    MaxIterations,
}

impl ColumnStop {
    /// The status word of `shaders/lib/batch_cg.wgsl` (1, 2, 3, 5); `None` for running (0),
    /// an idle lane (6) or anything else.
    pub fn from_status(word: u32) -> Option<Self> {
        match word {
            1 => Some(ColumnStop::Converged),
            2 => Some(ColumnStop::NotSpd),
            3 => Some(ColumnStop::NonFinite),
            5 => Some(ColumnStop::MaxIterations),
            _ => None,
        }
    }

    pub fn reason(self) -> StopReason {
        match self {
            ColumnStop::Converged => StopReason::Converged,
            ColumnStop::NotSpd => StopReason::NotSpd,
            ColumnStop::NonFinite => StopReason::NonFinite {
                quantity: "<p, Ap> or ||r||".into(),
            },
            ColumnStop::MaxIterations => StopReason::MaxIterations,
        }
    }
}

/// D⁻¹ of `a` for Jacobi (`None` without a preconditioner).
pub fn inverse_diagonal<T: Scalar>(a: &Csr<T>, precond: Precond) -> Option<Vec<T>> {
    (precond == Precond::Jacobi).then(|| a.diagonal().iter().map(|d| T::one() / *d).collect())
}

/// The stopping tests of one step, in the kernels' order: non-finite, converged, ρ ≤ 0 (not
/// SPD), the iteration limit.
fn stop_test<T: Scalar>(rho: T, rr: T, tol2: T, its: usize, max_iter: usize) -> Option<ColumnStop> {
    if !(rho.is_finite() && rr.is_finite()) {
        Some(ColumnStop::NonFinite)
    } else if rr <= tol2 {
        Some(ColumnStop::Converged)
    } else if rho.partial_cmp(&T::zero()) != Some(std::cmp::Ordering::Greater) {
        Some(ColumnStop::NotSpd)
    } else if its >= max_iter {
        Some(ColumnStop::MaxIterations)
    } else {
        None
    }
}

/// One column of a batch as the kernels see it: A, b, D⁻¹ (Jacobi) and the stopping test.
#[derive(Debug, Clone, Copy)]
pub struct Column<'a, T> {
    pub a: &'a Csr<T>,
    pub b: &'a [T],
    pub dinv: Option<&'a [T]>,
    /// threshold², rounded to `T` as the kernels hold it.
    pub tol2: T,
    pub max_iter: usize,
}

/// Runs CG on one column from x (`start`: r = b − Ax, p = D⁻¹r) until it stops: the twin of
/// `start` and `iterate` in `shaders/lib/batch_cg.wgsl`. `its` counts on from its value;
/// ‖r‖² of the start and of every iteration are pushed to `history`.
pub fn run_column<T: Scalar>(
    col: Column<'_, T>,
    x: &mut [T],
    its: &mut usize,
    history: &mut Vec<T>,
) -> ColumnStop {
    let Column {
        a,
        b,
        dinv,
        tol2,
        max_iter,
    } = col;
    let n = a.nrows();
    let d = |i: usize| dinv.map_or(T::one(), |d| d[i]);
    let ax = a.mul_vec(x).expect("square system");
    let r: Vec<T> = (0..n).map(|i| b[i] - ax[i]).collect();
    let mut r = r;
    let mut p: Vec<T> = (0..n).map(|i| d(i) * r[i]).collect();
    let mut rho: T = (0..n).map(|i| r[i] * d(i) * r[i]).sum();
    let rr: T = r.iter().map(|v| *v * *v).sum();
    // A restart's start replaces the norm its iteration recorded (as the kernel does).
    history.truncate(*its);
    history.push(rr);
    if let Some(stop) = stop_test(rho, rr, tol2, *its, max_iter) {
        return stop;
    }
    let mut q = vec![T::zero(); n];
    loop {
        a.mul_vec_into(&p, &mut q).expect("square system");
        let pq: T = p.iter().zip(&q).map(|(p, q)| *p * *q).sum();
        if !pq.is_finite() {
            return ColumnStop::NonFinite;
        }
        if pq <= T::zero() {
            return ColumnStop::NotSpd;
        }
        let alpha = rho / pq;
        for i in 0..n {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        let rho_new: T = (0..n).map(|i| r[i] * d(i) * r[i]).sum();
        let rr: T = r.iter().map(|v| *v * *v).sum();
        *its += 1;
        history.push(rr);
        if let Some(stop) = stop_test(rho_new, rr, tol2, *its, max_iter) {
            return stop;
        }
        let beta = rho_new / rho;
        rho = rho_new;
        for i in 0..n {
            p[i] = d(i) * r[i] + beta * p[i];
        }
    }
}

/// What the true-residual guard makes of a column whose recurrence stopped with `stop`:
/// `Ok(reason)` to report, or `Err(())` to restart from x (a residual replacement) — when
/// the recurrence converged, the true residual `true_rel · b_norm` missed the threshold
/// and fewer than [`MAX_GAP_RESTARTS`] restarts were made.
#[allow(clippy::result_unit_err)]
pub fn guard(
    stop: ColumnStop,
    true_rel: f64,
    b_norm: f64,
    threshold: f64,
    restarts: usize,
) -> std::result::Result<StopReason, ()> {
    let true_abs = if b_norm > 0.0 {
        true_rel * b_norm
    } else {
        true_rel
    };
    match stop {
        ColumnStop::Converged if true_abs > threshold * (1.0 + TRUE_RESIDUAL_SLACK) => {
            if restarts < MAX_GAP_RESTARTS {
                Err(())
            } else {
                Ok(StopReason::ResidualGap)
            }
        }
        other => Ok(other.reason()),
    }
}

/// ‖b‖₂ in f64.
pub fn b_norm<T: Scalar>(b: &[T]) -> f64 {
    b.iter().map(|v| v.as_f64().powi(2)).sum::<f64>().sqrt()
}

/// Solves every system of the batch with [`run_column`] on the CPU (checks as
/// [`validate_batch`]).
///
/// ```
/// use krylov_wgpu::cpu::batch_cg;
/// use krylov_wgpu::matrix::{batch::BatchSystem, generators::poisson_2d_fd};
/// use krylov_wgpu::solvers::SolveOptions;
/// let a = poisson_2d_fd::<f64>(8);
/// let b = vec![1.0; 64];
/// let sol = batch_cg::solve_batch(&[BatchSystem::single(&a, &b)], &SolveOptions::default())?;
/// assert!(sol.report.all_converged && sol.report.columns[0].relative_residual <= 1e-6);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn solve_batch<T: Scalar>(
    systems: &[BatchSystem<'_, T>],
    opts: &SolveOptions,
) -> Result<BatchSolution<T>> {
    validate_batch(systems, opts)?;
    let start = Instant::now();
    let mut xs = Vec::with_capacity(systems.len());
    let mut columns = Vec::new();
    for (si, s) in systems.iter().enumerate() {
        let dinv = inverse_diagonal(s.a, opts.precond);
        let mut sx = Vec::with_capacity(s.rhs.len());
        for (j, b) in s.rhs.iter().enumerate() {
            let bn = b_norm(b);
            let threshold = opts.threshold(bn);
            let tol2 = T::from_f64(threshold * threshold);
            let mut x = vec![T::zero(); s.a.ncols()];
            let (mut its, mut restarts) = (0usize, 0usize);
            let mut history = Vec::new();
            let (reason, rel) = loop {
                let col = Column {
                    a: s.a,
                    b,
                    dinv: dinv.as_deref(),
                    tol2,
                    max_iter: opts.max_iter,
                };
                let stop = run_column(col, &mut x, &mut its, &mut history);
                let rel = true_relative_residual(s.a, b, &x);
                match guard(stop, rel, bn, threshold, restarts) {
                    Ok(reason) => break (reason, rel),
                    Err(()) => restarts += 1,
                }
            };
            let end = ColumnEnd {
                iterations: its,
                reason,
                restarts,
                relative_residual: rel,
                history,
            };
            columns.push(column_report(si, j, s.a, b, end));
            sx.push(x);
        }
        xs.push(sx);
    }
    let seconds = start.elapsed().as_secs_f64();
    let report = batch_report(
        T::PRECISION,
        opts,
        DeviceInfo::cpu(),
        vec!["cpu".into()],
        systems.len(),
        BatchShape {
            loop_seconds: seconds,
            ..Default::default()
        },
        columns,
        seconds,
    );
    Ok(BatchSolution { x: xs, report })
}

/// How a column ended: what [`column_report`] turns into a [`ColumnReport`].
#[derive(Debug, Clone)]
pub struct ColumnEnd<T> {
    pub iterations: usize,
    pub reason: StopReason,
    pub restarts: usize,
    /// ‖b − Ax‖₂/‖b‖₂ of the x returned, in f64.
    pub relative_residual: f64,
    /// ‖r‖² per iteration.
    pub history: Vec<T>,
}

/// The report of column `rhs` of system `system`.
pub fn column_report<T: Scalar>(
    system: usize,
    rhs: usize,
    a: &Csr<T>,
    b: &[T],
    end: ColumnEnd<T>,
) -> ColumnReport {
    ColumnReport {
        system,
        rhs,
        n: a.nrows(),
        nnz: a.nnz(),
        iterations: end.iterations,
        converged: end.reason == StopReason::Converged,
        reason: end.reason,
        relative_residual: end.relative_residual,
        b_norm: b_norm(b),
        restarts: end.restarts,
        history: end
            .history
            .iter()
            .map(|v| v.as_f64().max(0.0).sqrt())
            .collect(),
    }
}

/// How the GPU ran a batch (all zero/empty for the CPU twin).
#[derive(Debug, Clone, Default)]
pub struct BatchShape {
    pub items: usize,
    pub parts: usize,
    pub iterations_per_launch: usize,
    pub launches: u64,
    pub history_kept: bool,
    pub workgroup_sizes: Vec<u32>,
    pub counts: WorkCounts,
    pub setup_seconds: f64,
    pub loop_seconds: f64,
    pub check_seconds: f64,
}

/// The batch report from its columns.
#[allow(clippy::too_many_arguments)]
pub fn batch_report(
    precision: crate::base::scalar::Precision,
    opts: &SolveOptions,
    device: DeviceInfo,
    kernels: Vec<String>,
    systems: usize,
    shape: BatchShape,
    columns: Vec<ColumnReport>,
    seconds: f64,
) -> BatchReport {
    let converged = columns.iter().filter(|c| c.converged).count();
    BatchReport {
        method: "cg".into(),
        precision,
        preconditioner: opts.precond.to_string(),
        device_reason: String::new(),
        device,
        kernels,
        workgroup_sizes: shape.workgroup_sizes,
        systems,
        columns_total: columns.len(),
        items: shape.items,
        parts: shape.parts,
        converged,
        all_converged: converged == columns.len(),
        max_iterations: columns.iter().map(|c| c.iterations).max().unwrap_or(0),
        iterations_per_launch: shape.iterations_per_launch,
        launches: shape.launches,
        history_kept: shape.history_kept || shape.items == 0,
        restarts: columns.iter().map(|c| c.restarts).sum(),
        counts: shape.counts,
        seconds,
        setup_seconds: shape.setup_seconds,
        loop_seconds: shape.loop_seconds,
        check_seconds: shape.check_seconds,
        systems_per_second: if seconds > 0.0 {
            systems as f64 / seconds
        } else {
            0.0
        },
        columns,
    }
}
