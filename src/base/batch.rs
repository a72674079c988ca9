//! What a batched solve reports: one [`ColumnReport`] per right-hand side and a
//! [`BatchReport`] over the whole batch (`solvers::batch::solve_batch`, the CPU twin
//! `cpu::batch_cg`, `krylov batch --json`).

use super::report::{DeviceInfo, StopReason, WorkCounts};
use super::scalar::Precision;

/// The outcome of one right-hand side of one system of a batch.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ColumnReport {
    /// Index of the system in the batch.
    pub system: usize,
    /// Index of the right-hand side within its system.
    pub rhs: usize,
    pub n: usize,
    pub nnz: usize,
    pub iterations: usize,
    pub converged: bool,
    pub reason: StopReason,
    /// The TRUE relative residual ‖b − Ax‖₂/‖b‖₂, recomputed from x in f64.
    pub relative_residual: f64,
    /// ‖b‖₂.
    pub b_norm: f64,
    /// Restarts from x (residual replacements) after the recurrence met the threshold and the
    /// true residual did not.
    pub restarts: usize,
    /// ‖r_k‖₂ the recurrence tracked, k = 0..=iterations (empty when the batch kept no
    /// history: see [`BatchReport::history_kept`]).
    pub history: Vec<f64>,
}

/// The outcome of a batched solve.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BatchReport {
    /// `cg` (the batched kernels run Jacobi-preconditioned or plain CG).
    pub method: String,
    pub precision: Precision,
    /// `none` or `jacobi`.
    pub preconditioner: String,
    pub device: DeviceInfo,
    pub device_reason: String,
    /// The kernels that ran (`batch_cg` for one right-hand side per system, `batch_cg_block`
    /// for blocks of four right-hand sides of one matrix), or `cpu` for the CPU twin.
    pub kernels: Vec<String>,
    /// Threads per workgroup the items ran with (about four rows per thread, from the
    /// default 256 up to the adapter's limit; each item's from its own size).
    pub workgroup_sizes: Vec<u32>,
    pub systems: usize,
    /// Right-hand sides over all systems (one report each in `columns`).
    pub columns_total: usize,
    /// Work items: one workgroup each (a system with one right-hand side, or a block of up
    /// to four right-hand sides of one matrix).
    pub items: usize,
    /// Sequential parts the batch was split into so each fits the adapter's storage binding
    /// limit (1 unless the batch is larger than one binding).
    pub parts: usize,
    pub converged: usize,
    pub all_converged: bool,
    /// Largest iteration count of any column.
    pub max_iterations: usize,
    /// Iterations each work item may run per launch (the launches stop early once every
    /// column has stopped).
    pub iterations_per_launch: usize,
    /// Launches of the batch kernels (all items of a part in each).
    pub launches: u64,
    /// Whether each column's residual history was kept (the buffer of max_iter + 1 norms
    /// per column is capped; see `solvers::batch::HISTORY_BUDGET_BYTES`).
    pub history_kept: bool,
    /// Residual replacements over all columns.
    pub restarts: usize,
    /// GPU work of the whole batch (uploads and the final readback included).
    pub counts: WorkCounts,
    /// Wall-clock seconds from the first host step (packing) to the last report (pipeline
    /// creation excluded): what `systems_per_second` divides.
    pub seconds: f64,
    /// Of `seconds`: packing the systems into the kernels' arrays and uploading them.
    pub setup_seconds: f64,
    /// Of `seconds`: the launches, from the first submit to the last stopped-items read.
    pub loop_seconds: f64,
    /// Of `seconds`: reading x, statuses and histories back and the true-residual guard.
    pub check_seconds: f64,
    /// `systems / seconds`.
    pub systems_per_second: f64,
    pub columns: Vec<ColumnReport>,
}

/// A batched solve's solutions and report: `x[system][rhs]`.
#[derive(Debug, Clone)]
pub struct BatchSolution<T> {
    pub x: Vec<Vec<Vec<T>>>,
    pub report: BatchReport,
}
