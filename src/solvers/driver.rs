//! The loop every GPU solver shares: `paper`/`device` convergence checks, batching, the
//! true-residual guard with restarts, and the report.

use std::time::Instant;

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::cpu::{breakdown_restart_note, gap_restart_note};
use crate::gpu::ds::TrueResidualDs;
use crate::gpu::kernels::{GpuStatus, SolverBuffers};
use crate::gpu::{Batch, Engine, GpuOperator};
use crate::solvers::{CheckMode, Monitor, SolveOptions, SolveReport, StopReason, WorkCounts};

/// Restarts from the current x allowed when the true residual misses the tolerance.
pub const MAX_RESTARTS: usize = crate::cpu::MAX_GAP_RESTARTS;

/// Restarts after a near-breakdown before it is reported by name (see
/// [`crate::cpu::MAX_BREAKDOWN_RESTARTS`]).
pub const MAX_BREAKDOWN_RESTARTS: usize = crate::cpu::MAX_BREAKDOWN_RESTARTS;

/// Relative slack between the threshold and the recomputed true residual (last-digit
/// disagreement only; see `cpu::TRUE_RESIDUAL_SLACK`).
const TRUE_RESIDUAL_SLACK: f64 = crate::cpu::TRUE_RESIDUAL_SLACK;

/// The threshold of the monitored residual of a left-preconditioned solve and the norm it is
/// relative to: τ_L = max(rtol·‖M⁻¹b‖, atol) (tightened by the true-residual guard, see
/// [`crate::cpu::side`]) and ‖M⁻¹b‖.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeftTarget {
    pub(crate) tau: f64,
    pub(crate) scale: f64,
}

impl LeftTarget {
    /// The target for ‖M⁻¹b‖ = `scale`.
    pub(crate) fn new(scale: f64, opts: &SolveOptions) -> Self {
        LeftTarget {
            tau: (opts.rtol * scale).max(opts.atol),
            scale,
        }
    }

    /// What a left solve's stop detail says about its threshold.
    pub(crate) fn detail(&self, detail: &str) -> String {
        format!(
            "{detail} [left-preconditioned: threshold {:.3e} = max(rtol*|M^-1 b|, atol), \
             |M^-1 b| = {:.3e}]",
            self.tau, self.scale
        )
    }
}

/// How a loop segment ended.
#[derive(Debug, Clone, PartialEq)]
#[allow(dead_code)] // Breakdown: used by the BiCGStab/GMRES drivers
pub(crate) enum LoopEnd {
    Converged,
    MaxIterations,
    Cancelled,
    NonFinite,
    NotSpd,
    /// A quantity the recurrence divides by vanished (named).
    Breakdown(String),
    /// The GPU stopped by itself (status word); read it to learn why.
    GpuStopped,
}

/// Host-side bookkeeping of a solve.
pub(crate) struct Run<'m> {
    pub(crate) history: Vec<f64>,
    /// Iterations recorded on the GPU inside loops (including no-ops after convergence).
    pub(crate) recorded: usize,
    pub(crate) loop_counts: WorkCounts,
    pub(crate) batch_size: usize,
    /// Restart cycles run (GMRES counts them; `None` for methods without restart cycles).
    pub(crate) cycles: Option<usize>,
    /// Classical `paper` mode: the ⟨r,z⟩ last sent to the device (β's next denominator).
    pub(crate) last_rz: f64,
    pub(crate) monitor: &'m mut dyn Monitor,
}

impl<'m> Run<'m> {
    /// A run with no iterations yet, reporting to `monitor`.
    pub(crate) fn new(monitor: &'m mut dyn Monitor) -> Self {
        Run {
            history: Vec::new(),
            recorded: 0,
            loop_counts: WorkCounts::default(),
            batch_size: 0,
            cycles: None,
            last_rz: 0.0,
            monitor,
        }
    }

    /// Fills the report's stop and per-iteration fields from this run: iterations, reason
    /// and its detail, the true residual, the history, restarts, and the loop's launches,
    /// transfers, global reductions and host syncs (readbacks) per recorded iteration, and
    /// for restarted methods the cycles and syncs per cycle.
    pub(crate) fn close(
        self,
        report: &mut SolveReport,
        reason: StopReason,
        detail: String,
        true_rel: f64,
        restarts: usize,
    ) {
        report.iterations = self.iterations();
        report.converged = reason == StopReason::Converged;
        report.reason = reason;
        report.reason_detail = detail;
        report.relative_residual = true_rel;
        report.history = self.history;
        report.iterations_recorded = self.recorded;
        report.batch_size = self.batch_size;
        report.restarts = restarts;
        report.loop_counts = self.loop_counts.clone();
        if self.recorded > 0 {
            report.dispatches_per_iteration =
                self.loop_counts.dispatches as f64 / self.recorded as f64;
            report.transfers_per_iteration =
                self.loop_counts.transfers() as f64 / self.recorded as f64;
            report.reductions_per_iteration =
                self.loop_counts.reductions as f64 / self.recorded as f64;
            report.syncs_per_iteration = self.loop_counts.readbacks as f64 / self.recorded as f64;
        }
        report.cycles = self.cycles;
        report.syncs_per_cycle = self
            .cycles
            .filter(|&c| c > 0)
            .map(|c| self.loop_counts.readbacks as f64 / c as f64);
    }
    /// Iterations done so far (the history holds the initial residual plus one per iteration).
    pub(crate) fn iterations(&self) -> usize {
        self.history.len().saturating_sub(1)
    }

    /// Why a host-driven (`paper`) loop stops before its next iteration: a cancel request,
    /// or `max_iter` iterations done.
    pub(crate) fn paper_stop(&self, max_iter: usize) -> Option<LoopEnd> {
        if self.monitor.cancelled() {
            Some(LoopEnd::Cancelled)
        } else if self.iterations() >= max_iter {
            Some(LoopEnd::MaxIterations)
        } else {
            None
        }
    }

    pub(crate) fn push(&mut self, residual: f64) {
        self.history.push(residual);
        self.monitor.on_residual(self.history.len() - 1, residual);
    }
}

pub(crate) fn sum_component<T: Scalar>(
    partials: &[T],
    groups: usize,
    slot: usize,
    comp: usize,
) -> f64 {
    (0..groups)
        .map(|g| partials[4 * (slot * groups + g) + comp].as_f64())
        .sum()
}

/// The next batch size in adaptive `device` mode: the iterations the observed convergence
/// rate predicts are still needed (+10 %), at least 4, at most twice the previous batch and 1024.
/// `in_flight` iterations are already queued and count towards the predicted need.
pub(crate) fn adaptive_batch(
    history: &[f64],
    threshold: f64,
    previous: usize,
    in_flight: usize,
) -> usize {
    let n = history.len();
    let guess = if n >= 2 {
        let span = (n - 1).min(previous.max(1) * 2).max(1);
        let (r0, r1) = (history[n - 1 - span], history[n - 1]);
        let rate = (r1.ln() - r0.ln()) / span as f64;
        if rate < 0.0 && r1 > threshold && threshold > 0.0 {
            (((threshold.ln() - r1.ln()) / rate * 1.1).ceil() as usize + 1)
                .saturating_sub(in_flight)
        } else {
            2 * previous
        }
    } else {
        previous
    };
    guess.clamp(4, (2 * previous).clamp(4, 1024))
}

/// Batches in flight at once in `device` mode: while the host waits for one batch's
/// residuals, the next is already queued, so neither the readback latency nor the recording
/// of the next batch leaves the GPU idle. (Iterations queued past convergence are no-ops.)
pub const BATCHES_IN_FLIGHT: usize = 2;

/// Runs `device`-mode batches: records `k` iterations per submit and reads their squared
/// residuals back once per batch, with [`BATCHES_IN_FLIGHT`] batches queued.
fn device_batches<T: Scalar>(
    engine: &Engine,
    bufs: &SolverBuffers,
    opts: &SolveOptions,
    threshold: f64,
    tol2: T,
    run: &mut Run<'_>,
    solver: &dyn GpuIterative<T>,
) -> Result<LoopEnd> {
    let mut k = if opts.batch > 0 { opts.batch } else { 8 };
    let per_launch = solver.iterations_per_launch().max(1);
    let mut pending = std::collections::VecDeque::new();
    // History index of the next iteration to record, and iterations recorded so far.
    let mut next = run.history.len();
    let mut submitted = run.iterations();
    loop {
        while pending.len() < BATCHES_IN_FLIGHT && !run.monitor.cancelled() {
            if opts.batch == 0 && run.iterations() > 0 {
                k = adaptive_batch(&run.history, threshold, k, submitted - run.iterations());
                if let Some(cap) = solver.batch_cap(&run.history) {
                    k = k.min(cap.max(1));
                }
            }
            // Whole launches: a launch of several iterations past the limit stops at it.
            let k_now = k
                .next_multiple_of(per_launch)
                .min(opts.max_iter.saturating_sub(submitted))
                .min(bufs.history_len - 1 - next);
            if k_now == 0 {
                break;
            }
            let mut batch = engine.begin("solver batch");
            solver.before_batch(&mut batch, &run.history);
            if per_launch > 1 {
                for _ in 0..k_now.div_ceil(per_launch) {
                    solver.record_iteration(&mut batch);
                }
            }
            for i in (0..k_now).filter(|_| per_launch == 1) {
                if submitted + i + 1 == opts.max_iter {
                    solver.record_last_iteration(&mut batch);
                } else {
                    solver.record_iteration(&mut batch);
                }
            }
            pending.push_back(batch.submit_read::<T>(&bufs.history, next, k_now)?);
            next += k_now;
            submitted += k_now;
            run.recorded += k_now;
            run.batch_size = k_now;
        }
        let Some(read) = pending.pop_front() else {
            return Ok(if run.monitor.cancelled() {
                LoopEnd::Cancelled
            } else {
                LoopEnd::MaxIterations
            });
        };
        for v in read.wait()? {
            if v.is_nan() {
                return Ok(LoopEnd::NonFinite);
            }
            if v < T::zero() {
                return Ok(LoopEnd::GpuStopped);
            }
            run.push(v.as_f64().sqrt());
            if !v.is_finite() {
                return Ok(LoopEnd::NonFinite);
            }
            if v <= tol2 {
                return Ok(LoopEnd::Converged);
            }
        }
    }
}

/// Runs `f` and adds what the engine counted meanwhile (launches, submits, transfers) to the
/// run's loop counts.
pub(crate) fn counted<'m, V>(
    engine: &Engine,
    run: &mut Run<'m>,
    f: impl FnOnce(&mut Run<'m>) -> V,
) -> V {
    let before = engine.counters().snapshot();
    let v = f(run);
    run.loop_counts = add(
        &run.loop_counts,
        &engine.counters().snapshot().since(&before),
    );
    v
}

pub(crate) fn add(a: &WorkCounts, b: &WorkCounts) -> WorkCounts {
    WorkCounts {
        dispatches: a.dispatches + b.dispatches,
        reductions: a.reductions + b.reductions,
        submits: a.submits + b.submits,
        readbacks: a.readbacks + b.readbacks,
        uploads: a.uploads + b.uploads,
        bytes_read_back: a.bytes_read_back + b.bytes_read_back,
        bytes_uploaded: a.bytes_uploaded + b.bytes_uploaded,
    }
}

/// What a `paper`-mode loop runs with: the engine, the options (iteration limit) and the
/// absolute residual threshold the host checks every iteration against.
#[derive(Clone, Copy)]
pub(crate) struct PaperLoop<'a> {
    pub(crate) engine: &'a Engine,
    pub(crate) opts: &'a SolveOptions,
    pub(crate) threshold: f64,
}

/// The iterations a GPU solver supplies to [`drive`]: its fused steps, recorded.
pub(crate) trait GpuIterative<T: Scalar> {
    /// Records r = b − Ax (from the current x) and whatever the first iteration needs, then
    /// ends the batch: in `device` mode reading the new history entry, in `paper` mode
    /// finishing on the host. Returns ‖r‖², or `None` if the GPU stopped.
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>>;
    /// Records one iteration (device mode), or one launch of
    /// [`iterations_per_launch`](Self::iterations_per_launch) iterations.
    fn record_iteration(&self, batch: &mut Batch<'_>);
    /// Iterations one [`record_iteration`](Self::record_iteration) launch runs: 1 by default;
    /// one-workgroup CG runs many, stopping by itself at the iteration limit and on any
    /// status, and `device` batches are rounded up to whole launches.
    fn iterations_per_launch(&self) -> usize {
        1
    }
    /// Records the iteration that reaches the iteration limit (device mode): the same as
    /// [`record_iteration`](Self::record_iteration) except for a solver whose launch tests
    /// one iterate and makes the next (fused CG), which then only tests.
    fn record_last_iteration(&self, batch: &mut Batch<'_>) {
        self.record_iteration(batch);
    }
    /// Records what goes before a batch's iterations (device mode), given the residual
    /// norms read back so far (one batch behind the GPU): nothing by default; mixed CG's
    /// reliable updates replace the residual here.
    fn before_batch(&self, batch: &mut Batch<'_>, history: &[f64]) {
        let _ = (batch, history);
    }
    /// The most iterations the next adaptive batch may hold, given the residual norms so
    /// far: no cap by default; reliable-update CG keeps a batch within part of a decade so
    /// its folds come on time.
    fn batch_cap(&self, history: &[f64]) -> Option<usize> {
        let _ = history;
        None
    }
    /// Runs iterations with host-side convergence checks until a stop.
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd>;
}

/// How [`drive`] judges a stop, shared by a method's variants: the true-residual guard and
/// the meaning of the status word a kernel stopped with.
pub(crate) trait StopCheck {
    /// The true ‖b − Ax‖₂/‖b‖₂ in f64 for the current x.
    fn true_relative(&self, engine: &Engine) -> Result<f64>;
    /// Whether a breakdown is a reason to restart from x with a fresh shadow residual
    /// (r₀* := r; BiCGStab and BiCG) rather than to stop.
    fn restarts_on_breakdown(&self) -> bool {
        false
    }
    /// The reason for a status word the GPU stopped with.
    fn stop_reason(&self, status: GpuStatus) -> LoopEnd {
        match status {
            GpuStatus::NotSpd => LoopEnd::NotSpd,
            GpuStatus::Converged => LoopEnd::Converged,
            _ => LoopEnd::NonFinite,
        }
    }
}

/// The true-residual guard of the Krylov solvers, on the GPU without a download of x: for f64
/// solves the method's init launches recompute r = b − Ax (overwriting r and what a restart
/// recomputes anyway) and leave the partial sums of ‖r‖² in component `comp` of partial slot
/// 0; for f32 solves `true_residual_ds` ([`TrueResidualDs`]) computes ‖b − Ax‖² in
/// double-single from x and b as they are (every product exact: the f32 data's residual to
/// about 2⁻⁴⁵·k·‖|A||x|‖, where an f32 recomputation would be off by 2⁻²⁴·k·‖|A||x|‖) and
/// writes only its own partials. One launch, one submit and one readback of the partial sums
/// either way.
pub(crate) struct TrueResidual<'a, T> {
    pub(crate) b: &'a [T],
    pub(crate) x: &'a wgpu::Buffer,
    pub(crate) bufs: &'a SolverBuffers,
    pub(crate) comp: usize,
    /// A and b on the device (bound by the f32 guard's kernel).
    pub(crate) op: &'a dyn GpuOperator<T>,
    pub(crate) b_gpu: &'a wgpu::Buffer,
    /// The f32 guard's kernel and bindings, made on its first use.
    pub(crate) ds: std::cell::OnceCell<TrueResidualDs>,
}

impl<T: Scalar> TrueResidual<'_, T> {
    /// ‖b − Ax‖₂/‖b‖₂ with `record_init` recording the recomputation of r (f64 solves).
    pub(crate) fn relative(
        &self,
        engine: &Engine,
        record_init: &dyn Fn(&mut Batch<'_>),
    ) -> Result<f64> {
        let b_norm = crate::cpu::norm2_f64(self.b);
        let scale = if b_norm > 0.0 { b_norm } else { 1.0 };
        match T::PRECISION {
            crate::base::Precision::F64 => {
                let g = self.bufs.groups as usize;
                let mut batch = engine.begin("true residual");
                record_init(&mut batch);
                let parts: Vec<T> = batch.submit_and_read(&self.bufs.partials, 0, 4 * g)?;
                Ok(sum_component(&parts, g, 0, self.comp).sqrt() / scale)
            }
            crate::base::Precision::F32 => {
                let ds = match self.ds.get() {
                    Some(ds) => ds,
                    None => {
                        let ds = TrueResidualDs::new(engine, self.op, self.x, self.b_gpu)?;
                        self.ds.get_or_init(|| ds)
                    }
                };
                Ok(ds.norm2::<T>(engine)?.sqrt() / scale)
            }
        }
    }
}

/// Runs a GPU solver to a stop and fills `report` (iterations, reason, true residual,
/// history, counts): setup, then `device` batches or the `paper` loop, then the true-residual
/// guard of `check`, restarting from x when the guard contradicts a convergence. The caller
/// has uploaded the system and compiled the kernels.
#[allow(clippy::too_many_arguments)]
pub(crate) fn drive<T: Scalar>(
    engine: &Engine,
    solver: &dyn GpuIterative<T>,
    check: &dyn StopCheck,
    bufs: &SolverBuffers,
    opts: &SolveOptions,
    threshold: f64,
    mut left: Option<LeftTarget>,
    monitor: &mut dyn Monitor,
    report: &mut SolveReport,
    counts0: &WorkCounts,
) -> Result<()> {
    let start = Instant::now();
    let b_norm = report.b_norm;
    let max_iter = bufs.history_len - 2;
    // The monitored residual's threshold: `threshold` (on ‖b − Ax‖), or τ_L on ‖M⁻¹(b − Ax)‖
    // for a left-preconditioned solve; the true residual is always held to `threshold`.
    let monitored = |left: &Option<LeftTarget>| left.map_or(threshold, |l| l.tau);
    // In `paper` mode the host decides convergence; tol² = 0 keeps the GPU from stopping.
    let tol2 = |t: f64| match opts.check_mode {
        CheckMode::Device => {
            let t = T::from_f64(t * t);
            (t, t.as_f64())
        }
        CheckMode::Paper => (T::zero(), t * t),
    };
    let (mut tol2_gpu, mut thr2) = tol2(monitored(&left));
    let mut guards = 0;
    let opts_loop = SolveOptions {
        max_iter: opts.max_iter.min(max_iter),
        ..opts.clone()
    };
    let mut run = Run::new(monitor);
    let mut restarts = 0;
    let (mut gap_restarts, mut breakdown_restarts) = (0, 0);
    let mut restart_log = Vec::new();
    // The iteration of the last restart: a breakdown restart needs progress since then (a
    // breakdown before any iteration would repeat from the same x).
    let mut restarted_at: Option<usize> = None;
    let rel_target = threshold / if b_norm > 0.0 { b_norm } else { 1.0 };
    bufs.reset(engine, 0, tol2_gpu);
    let times0 = engine.kernel_times();
    let mut loop_seconds = 0.0;
    let mut setup_rr = solver.setup(engine, &mut run, opts.check_mode)?;
    let (reason, true_rel) = loop {
        let end = match setup_rr {
            None => LoopEnd::GpuStopped,
            Some(rr) => {
                run.push(rr.sqrt());
                if !rr.is_finite() {
                    LoopEnd::NonFinite
                } else if rr <= thr2 {
                    LoopEnd::Converged
                } else {
                    run.monitor.on_loop_start();
                    let t = Instant::now();
                    let end = match opts.check_mode {
                        CheckMode::Device => counted(engine, &mut run, |run| {
                            device_batches(
                                engine,
                                bufs,
                                &opts_loop,
                                monitored(&left),
                                tol2_gpu,
                                run,
                                solver,
                            )
                        })?,
                        CheckMode::Paper => solver.paper_loop(
                            &PaperLoop {
                                engine,
                                opts: &opts_loop,
                                threshold: monitored(&left),
                            },
                            &mut run,
                        )?,
                    };
                    loop_seconds += t.elapsed().as_secs_f64();
                    end
                }
            }
        };
        let end = if end == LoopEnd::GpuStopped {
            let st: Vec<u32> = engine.read(&bufs.state, 0, 4)?;
            check.stop_reason(GpuStatus::from(st[0]))
        } else {
            end
        };
        let true_rel = check.true_relative(engine)?;
        match end {
            LoopEnd::Converged if true_rel <= rel_target * (1.0 + TRUE_RESIDUAL_SLACK) => {
                break (StopReason::Converged, true_rel);
            }
            // Left: the monitored ‖M⁻¹r‖ met τ_L but ‖b − Ax‖ missed the threshold: tighten
            // τ_L and resume from x (the CPU reference's rule, `cpu::side::on_side`).
            LoopEnd::Converged
                if left.is_some()
                    && guards < crate::cpu::side::MAX_GUARD_RESTARTS
                    && run.iterations() < opts_loop.max_iter =>
            {
                guards += 1;
                let l = left.as_mut().expect("left");
                let tau = crate::cpu::side::tighten(l.tau, threshold, true_rel * b_norm);
                restart_log.push(crate::cpu::side::guard_restart_note(
                    run.iterations(),
                    true_rel,
                    tau,
                ));
                l.tau = tau;
                (tol2_gpu, thr2) = tol2(tau);
            }
            LoopEnd::Converged
                if gap_restarts < MAX_RESTARTS && run.iterations() < opts_loop.max_iter =>
            {
                // The recurrence drifted from b − Ax: start again from x (setup recomputes r).
                gap_restarts += 1;
                restart_log.push(gap_restart_note(run.iterations(), true_rel));
            }
            LoopEnd::Breakdown(ref quantity)
                if check.restarts_on_breakdown()
                    && breakdown_restarts < MAX_BREAKDOWN_RESTARTS
                    && run.iterations() > restarted_at.unwrap_or(0)
                    && run.iterations() < opts_loop.max_iter =>
            {
                breakdown_restarts += 1;
                restart_log.push(breakdown_restart_note(quantity, run.iterations()));
            }
            LoopEnd::Converged => break (StopReason::ResidualGap, true_rel),
            LoopEnd::MaxIterations => break (StopReason::MaxIterations, true_rel),
            LoopEnd::Cancelled => break (StopReason::Cancelled, true_rel),
            LoopEnd::NotSpd => break (StopReason::NotSpd, true_rel),
            LoopEnd::Breakdown(quantity) => break (StopReason::Breakdown { quantity }, true_rel),
            LoopEnd::NonFinite | LoopEnd::GpuStopped => {
                break (
                    StopReason::NonFinite {
                        quantity: "residual".into(),
                    },
                    true_rel,
                );
            }
        }
        // A restart: from the current x, setup recomputes r (and r₀* := r, p := r).
        restarts += 1;
        let it = run.iterations();
        restarted_at = Some(it);
        run.history.pop();
        bufs.reset(engine, it as u32, tol2_gpu);
        setup_rr = solver.setup(engine, &mut run, opts.check_mode)?;
    };
    report.seconds = start.elapsed().as_secs_f64();
    report.loop_seconds = loop_seconds;
    report.kernel_times = kernel_times_since(&times0, &engine.kernel_times());
    let detail = match &reason {
        StopReason::Converged => format!("converged at iteration {}", run.iterations()),
        other => format!("{other} at iteration {}", run.iterations()),
    };
    let detail = match &left {
        Some(l) => l.detail(&detail),
        None => detail,
    };
    run.close(report, reason, detail, true_rel, restarts);
    report.replacements = gap_restarts;
    report.restart_log = restart_log;
    report.counts = engine.counters().snapshot().since(counts0);
    Ok(())
}

/// Per-kernel GPU time accumulated between two snapshots of `Engine::kernel_times`.
pub(crate) fn kernel_times_since(
    before: &[crate::solvers::KernelTime],
    after: &[crate::solvers::KernelTime],
) -> Vec<crate::solvers::KernelTime> {
    after
        .iter()
        .filter_map(|a| {
            let (calls, seconds) = before
                .iter()
                .find(|b| b.name == a.name)
                .map_or((0, 0.0), |b| (b.calls, b.seconds));
            (a.calls > calls).then(|| crate::solvers::KernelTime {
                name: a.name.clone(),
                calls: a.calls - calls,
                seconds: a.seconds - seconds,
            })
        })
        .collect()
}
