//! Preconditioned BiCG with its two recurrences on two devices (paper 004 §3.1, "GPU ×2"):
//! the **A-recurrence** (x, r, z = M⁻¹r, p, q = A·p) on device 0 beside A and M⁻¹'s factors,
//! the **Aᵀ-recurrence** (r̃, z̃ = M⁻ᵀr̃, p̃, q̃ = Aᵀ·p̃) on device 1 beside Aᵀ and M⁻ᵀ's
//! factors (Uᵀ, Lᵀ), so each device runs the fast non-transposed product and holds one
//! matrix and one factor pair, as the paper intends.
//!
//! The recurrence is the one of [`crate::cpu::bicg`] and of the one-device classical variant
//! (lines of [`crate::solvers::bicg`]'s module docs), with the same breakdown tests. The two
//! recurrences meet in two inner products per iteration, ⟨p̃, q⟩ (α) and ⟨z, r̃⟩ (ρ, β),
//! each of which pairs a vector of one device with a vector of the other: that is one
//! vector per inner product that must cross, not only scalars (no formulation of BiCG avoids
//! it — both products are the bi-orthogonality conditions that couple the recurrences).
//! Both vectors go from device 1 to device 0, each read back as soon as device 1 has it and
//! while device 0 is still busy with the expensive part of the step:
//!
//! ```text
//!  device 1 (Aᵀ)                          host                  device 0 (A)
//!  p̃ = z̃ + βp̃  → read p̃                                        p = z + βp, q = A·p
//!  q̃ = Aᵀ·p̃                              p̃ → device 0's copy   ⟨p̃,q⟩, ‖p̃‖², ‖q‖² → read
//!                                         α = ρ/⟨p̃,q⟩ → both
//!  r̃ −= αq̃  → read r̃                                           x += αp, r −= αq, ‖r‖²
//!  z̃ = M⁻ᵀr̃                               r̃ → device 0's copy   z = M⁻¹r
//!                                                               ⟨z,r̃⟩, ‖z‖², ‖r̃‖² → read
//!                                         ρ, β = ρ/ρ_old → both
//! ```
//!
//! The products and the two preconditioner applies (the expensive part: the level-scheduled
//! triangular solves) run on the two devices at the same time. Per iteration: 2n values
//! exchanged (2 reads from device 1, 2 writes to device 0), 2 partial-sum reads from
//! device 0, and the scalars written to both; the report's `devices` section says so and
//! times the waits and the exchange. After the loop x comes back and the true residual is
//! recomputed in f64; a convergence it contradicts restarts from x (residual replacement), a
//! near-breakdown restarts from x with r̃ := r, as the one-device solvers do.
//!
//! ```no_run
//! use krylov_wgpu::gpu::{DeviceList, open_devices};
//! use krylov_wgpu::matrix::generators::{ConvectionField, convection_diffusion_3d};
//! use krylov_wgpu::solvers::{Method, Precond, SolveOptions, dist::solve_dist};
//! let a = convection_diffusion_3d::<f32>(12, 1.0, ConvectionField::Circular);
//! let b = vec![1.0f32; a.nrows()];
//! let devices = open_devices(&DeviceList::Indices(vec![0, 0]))?; // two devices on adapter 0
//! let opts = SolveOptions { method: Method::Bicg, precond: Precond::Ilu0, rtol: 1e-5, ..Default::default() };
//! let sol = solve_dist(&devices, &a, &b, None, &opts)?;
//! assert!(sol.report.converged);
//! assert_eq!(sol.report.devices.as_ref().unwrap().exchange_values_per_iteration, 2 * a.nrows());
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

mod recurrence;

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Instant;

use self::recurrence::{Owner, Recurrence, S_PTQ, S_RHO, SLOT_PTQ, SLOT_RHO, SLOTS, split_m};
use super::host::{HostTimes, residual_rows};
use super::{LoopTotals, Restarts, add_counts};
use crate::base::dist::{DevicePart, DistReport};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::base::{
    DeviceInfo, Method, Monitor, Precond, Solution, SolveReport, StopReason, Variant, WorkCounts,
};
use crate::cpu::is_breakdown;
use crate::gpu::{Batch, Engine, GpuContext, GpuMatrix};
use crate::matrix::Csr;
use crate::solvers::SolveOptions;
use crate::solvers::bicg::{BREAKDOWN_PTQ, BREAKDOWN_RHO};
use crate::solvers::driver::{Run, sum_component};
use crate::solvers::system::{compensated, upload_matrix};

/// Both devices and the host's bookkeeping.
struct Pair<'a, T> {
    a: &'a Csr<T>,
    b: &'a [T],
    own: Recurrence<T>,
    owner: Owner,
    shadow: Recurrence<T>,
    /// Host time waiting on device 0's sums and on device 1's vectors.
    wait: [Cell<f64>; 2],
    exchange_seconds: Cell<f64>,
    /// Host time in the loop's steps outside the waits and the exchange: recording and
    /// submitting batches (and adding up four sums).
    submit_seconds: Cell<f64>,
    /// Of `submit_seconds`, the time inside wgpu's `finish` + `Queue::submit`.
    queue_submit_seconds: Cell<f64>,
    /// The timers above summed over the solve loops only (what the report gives, beside
    /// `loop_seconds`).
    in_loops: RefCell<HostTimes>,
}

/// ⟨p̃,q⟩ with ‖p̃‖², ‖q‖²; or ρ = ⟨z,r̃⟩ with ‖z‖², ‖r̃‖², ‖r‖².
type Sums = [f64; 4];

impl<T: Scalar> Pair<'_, T> {
    /// Reads `slots` slots from `first` of device 0's partial sums after `batch`.
    fn read_sums(&self, batch: Batch<'_>, first: u32, slots: u32) -> Result<Sums> {
        let g = self.own.bufs.groups as usize;
        // Submitting counts as submitting (`timed`), the wait as waiting.
        let read = batch.submit_read(
            &self.own.bufs.partials,
            4 * g * first as usize,
            4 * g * slots as usize,
        )?;
        let t = Instant::now();
        let parts: Vec<T> = read.wait()?;
        add(&self.wait[0], t);
        let mut out = [0.0; 4];
        for (s, o) in out.iter_mut().enumerate().take(slots as usize) {
            *o = sum_component(&parts, g, s, 0);
        }
        Ok(out)
    }

    /// Waits for device 1's vector and writes it into device 0's copy `dst`.
    fn carry(&self, read: crate::gpu::PendingRead<'_, T>, dst: &wgpu::Buffer) -> Result<()> {
        let t = Instant::now();
        let v = read.wait()?;
        add(&self.wait[1], t);
        let t = Instant::now();
        self.own.engine.write(dst, 0, &v);
        add(&self.exchange_seconds, t);
        Ok(())
    }

    /// Lines 0–3 from `x`: x, r = b − Ax (in f64 on the host), r̃ = r, z, z̃, p = z, p̃ = z̃,
    /// and ρ₀ = ⟨z, r̃⟩ with its norms and ‖r₀‖².
    fn start_from(&self, x: &[T]) -> Result<Sums> {
        let r: Vec<T> = residual_rows(self.a, self.b, x, 0..self.a.nrows())
            .into_iter()
            .map(T::from_f64)
            .collect();
        let (own, shadow) = (&self.own, &self.shadow);
        own.engine.write(&self.owner.x, 0, x);
        own.engine.write(&own.r, 0, &r);
        own.engine.write(&self.owner.rt, 0, &r);
        shadow.engine.write(&shadow.r, 0, &r);
        let mut batch = shadow.engine.begin("bicg2 setup (A^T)");
        shadow.record_apply(&mut batch);
        shadow.record_first_direction(&mut batch);
        batch.submit()?;
        let mut batch = own.engine.begin("bicg2 setup (A)");
        own.record_apply(&mut batch);
        own.record_first_direction(&mut batch);
        self.owner
            .record_dots(&mut batch, &self.owner.bg_rho, own.bufs.groups);
        self.read_sums(batch, SLOT_RHO, 4)
    }

    /// Lines 5–6a: p (not on the first iteration) and q = A·p on device 0, p̃ and q̃ = Aᵀp̃ on
    /// device 1 with p̃ carried to device 0; then ⟨p̃,q⟩, ‖p̃‖², ‖q‖².
    fn products(&self, first: bool) -> Result<Sums> {
        let shadow = &self.shadow;
        let mut batch = shadow.engine.begin("bicg2 direction (A^T)");
        shadow.record_direction(&mut batch, first);
        let read = batch.submit_read::<T>(&shadow.p, 0, shadow.n())?;
        let mut batch = shadow.engine.begin("bicg2 product (A^T)");
        shadow.record_product(&mut batch);
        batch.submit()?;
        let own = &self.own;
        let mut batch = own.engine.begin("bicg2 product (A)");
        own.record_direction(&mut batch, first);
        own.record_product(&mut batch);
        batch.submit()?;
        self.carry(read, &self.owner.pt)?;
        let own = &self.own;
        let mut batch = own.engine.begin("bicg2 <p~, q>");
        self.owner
            .record_dots(&mut batch, &self.owner.bg_ptq, own.bufs.groups);
        self.read_sums(batch, SLOT_PTQ, 3)
    }

    /// Lines 7–8, 9a, 1, 2a: x, r, z on device 0 and r̃, z̃ on device 1 with r̃ carried to
    /// device 0; then ρ = ⟨z, r̃⟩, ‖z‖², ‖r̃‖², ‖r‖².
    fn updates(&self) -> Result<Sums> {
        let shadow = &self.shadow;
        let mut batch = shadow.engine.begin("bicg2 r~ (A^T)");
        shadow.record_residual(&mut batch);
        let read = batch.submit_read::<T>(&shadow.r, 0, shadow.n())?;
        let mut batch = shadow.engine.begin("bicg2 z~ (A^T)");
        shadow.record_apply(&mut batch);
        batch.submit()?;
        let own = &self.own;
        let mut batch = own.engine.begin("bicg2 x, r, z (A)");
        batch.dispatch(&own.axpy, &self.owner.bg_x, own.bufs.groups);
        own.record_residual(&mut batch);
        own.record_apply(&mut batch);
        batch.submit()?;
        self.carry(read, &self.owner.rt)?;
        let own = &self.own;
        let mut batch = own.engine.begin("bicg2 <z, r~>");
        self.owner
            .record_dots(&mut batch, &self.owner.bg_rho, own.bufs.groups);
        self.read_sums(batch, SLOT_RHO, 4)
    }

    /// The host timers now.
    fn timers(&self) -> HostTimes {
        HostTimes {
            wait: vec![self.wait[0].get(), self.wait[1].get()],
            exchange: self.exchange_seconds.get(),
            submit: self.submit_seconds.get(),
            queue_submit: self.queue_submit_seconds.get(),
        }
    }

    /// Runs a step, adding its host time outside the waits and the exchange to
    /// `submit_seconds` (and the part in wgpu's submit to `queue_submit_seconds`).
    fn timed(&self, step: impl FnOnce(&Self) -> Result<Sums>) -> Result<Sums> {
        let t = Instant::now();
        let queue =
            || self.own.engine.queue_submit_seconds() + self.shadow.engine.queue_submit_seconds();
        let (before, q) = (
            self.wait[0].get() + self.wait[1].get() + self.exchange_seconds.get(),
            queue(),
        );
        let out = step(self);
        let after = self.wait[0].get() + self.wait[1].get() + self.exchange_seconds.get();
        let outside = t.elapsed().as_secs_f64() - (after - before);
        self.submit_seconds
            .set(self.submit_seconds.get() + outside.max(0.0));
        self.queue_submit_seconds
            .set(self.queue_submit_seconds.get() + queue() - q);
        out
    }

    /// The scalars at `at` on both devices.
    fn write_scalars(&self, at: u32, v: &[f64]) {
        self.own.write_scalars(at, v);
        self.shadow.write_scalars(at, v);
    }

    /// Both devices' counts.
    fn counts(&self) -> [WorkCounts; 2] {
        [
            self.own.engine.counters().snapshot(),
            self.shadow.engine.counters().snapshot(),
        ]
    }
}

/// `cell += time since t`.
fn add(cell: &Cell<f64>, t: Instant) {
    cell.set(cell.get() + t.elapsed().as_secs_f64());
}

/// Line 2's test: ρ non-finite, or numerically zero relative to ‖z‖‖r̃‖.
fn rho_stop<T: Scalar>([rho, zz, rtrt, _]: Sums) -> Option<StopReason> {
    if !rho.is_finite() {
        Some(StopReason::NonFinite {
            quantity: BREAKDOWN_RHO.into(),
        })
    } else if is_breakdown::<T>(rho, zz.sqrt() * rtrt.sqrt()) {
        Some(StopReason::Breakdown {
            quantity: BREAKDOWN_RHO.into(),
        })
    } else {
        None
    }
}

/// Line 6's tests: ⟨p̃,q⟩ non-finite or numerically zero relative to ‖p̃‖‖q‖, α non-finite.
fn ptq_stop<T: Scalar>([ptq, ptpt, qq, _]: Sums, rho: f64) -> Option<StopReason> {
    let non_finite = |q: &str| Some(StopReason::NonFinite { quantity: q.into() });
    if !ptq.is_finite() {
        non_finite(BREAKDOWN_PTQ)
    } else if is_breakdown::<T>(ptq, ptpt.sqrt() * qq.sqrt()) {
        Some(StopReason::Breakdown {
            quantity: BREAKDOWN_PTQ.into(),
        })
    } else if !(T::from_f64(rho) / T::from_f64(ptq)).is_finite() {
        non_finite("alpha")
    } else {
        None
    }
}

/// BiCG over `devices` (exactly two): see the module docs.
pub(super) fn solve<T: Scalar>(
    devices: &[Arc<GpuContext>],
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    tuning: crate::gpu::Tuning,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    let start = Instant::now();
    if devices.len() != 2 {
        return Err(KrylovError::Unsupported(format!(
            "BiCG on several devices runs its two recurrences on two devices (paper 004): \
             --devices with two entries, not {}",
            devices.len()
        )));
    }
    if opts.side == crate::base::Side::Left && opts.precond != Precond::None {
        return Err(KrylovError::Unsupported(
            "--devices runs BiCG preconditioned as the CPU reference does (--side right)".into(),
        ));
    }
    crate::solvers::validate_system(a, b, opts)?;
    crate::matrix::check_initial_guess(x0, a.ncols())?;
    for d in devices {
        d.require(T::PRECISION)?;
    }
    let n = a.nrows();
    let engines = [
        Engine::with_tuning(devices[0].clone(), tuning),
        Engine::with_tuning(devices[1].clone(), tuning),
    ];
    let mut report = SolveReport::new(Method::Bicg, Variant::Classical, T::PRECISION, n, a.nnz());
    report.device = DeviceInfo::gpu(&devices[0].summary);
    report.device_reason = "2 devices (--devices): the A-recurrence on the first, the A^T-recurrence on the second (paper 004)".into();
    report.b_norm = crate::cpu::norm2_f64(b);
    if compensated::<T>(opts) {
        report.reduction = crate::base::Reduction::Compensated;
    }
    let [m0, m1] = split_m([&engines[0], &engines[1]], a, opts, &mut report)?;
    let [e0, e1] = engines;
    let op = upload_matrix(&e0, a, opts, &mut report)?;
    let format = op.format();
    let opt = GpuMatrix::upload_with(&e1, &a.transpose(), format, opts.max_padding)?
        .with_compensated(compensated::<T>(opts));
    report.transpose_bytes = Some(opt.bytes());
    let own = Recurrence::new(e0, op, &m0, SLOTS, opts)?;
    let shadow = Recurrence::new(e1, opt, &m1, 1, opts)?;
    let owner = Owner::new(&own)?;
    report.notes.insert(
        0,
        format!(
            "BiCG on two devices (paper 004 §3.1): A, M^-1 ({} launches per apply) and x, r, z, p on device 0; A^T, M^-T ({} launches) and r~, z~, p~ on device 1; p~ and r~ cross to device 0 each iteration (2n values) for <p~, Ap> and <z, r~>",
            own.apply_launches(),
            shadow.apply_launches()
        ),
    );
    if opts.variant == Variant::Pipelined {
        report.notes.push(
            "the requested pipelined variant is not what runs: on two devices each recurrence runs the classical BLAS-style steps".into(),
        );
    }
    let pair = Pair {
        a,
        b,
        own,
        owner,
        shadow,
        wait: Default::default(),
        exchange_seconds: Cell::new(0.0),
        submit_seconds: Cell::new(0.0),
        queue_submit_seconds: Cell::new(0.0),
        in_loops: RefCell::new(HostTimes {
            wait: vec![0.0; 2],
            ..Default::default()
        }),
    };
    report.workgroups = pair.own.bufs.groups;
    let b_norm = report.b_norm;
    let threshold = opts.threshold(b_norm);
    let rel_target = threshold / if b_norm > 0.0 { b_norm } else { 1.0 };
    let counts0 = pair.counts();
    let mut run = Run::new(monitor);
    let mut restarts = Restarts::default();
    let mut totals = LoopTotals::default();
    let mut x = x0.map_or_else(|| vec![T::zero(); n], <[T]>::to_vec);
    let (reason, true_rel) = loop {
        let mut sums = pair.start_from(&x)?;
        let mut rho = sums[0];
        pair.write_scalars(S_RHO, &[rho]);
        run.push(sums[3].sqrt());
        run.monitor.on_loop_start();
        let t = Instant::now();
        let mark = pair.timers();
        let c0 = pair.counts();
        let mut first = true;
        let end: Option<StopReason> = loop {
            let rr = sums[3];
            if !rr.is_finite() {
                break Some(StopReason::NonFinite {
                    quantity: "residual".into(),
                });
            }
            if rr.sqrt() <= threshold {
                break None;
            }
            if let Some(stop) = rho_stop::<T>(sums) {
                break Some(stop);
            }
            if run.monitor.cancelled() {
                break Some(StopReason::Cancelled);
            }
            if run.iterations() >= opts.max_iter {
                break Some(StopReason::MaxIterations);
            }
            let ptq = pair.timed(|p| p.products(first))?;
            first = false;
            run.recorded += 1;
            if let Some(stop) = ptq_stop::<T>(ptq, rho) {
                break Some(stop);
            }
            pair.write_scalars(S_PTQ, &[ptq[0]]);
            sums = pair.timed(Pair::updates)?;
            run.push(sums[3].sqrt());
            // β = ρ/ρ_old for the next directions.
            pair.write_scalars(S_RHO, &[sums[0], rho]);
            rho = sums[0];
        };
        let [d0, d1] = pair.counts();
        add_counts(&mut totals.counts, &d0.since(&c0[0]));
        add_counts(&mut totals.counts, &d1.since(&c0[1]));
        totals.seconds += t.elapsed().as_secs_f64();
        pair.in_loops.borrow_mut().add_span(&pair.timers(), &mark);
        x = pair.own.engine.read::<T>(&pair.owner.x, 0, n)?;
        let true_rel = crate::cpu::true_relative_residual(a, b, &x);
        let it = run.iterations();
        if let Some(stop) = restarts.decide(end, (true_rel, rel_target), (it, opts.max_iter), true)
        {
            break stop;
        }
        run.history.pop();
    };
    report.loop_seconds = totals.seconds;
    run.loop_counts = totals.counts;
    let detail = if reason == StopReason::Converged {
        format!("converged at iteration {} on 2 devices", run.iterations())
    } else {
        format!("{reason} at iteration {}", run.iterations())
    };
    run.close(&mut report, reason, detail, true_rel, restarts.total);
    report.replacements = restarts.gaps;
    report.restart_log = restarts.log;
    let [d0, d1] = pair.counts();
    let mut counts = d0.since(&counts0[0]);
    add_counts(&mut counts, &d1.since(&counts0[1]));
    report.counts = counts;
    report.kernel_times = pair.own.engine.kernel_times();
    report.seconds = start.elapsed().as_secs_f64();
    crate::cpu::explain_f32_gap(&mut report);
    report.devices = Some(pair_report(&pair, &report));
    Ok(Solution { x, report })
}

/// The report's `devices` section: both devices hold every row; 2n values cross per
/// iteration.
fn pair_report<T: Scalar>(pair: &Pair<'_, T>, report: &SolveReport) -> DistReport {
    let part = |rec: &Recurrence<T>, wait: f64| DevicePart {
        adapter: rec.engine.context().summary.name.clone(),
        adapter_index: rec.engine.context().summary.index,
        first_row: 0,
        rows: rec.n(),
        interior_rows: rec.n(),
        nnz: pair.a.nnz(),
        halo: 0,
        send: 0,
        split_binding: false,
        wait_seconds: wait,
        kernel_times: rec.engine.kernel_times(),
    };
    let values = 2 * pair.a.nrows();
    let t = pair.in_loops.borrow();
    let (wait0, wait1) = (t.wait[0], t.wait[1]);
    let (exchange, submit, queue_submit) = (t.exchange, t.submit, t.queue_submit);
    DistReport {
        partition: "task split (paper 004): the A-recurrence on device 0, the A^T-recurrence on device 1; both hold every row".into(),
        devices: vec![
            part(&pair.own, wait0),
            part(&pair.shadow, wait1),
        ],
        exchange_values_per_iteration: values,
        exchange_bytes_per_iteration: (values * size_of::<T>()) as u64,
        exchange_seconds: exchange,
        exchange_share: if report.loop_seconds > 0.0 {
            exchange / report.loop_seconds
        } else {
            0.0
        },
        wait_seconds: (wait0 + wait1) / 2.0,
        syncs_per_iteration_per_device: report.syncs_per_iteration / 2.0,
        submit_seconds: submit,
        queue_submit_seconds: queue_submit,
    }
}
