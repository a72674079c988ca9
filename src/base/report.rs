//! What a solve reports: the same structure for the CPU reference and the GPU solvers.

use super::options::{CheckMode, Format, Method, Precond, Reduction, Trisolve, Variant};
use super::scalar::Precision;

/// Why a solve stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum StopReason {
    /// The residual met the tolerance (and the true residual confirmed it).
    Converged,
    /// The iteration limit was reached first.
    MaxIterations,
    /// A quantity the recurrence divides by vanished; `quantity` names it (e.g. `"<r, r0*>"`).
    Breakdown { quantity: String },
    /// A NaN or infinity appeared in `quantity`.
    NonFinite { quantity: String },
    /// CG found ⟨p, Ap⟩ ≤ 0: the matrix is not symmetric positive definite.
    NotSpd,
    /// The residual grew beyond any use (Jacobi iteration on a matrix that is not
    /// diagonally dominant enough, for instance).
    Diverged,
    /// The recurrence residual met the tolerance but the true residual ‖b − Ax‖ did not.
    ResidualGap,
    /// Restarted GMRES made no progress: its restart residual fell by less than 0.01 % over
    /// each of the last two cycles ([`crate::cpu::gmres::STAGNATION_RATIO`]).
    Stagnation,
    /// A cancel flag was raised.
    Cancelled,
}

impl StopReason {
    /// Short machine-readable name (`converged`, `max_iterations`, `breakdown`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            StopReason::Converged => "converged",
            StopReason::MaxIterations => "max_iterations",
            StopReason::Breakdown { .. } => "breakdown",
            StopReason::NonFinite { .. } => "non_finite",
            StopReason::NotSpd => "not_spd",
            StopReason::Diverged => "diverged",
            StopReason::ResidualGap => "residual_gap",
            StopReason::Stagnation => "stagnation",
            StopReason::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Breakdown { quantity } => write!(f, "breakdown ({quantity} = 0)"),
            StopReason::NonFinite { quantity } => write!(f, "non-finite {quantity}"),
            StopReason::NotSpd => f.write_str("not SPD (<p, Ap> <= 0)"),
            StopReason::ResidualGap => {
                f.write_str("residual gap (recurrence converged, true residual did not)")
            }
            StopReason::Stagnation => {
                f.write_str("stagnation (no progress over the last restart cycles)")
            }
            other => f.write_str(other.name()),
        }
    }
}

impl serde::Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Counts of GPU work for a solve (all zero on the CPU).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct WorkCounts {
    pub dispatches: u64,
    /// Global reductions started: launches of a kernel that begins a reduction across the
    /// whole device (its first stage: per-workgroup partial sums of one or more inner
    /// products or norms). The second stage that finishes one (`dot_finish`,
    /// `gmres_finish`, a later kernel or the host) adds nothing. The rule and the per-kernel
    /// numbers: `src/gpu/counters.rs` and `gpu::shader::REDUCTIONS`.
    pub reductions: u64,
    pub submits: u64,
    pub readbacks: u64,
    pub uploads: u64,
    pub bytes_read_back: u64,
    pub bytes_uploaded: u64,
}

/// GPU time spent in one kernel over a solve (from timestamp queries).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KernelTime {
    pub name: String,
    pub calls: u64,
    pub seconds: f64,
}

/// What mixed-precision iterative refinement did (`--precision mixed`; see
/// [`crate::solvers::mixed`]): an outer loop whose residual r = b − Ax and solution update
/// are in `outer_precision`, around inner f32 solves of A d = r/‖r‖.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RefinementReport {
    /// `f64` (a device with SHADER_F64, or the CPU) or `double-single` (pairs of f32 with
    /// error-free transformations, on a device without f64).
    pub outer_precision: String,
    /// The inner solves' precision (f32).
    pub inner_precision: Precision,
    /// The relative tolerance each inner solve was given (relative to its normalised
    /// right-hand side), in order.
    pub inner_rtol: Vec<f64>,
    /// Outer iterations (inner solves) run.
    pub outer_iterations: usize,
    /// Iterations of each inner solve.
    pub inner_iterations: Vec<usize>,
    /// How each inner solve stopped.
    pub inner_reasons: Vec<String>,
    /// The true relative residual ‖b − Ax‖/‖b‖ in the outer precision before the first and
    /// after every inner solve.
    pub outer_residuals: Vec<f64>,
    /// Wall-clock seconds the inner solves spent outside their own `seconds` (input checks,
    /// uploads, pipeline creation, reading d back), left out of the report's `seconds` as a
    /// single solve leaves them out of its own.
    pub inner_setup_seconds: f64,
    /// Each inner solve's own `seconds` and, of those, its iteration loop's (`loop_seconds`):
    /// with the report's `seconds` they split refinement's time into inner loops, what each
    /// inner solve does around its loop (initial residual, true-residual guard, reading x
    /// back), and the outer steps (the rest).
    pub inner_seconds: Vec<f64>,
    pub inner_loop_seconds: Vec<f64>,
    /// `restart` (each outer step an inner solve from scratch) or `reliable` (one f32 CG
    /// whose x is folded into the outer x and whose residual is replaced by the outer one;
    /// `outer_iterations` counts those replacements, the last one the final check).
    pub strategy: String,
}

/// The outcome of one solve. Serialises to the CLI's `--json` object.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SolveReport {
    pub method: Method,
    pub variant: Variant,
    pub precision: Precision,
    /// Storage format the SpMV ran on.
    pub format: String,
    /// Why that format: `requested`, or `auto: ` and the statistics that decided it.
    pub format_reason: String,
    /// Bytes of the matrix in that format on the GPU (0 on the CPU).
    pub matrix_bytes: u64,
    /// What every format would cost for this matrix (GPU solves with `auto`: what it weighed;
    /// empty when the format was given).
    pub format_estimates: Vec<FormatEstimate>,
    /// What ran the solve: `{"kind": "gpu"|"cpu", "name", "backend", "software"}`.
    pub device: DeviceInfo,
    /// Why that device (from `gpu::DeviceChoice`, or how the solver was called).
    pub device_reason: String,
    pub n: usize,
    pub nnz: usize,
    pub iterations: usize,
    pub converged: bool,
    pub reason: StopReason,
    /// Human-readable reason, with the iteration where it happened.
    pub reason_detail: String,
    /// The TRUE relative residual ‖b − Ax‖₂/‖b‖₂, recomputed from x in f64.
    pub relative_residual: f64,
    /// ‖b‖₂.
    pub b_norm: f64,
    /// Kernel dispatches per iteration (0 on the CPU).
    pub dispatches_per_iteration: f64,
    /// Host↔device transfers per iteration (0 on the CPU).
    pub transfers_per_iteration: f64,
    /// Global reductions per iteration: `loop_counts.reductions / iterations_recorded` on
    /// the GPU (each launch that starts a reduction across the device counts once, however
    /// many inner products it packs; see [`WorkCounts::reductions`]). The CPU reference of
    /// GMRES reports what the algorithm needs per step
    /// ([`crate::cpu::cagmres::gmres_counts_per_cycle`] over m steps); other CPU solvers 0.
    /// Mixed precision counts as `dispatches_per_iteration` does: the inner solves' loops
    /// weighted by their iterations (`restart`; the outer residuals are in `counts` only), or
    /// the one f32 CG's loop with its folds (`reliable`).
    pub reductions_per_iteration: f64,
    /// Host round trips per iteration: `loop_counts.readbacks / iterations_recorded` (every
    /// readback of this engine is waited for by the host before it goes on; in `device` mode
    /// the next batch is already queued while it waits). 0 on the CPU, except GMRES (its
    /// `syncs_per_cycle` over m steps). Mixed precision: as `reductions_per_iteration`.
    pub syncs_per_iteration: f64,
    /// Restart cycles run (GMRES, classical and pipelined: cycles whose steps were recorded
    /// or run, the one a stagnation test drops included; mixed precision: those of all inner
    /// solves); `null` for methods without restart cycles.
    pub cycles: Option<usize>,
    /// Host round trips per restart cycle: `loop_counts.readbacks / cycles` (GMRES on the
    /// GPU: 1 in `device` mode for cycles that do not converge, the cycle buffer read once;
    /// the CPU reference: [`crate::cpu::cagmres::gmres_counts_per_cycle`]'s syncs); `null`
    /// for methods without restart cycles.
    pub syncs_per_cycle: Option<f64>,
    /// Total GPU work (setup, loop and the final residual check).
    pub counts: WorkCounts,
    /// GPU work of the iteration loop alone (what the per-iteration figures divide).
    pub loop_counts: WorkCounts,
    /// Convergence-check mode of a GPU solve (`null` on the CPU).
    pub check_mode: Option<CheckMode>,
    /// How the GPU kernels summed inner products and norms: `compensated` only for an f32 GPU
    /// solve asked for it (`--reduction`), else `plain` (f64 and the CPU reference).
    pub reduction: Reduction,
    /// Iterations recorded per submit (the last batch size in adaptive `device` mode).
    pub batch_size: usize,
    /// Workgroups of each of the solver's reducing launches (partial sums per inner
    /// product): ⌈n / workgroup size⌉, or one per row chunk of A where a format has more
    /// (BCSR), at most the engine's `max_groups`; 0 on the CPU.
    pub workgroups: u32,
    /// Iterations recorded on the GPU, including no-op ones recorded after convergence
    /// inside the last batch (the denominator of the per-iteration figures).
    pub iterations_recorded: usize,
    /// Restarts from the current x: after the true residual missed the tolerance, after a
    /// near-breakdown (BiCGStab, BiCG: fresh shadow residual r₀* := r), after a GMRES cycle.
    pub restarts: usize,
    /// Why each restart happened (`"breakdown <r, r0*> at iteration 16"`, …), in order.
    pub restart_log: Vec<String>,
    /// Residual replacements (counted in `restarts` too): the recursive residual met the
    /// threshold but the true residual b − Ax did not (the recurrences drifted, as pipelined
    /// ones do by design, or f32 rounding caught up), so r — and the auxiliary vectors of the
    /// method (p, A·p, …; the basis of a GMRES cycle) — were recomputed from x and the
    /// iteration went on, at most `MAX_GAP_RESTARTS` (3) times before `residual_gap`.
    pub replacements: usize,
    /// What the preconditioner is and costs (`null` without one).
    pub preconditioner: Option<PrecondInfo>,
    /// The row reordering applied before the solve (`matrix::reorder`: P·A x = P·b, same x
    /// and residual norms), in words; `null` when the rows were left as they are.
    pub reordering: Option<String>,
    /// The row and column balancing applied before the solve (`--equilibrate`,
    /// `matrix::equilibrate`), in words; `null` when none.
    pub equilibration: Option<String>,
    /// Decisions the solver took that the user should know about (a variant replaced, a
    /// strategy chosen), one sentence each.
    pub notes: Vec<String>,
    /// GPU time per kernel (empty unless timestamps were requested and available).
    pub kernel_times: Vec<KernelTime>,
    /// Wall-clock seconds of the solve (uploads and pipeline creation excluded).
    pub seconds: f64,
    /// Wall-clock seconds inside the iteration loop alone (`loop_seconds /
    /// iterations_recorded` is the time per iteration benchmarks report).
    pub loop_seconds: f64,
    /// The residual norm the method tracks, ‖r_k‖₂ for k = 0..=iterations (absolute, not
    /// relative: divide by `b_norm`). GMRES reports the Walker–Zhou estimate.
    pub history: Vec<f64>,
    /// Bytes of the explicitly stored Aᵀ on the GPU (BiCG; `null` for other methods).
    pub transpose_bytes: Option<u64>,
    /// GMRES: ‖I − VᵀV‖_F (Frobenius norm) of the orthonormalised Krylov vectors of the last
    /// cycle (`null` for other methods and on the CPU).
    pub orthogonality_loss: Option<f64>,
    /// Mixed-precision refinement's outer and inner counts (`null` unless `--precision mixed`).
    pub refinement: Option<RefinementReport>,
    /// CA-GMRES: its parameters, Newton shifts and per-cycle record (basis condition number,
    /// TSQR and fallbacks, reductions and host syncs); `null` for other methods.
    pub cagmres: Option<super::ca::CaReport>,
    /// A solve over several devices (`--devices`): the partition, each device's block, the
    /// halo exchange and its share of the time; `null` on one device.
    pub devices: Option<super::dist::DistReport>,
}

impl SolveReport {
    /// An empty report for a solve about to run.
    pub fn new(
        method: Method,
        variant: Variant,
        precision: Precision,
        n: usize,
        nnz: usize,
    ) -> Self {
        SolveReport {
            method,
            variant,
            precision,
            format: "csr".into(),
            format_reason: "requested".into(),
            matrix_bytes: 0,
            format_estimates: Vec::new(),
            device: DeviceInfo::cpu(),
            device_reason: "the CPU reference was called directly".into(),
            n,
            nnz,
            iterations: 0,
            converged: false,
            reason: StopReason::MaxIterations,
            reason_detail: String::new(),
            relative_residual: f64::NAN,
            b_norm: 0.0,
            dispatches_per_iteration: 0.0,
            transfers_per_iteration: 0.0,
            reductions_per_iteration: 0.0,
            syncs_per_iteration: 0.0,
            cycles: None,
            syncs_per_cycle: None,
            counts: WorkCounts::default(),
            loop_counts: WorkCounts::default(),
            check_mode: None,
            reduction: Reduction::Plain,
            batch_size: 0,
            workgroups: 0,
            iterations_recorded: 0,
            restarts: 0,
            replacements: 0,
            restart_log: Vec::new(),
            preconditioner: None,
            reordering: None,
            equilibration: None,
            notes: Vec::new(),
            kernel_times: Vec::new(),
            seconds: 0.0,
            loop_seconds: 0.0,
            history: Vec::new(),
            transpose_bytes: None,
            orthogonality_loss: None,
            refinement: None,
            cagmres: None,
            devices: None,
        }
    }

    /// The report as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("report serialises")
    }
}

/// What a preconditioner is and what one apply z = M⁻¹r costs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PrecondInfo {
    pub kind: Precond,
    /// ILU(0)/IC(0): the α of the factored A + α·diag(row maxima) (0: A itself).
    pub shift: f64,
    /// Factorisations tried (1 when A itself factored; 0 without a factorisation).
    pub factor_attempts: usize,
    /// The shift notice, naming the pivot that broke down (`null` when none did).
    pub shift_notice: Option<String>,
    /// Stored entries of the factors (L and U together).
    pub factor_nnz: usize,
    /// How the triangular solves run (`levels` or `sweeps:K`; `auto` resolved).
    pub trisolve: Option<Trisolve>,
    /// Level counts of the L and U solves.
    pub levels: Option<[usize; 2]>,
    /// Kernel launches of one apply on the GPU (both triangular solves).
    pub dispatches_per_apply: usize,
    /// Host seconds of the set-up (factorisation, levels).
    pub setup_seconds: f64,
}

/// A solution vector with its report.
#[derive(Debug, Clone)]
pub struct Solution<T> {
    pub x: Vec<T>,
    pub report: SolveReport,
}

/// What one format would cost for a matrix (the report's `format_estimates`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FormatEstimate {
    pub format: Format,
    /// Estimated bytes of the format's arrays (exact for CSR, ELL and DIA; BCSR without the
    /// per-workgroup padding; SELL from the row-length spread).
    pub bytes: u64,
    /// Values stored (padding included) per non-zero.
    pub fill: f64,
    /// Within the padding budget and the adapter's binding limit.
    pub fits: bool,
}

/// `"gpu"` or `"cpu"`: what ran a solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Gpu,
    Cpu,
}

/// The device that ran a solve, as reports show it:
/// `{"kind": "gpu", "name": "NVIDIA H200", "backend": "Vulkan", "software": false}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeviceInfo {
    pub kind: DeviceKind,
    /// The adapter's name, or `CPU reference` for the CPU solvers.
    pub name: String,
    /// wgpu backend (`Vulkan`, `Metal`, `Dx12`, `Gl`), or `host` for the CPU solvers.
    pub backend: String,
    /// A software rasteriser (lavapipe, llvmpipe, WARP) rather than a GPU.
    pub software: bool,
}

impl DeviceInfo {
    /// The CPU reference solvers.
    pub fn cpu() -> Self {
        DeviceInfo {
            kind: DeviceKind::Cpu,
            name: "CPU reference".into(),
            backend: "host".into(),
            software: false,
        }
    }

    /// Whether a GPU (hardware or software) ran the solve.
    pub fn is_gpu(&self) -> bool {
        self.kind == DeviceKind::Gpu
    }
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            DeviceKind::Cpu => f.write_str("cpu (CPU reference)"),
            DeviceKind::Gpu => write!(
                f,
                "gpu ({}, {}{})",
                self.name,
                self.backend,
                if self.software { ", software" } else { "" }
            ),
        }
    }
}
