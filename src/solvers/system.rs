//! What every GPU solve does before and after its iterations, in one place: the input
//! checks and the report's start ([`start_gpu_solve`]), A in its storage format, b, x and the
//! preconditioner on the device ([`GpuSystem`]), the shared scalar buffers
//! ([`solver_buffers`]) and the solution read back ([`finish`]).

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::base::{Solution, SolveOptions, SolveReport, WorkCounts};
use crate::gpu::kernels::SolverBuffers;
use crate::gpu::{Engine, GpuMatrix};
use crate::matrix::Csr;
use crate::precond::SolverPrecond;

/// What every GPU solve establishes before uploading anything.
pub(crate) struct Start {
    pub(crate) counts0: WorkCounts,
    pub(crate) report: SolveReport,
    pub(crate) threshold: f64,
}

/// The checks and bookkeeping every GPU solve starts with: the method matches, the system
/// passes [`validate_system`](crate::solvers::validate_system), the initial guess has the
/// right length and is finite, the device has the precision; then the report is started
/// (device, adapter, check mode, ‖b‖) and the stopping threshold computed.
pub(crate) fn start_gpu_solve<T: Scalar>(
    engine: &Engine,
    method: crate::solvers::Method,
    a: &crate::matrix::Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
) -> Result<Start> {
    if opts.method != method {
        return Err(KrylovError::InvalidOption(format!(
            "{method}::solve called with method {}",
            opts.method
        )));
    }
    crate::solvers::validate_system(a, b, opts)?;
    crate::matrix::check_initial_guess(x0, a.ncols())?;
    engine.context().require(T::PRECISION)?;
    let counts0 = engine.counters().snapshot();
    let mut report = SolveReport::new(method, opts.variant, T::PRECISION, a.nrows(), a.nnz());
    report.device = crate::gpu::DeviceInfo::gpu(&engine.context().summary);
    report.device_reason = "the GPU engine the solver was given".into();
    report.check_mode = Some(opts.check_mode);
    if compensated::<T>(opts) {
        report.reduction = crate::base::Reduction::Compensated;
    }
    report.format = opts.format.to_string();
    report.b_norm = crate::cpu::norm2_f64(b);
    let threshold = opts.threshold(report.b_norm);
    Ok(Start {
        counts0,
        report,
        threshold,
    })
}

/// Converts A to the requested storage format (choosing it for `auto`) and uploads it;
/// records `format`, `format_reason` and `matrix_bytes` in the report.
/// A factored M's apply (ILU(0), IC(0), ILUT) on buffers of its own, for the solvers whose
/// vectors live in one pool buffer (GMRES, CA-GMRES): its triangular solves bind whole
/// buffers, so the solver copies a pool vector into `input` (a GPU copy) and finds M⁻¹ of it
/// in `output` after `step`.
pub(crate) struct FactoredApply {
    pub(crate) input: wgpu::Buffer,
    pub(crate) output: wgpu::Buffer,
    pub(crate) step: crate::precond::ApplyStep,
}

/// [`FactoredApply`] for `precond`, `None` for M = I and for Jacobi (which the solvers' kernels
/// fuse). Its launches bind the solver's status word `state` (they stop with the solve),
/// `partials` and `scalars`, and take n and the workgroup count `groups` from a params
/// uniform of their own.
#[allow(clippy::too_many_arguments)]
pub(crate) fn factored_apply<T: Scalar>(
    engine: &Engine,
    config: crate::gpu::shader::ShaderConfig,
    precond: &SolverPrecond<T>,
    state: &wgpu::Buffer,
    partials: &wgpu::Buffer,
    scalars: &wgpu::Buffer,
    n: usize,
    groups: u32,
) -> Result<Option<FactoredApply>> {
    let bufs = SolverBuffers {
        state: state.clone(),
        partials: partials.clone(),
        scalars: scalars.clone(),
        history: engine.storage_zeroed::<T>("apply history (unused)", 1)?,
        groups,
        history_len: 0,
        compensated: config.compensated,
    };
    let params = engine.uniform_from(
        "apply params",
        &crate::gpu::kernels::Params {
            n: n as u32,
            groups,
            ..Default::default()
        },
    );
    let site = crate::precond::ApplySite {
        engine,
        config,
        bufs: &bufs,
        params: &params,
    };
    let input = engine.storage_zeroed::<T>("M⁻¹ input", n)?;
    let output = engine.storage_zeroed::<T>("M⁻¹ output", n)?;
    Ok(match precond.bind_apply(&site, &input, &output)? {
        Some(step) if !precond.fused_diagonal() => Some(FactoredApply {
            input,
            output,
            step,
        }),
        _ => None,
    })
}

/// The solution of A x = 0 for the solvers that check b before uploading anything (GMRES,
/// CA-GMRES): x = 0 exactly, converged at iteration 0, as the CPU reference reports it.
pub(crate) fn zero_rhs<T: Scalar>(mut report: SolveReport, n: usize) -> Solution<T> {
    report.converged = true;
    report.reason = crate::base::StopReason::Converged;
    report.reason_detail = "converged at iteration 0: b = 0, so x = 0".into();
    report.relative_residual = 0.0;
    report.history = vec![0.0];
    Solution {
        x: vec![T::zero(); n],
        report,
    }
}

pub(crate) fn upload_matrix<T: Scalar>(
    engine: &Engine,
    a: &crate::matrix::Csr<T>,
    opts: &SolveOptions,
    report: &mut SolveReport,
) -> Result<crate::gpu::GpuMatrix<T>> {
    use crate::gpu::GpuMatrix;
    use crate::gpu::format::{RuleTarget, choose_from_stats, format_estimates};
    use crate::solvers::Format;
    if opts.format != Format::Auto {
        let m = GpuMatrix::upload_with(engine, a, opts.format, opts.max_padding)?;
        report.format = m.format().to_string();
        report.format_reason = format!("requested{}", split_note(engine, &m));
        report.matrix_bytes = m.bytes();
        return Ok(m.with_compensated(compensated::<T>(opts)));
    }
    // Statistics only when choosing (block densities cost a pass over A per block size).
    let stats = crate::matrix::MatrixStats::of(a);
    let limit = engine.context().limits.max_storage_buffer_binding_size;
    report.format_estimates = format_estimates(&stats, size_of::<T>(), opts.max_padding, limit);
    let choice = choose_from_stats(&stats, opts.max_padding, RuleTarget::of(engine.context()));
    let mut reason = format!("auto: {}", choice.reason);
    // CSR over the limit is split over several bindings by the upload, not refused here.
    let fits = choice.format == Format::Csr
        || report
            .format_estimates
            .iter()
            .find(|e| e.format == choice.format)
            .is_none_or(|e| e.fits);
    let first = if fits {
        GpuMatrix::upload_with(engine, a, choice.format, opts.max_padding)
    } else {
        Err(KrylovError::FormatRefused {
            format: choice.format.to_string(),
            reason: "its arrays would exceed the adapter's binding limit".into(),
        })
    };
    // A refused choice falls back to CSR, the most compact general format; a refusal of
    // CSR itself is the caller's error.
    let m = match first {
        Ok(m) => m,
        Err(e @ (KrylovError::FormatRefused { .. } | KrylovError::BufferTooLarge { .. }))
            if choice.format != Format::Csr =>
        {
            reason = format!("{reason} — but {e}; CSR instead");
            GpuMatrix::upload_with(engine, a, Format::Csr, opts.max_padding)?
        }
        Err(e) => return Err(e),
    };
    report.format = m.format().to_string();
    report.format_reason = format!("{reason}{}", split_note(engine, &m));
    report.matrix_bytes = m.bytes();
    Ok(m.with_compensated(compensated::<T>(opts)))
}

/// What the report says of a CSR matrix split over several bindings (empty when it is not).
fn split_note<T: Scalar>(engine: &Engine, m: &crate::gpu::GpuMatrix<T>) -> String {
    m.split().map_or(String::new(), |per| {
        let parts = match m.parts() {
            2 => "two".to_string(),
            k => k.to_string(),
        };
        format!(
            "; column indices and values over {parts} storage bindings each ({per} entries \
             each, of {}: the values' {} bytes exceed the {}-byte binding limit)",
            m.nnz,
            m.nnz * size_of::<T>(),
            engine.binding_limit()
        )
    })
}

/// Whether the solver kernels of a solve in `T` reduce with error terms: f32 and
/// `opts.reduction` compensated ([`crate::gpu::GpuMatrix::with_compensated`]).
pub(crate) fn compensated<T: Scalar>(opts: &SolveOptions) -> bool {
    opts.reduction == crate::base::Reduction::Compensated
        && T::PRECISION == crate::base::Precision::F32
}

/// The linear system every GPU solver starts from: the operator A (in its storage format),
/// b, x (the initial guess, or zeros) and the preconditioner M. Solvers add their own work
/// vectors beside it.
pub(crate) struct GpuSystem<T> {
    pub(crate) a: GpuMatrix<T>,
    pub(crate) b: wgpu::Buffer,
    pub(crate) x: wgpu::Buffer,
    pub(crate) m: SolverPrecond<T>,
    pub(crate) n: usize,
}

impl<T: Scalar> GpuSystem<T> {
    /// Uploads A (in the format `opts` asks for, recorded in `report`), b and x, and sets up
    /// the preconditioner of `opts`.
    pub(crate) fn upload(
        engine: &Engine,
        a: &Csr<T>,
        b: &[T],
        x0: Option<&[T]>,
        opts: &SolveOptions,
        report: &mut SolveReport,
    ) -> Result<Self> {
        let gpu_a = super::reuse::upload_matrix(engine, a, opts, report)?;
        let sys = Self::upload_with(engine, a, gpu_a, b, x0, opts)?;
        record_precond(report, &sys.m);
        Ok(sys)
    }

    /// [`Self::upload`] with A already on the device.
    pub(crate) fn upload_with(
        engine: &Engine,
        a: &Csr<T>,
        gpu_a: GpuMatrix<T>,
        b: &[T],
        x0: Option<&[T]>,
        opts: &SolveOptions,
    ) -> Result<Self> {
        let n = a.nrows();
        let x = match x0 {
            Some(x0) => engine.storage_from("x", x0)?,
            None => engine.storage_zeroed::<T>("x", n)?,
        };
        let m = super::reuse::precond(engine, a, opts)?;
        Ok(GpuSystem {
            a: gpu_a,
            b: engine.storage_from("b", b)?,
            x,
            m,
            n,
        })
    }

    /// Whether the fused kernels scale by D⁻¹ (`Params.jacobi`).
    pub(crate) fn jacobi(&self) -> bool {
        self.m.fused_diagonal()
    }

    /// The buffer the fused kernels bind as D⁻¹.
    pub(crate) fn dinv(&self) -> &wgpu::Buffer {
        self.m.dinv()
    }

    /// n zero-initialised work vectors of length n, labelled.
    pub(crate) fn vector(&self, engine: &Engine, label: &str) -> Result<wgpu::Buffer> {
        engine.storage_zeroed::<T>(label, self.n)
    }
}

/// Gives a solver's own `System` struct (its work vectors beside a field `core: GpuSystem<T>`)
/// the shared system's fields and methods: `sys.a`, `sys.x`, `sys.dinv()`, ….
macro_rules! derefs_to_gpu_system {
    ($name:ident) => {
        impl<T> std::ops::Deref for $name<T> {
            type Target = $crate::solvers::system::GpuSystem<T>;
            fn deref(&self) -> &Self::Target {
                &self.core
            }
        }
    };
}
pub(crate) use derefs_to_gpu_system;

/// The shared solver buffers for a solve of `n` unknowns whose fused kernels loop over
/// `passes` row chunks of A ([`Engine::fused_groups`] workgroups), with `slots` partial-sum
/// slots and room for every iteration's residual (+ the initial one; a huge max_iter is capped).
/// [`solver_buffers_for`] also records the workgroups in the report.
pub(crate) fn solver_buffers<T: Scalar>(
    engine: &Engine,
    n: usize,
    passes: u32,
    slots: u32,
    opts: &SolveOptions,
) -> Result<SolverBuffers> {
    let history_len = history_len(opts);
    SolverBuffers::with_reduction::<T>(
        engine,
        engine.fused_groups(n, passes),
        slots,
        history_len,
        compensated::<T>(opts),
    )
}

/// History entries of a solve: the initial residual, one per iteration up to `max_iter`
/// (at most 2²⁴) and one spare.
fn history_len(opts: &SolveOptions) -> usize {
    opts.max_iter.min(1 << 24) + 2
}

/// [`solver_buffers`] of one workgroup (one-workgroup CG: its `cg_init` and the true-residual
/// guard's launches run in one workgroup too, so the partial sums are one per slot).
pub(crate) fn one_workgroup_buffers<T: Scalar>(
    engine: &Engine,
    slots: u32,
    opts: &SolveOptions,
    report: &mut SolveReport,
) -> Result<SolverBuffers> {
    let bufs = SolverBuffers::with_reduction::<T>(
        engine,
        1,
        slots,
        history_len(opts),
        compensated::<T>(opts),
    )?;
    report.workgroups = 1;
    Ok(bufs)
}

/// [`solver_buffers`] for a one-device solve: the report's `workgroups` says what its
/// reducing launches use.
pub(crate) fn solver_buffers_for<T: Scalar>(
    engine: &Engine,
    n: usize,
    passes: u32,
    slots: u32,
    opts: &SolveOptions,
    report: &mut SolveReport,
) -> Result<SolverBuffers> {
    let bufs = solver_buffers::<T>(engine, n, passes, slots, opts)?;
    report.workgroups = bufs.groups;
    Ok(bufs)
}

/// Records what M is and costs in the report, and its shift notice among the notes.
pub(crate) fn record_precond<T: Scalar>(report: &mut SolveReport, m: &SolverPrecond<T>) {
    report.preconditioner = m.info();
    if let Some(notice) = report
        .preconditioner
        .as_ref()
        .and_then(|i| i.shift_notice.clone())
    {
        report.notes.push(notice);
    }
}

/// Reads the solution x back and closes the report's transfer counts.
pub(crate) fn finish<T: Scalar>(
    engine: &Engine,
    x: &wgpu::Buffer,
    n: usize,
    mut report: SolveReport,
    counts0: &WorkCounts,
) -> Result<Solution<T>> {
    let x: Vec<T> = engine.read(x, 0, n)?;
    report.counts = engine.counters().snapshot().since(counts0);
    Ok(Solution { x, report })
}
