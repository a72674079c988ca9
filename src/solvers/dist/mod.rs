//! Solves across several devices in one process (issue #19): A's rows split in contiguous
//! blocks balanced by non-zeros ([`RowPartition`]), one block per device
//! ([`block::DeviceBlock`]), the halo of each block's product exchanged through the host
//! ([`Exchange`]), and every inner product summed over the devices' partial sums on the host.
//!
//! The method is pipelined CG (paper 000, Alg. 2: the recurrence of
//! [`super::cg::PipelinedCg`], so one device and several take the same iterations up to
//! rounding), with Jacobi or no preconditioner. One iteration on each device:
//!
//! ```text
//!  submit 1: dist_update_cg (x, r, p; ⟨r,z⟩, ⟨r,r⟩)  dist_gather (p's entries others read) → read
//!  submit 2: dist_spmv_dot over the interior rows        ← runs while the host moves the halos
//!            host: halo of p from every owner into every reader's [p; p_halo]
//!  submit 3: dist_spmv_dot over the boundary rows                         → read the partials
//!            host: ⟨·,·⟩ summed over workgroups and devices in f64; α, β; convergence
//! ```
//!
//! Two host round trips per iteration with a halo, one without (a single device, or blocks
//! that read nothing of each other). After the loop x comes back to the host and the true
//! residual ‖b − Ax‖ is recomputed there in f64; a convergence it contradicts restarts from x
//! (residual replacement, at most [`MAX_RESTARTS`] times) before the solve reports a
//! residual gap.
//!
//! ```no_run
//! use krylov_wgpu::gpu::{DeviceList, open_devices};
//! use krylov_wgpu::matrix::generators;
//! use krylov_wgpu::solvers::{SolveOptions, dist::solve_dist};
//! let a = generators::poisson_2d_fd::<f32>(64);
//! let b = vec![1.0f32; a.nrows()];
//! let devices = open_devices(&DeviceList::Indices(vec![0, 0]))?; // two devices on adapter 0
//! let sol = solve_dist(&devices, &a, &b, None, &SolveOptions::default())?;
//! assert!(sol.report.converged);
//! assert_eq!(sol.report.devices.as_ref().unwrap().devices.len(), 2);
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

mod block;

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use self::block::{DeviceBlock, SLOT_BOUNDARY, SLOT_INTERIOR, SLOT_UPDATE};
use super::driver::{MAX_RESTARTS, Run};
use crate::base::dist::{DevicePart, DistReport};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::base::{
    DeviceInfo, Method, Monitor, Precond, Solution, SolveReport, StopReason, Variant, WorkCounts,
};
use crate::gpu::{Engine, GpuContext, PendingRead, Tuning};
use crate::matrix::Csr;
use crate::matrix::partition::{Exchange, LocalPart, RowPartition};
use crate::solvers::SolveOptions;

/// Solves A x = b with pipelined CG over `devices` (one row block each), A split by
/// [`RowPartition::balanced`].
pub fn solve_dist<T: Scalar>(
    devices: &[Arc<GpuContext>],
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
) -> Result<Solution<T>> {
    solve_dist_with(devices, a, b, x0, opts, &DistConfig::default(), &mut ())
}

/// How a distributed solve is laid out.
#[derive(Debug, Clone)]
pub struct DistConfig {
    /// The row blocks (as many as devices); `None`: [`RowPartition::balanced`].
    pub partition: Option<RowPartition>,
    /// Every device's engine tuning (`Tuning::max_binding_bytes` forces the two-binding
    /// matrix in tests).
    pub tuning: Tuning,
}

impl Default for DistConfig {
    fn default() -> Self {
        DistConfig {
            partition: None,
            tuning: Tuning::from_env(),
        }
    }
}

/// [`solve_dist`] with an explicit layout and a monitor.
pub fn solve_dist_with<T: Scalar>(
    devices: &[Arc<GpuContext>],
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    config: &DistConfig,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    let partition = config.partition.clone();
    let start = Instant::now();
    check_supported(devices, opts)?;
    crate::solvers::validate_system(a, b, opts)?;
    crate::matrix::check_initial_guess(x0, a.ncols())?;
    let k = devices.len();
    let partition = match partition {
        Some(p) if p.parts() != k || *p.bounds.last().expect("bounds") != a.nrows() => {
            return Err(KrylovError::InvalidOption(format!(
                "a partition of {} parts over {} rows for {k} devices and {} rows",
                p.parts(),
                p.bounds.last().expect("bounds"),
                a.nrows()
            )));
        }
        Some(p) => p,
        None => RowPartition::balanced(a, k)?,
    };
    let dinv = match opts.precond {
        Precond::Jacobi => Some(jacobi_inverse(a)?),
        _ => None,
    };
    let locals: Vec<LocalPart<T>> = (0..k)
        .into_par_iter()
        .map(|p| LocalPart::build(a, &partition, p))
        .collect();
    let exchange = Exchange::plan(&partition, &locals);
    let blocks = locals
        .into_iter()
        .zip(devices)
        .map(|(local, ctx)| {
            let engine = Engine::with_tuning(ctx.clone(), config.tuning);
            let d = dinv.as_ref().map(|d| local.gather(d));
            let send = exchange.send[local.part].clone();
            DeviceBlock::new(engine, local, d, &send)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut report = SolveReport::new(
        Method::Cg,
        Variant::Pipelined,
        T::PRECISION,
        a.nrows(),
        a.nnz(),
    );
    report.device = DeviceInfo::gpu(&devices[0].summary);
    report.device_reason = format!("{k} devices (--devices)");
    report.b_norm = crate::cpu::norm2_f64(b);
    report.format = "csr".into();
    report.format_reason = "row blocks in CSR, one per device".into();
    report.matrix_bytes = blocks
        .iter()
        .map(|blk| {
            (blk.local.nnz() * (4 + std::mem::size_of::<T>()) + 4 * (blk.local.nloc() + 1)) as u64
        })
        .sum();
    report.preconditioner = None;
    if opts.precond == Precond::Jacobi {
        report
            .notes
            .push("Jacobi on each block (D⁻¹ fused into the update)".into());
    }
    let mut solver = DistCg {
        a,
        b,
        blocks,
        exchange,
        dinv,
        threshold: opts.threshold(report.b_norm),
        wait: vec![0.0; k],
        exchange_seconds: 0.0,
    };
    let x = solver.run(x0, opts, monitor, &mut report)?;
    report.seconds = start.elapsed().as_secs_f64();
    report.devices = Some(solver.dist_report(&partition, &report));
    Ok(Solution { x, report })
}

/// What runs on several devices today; anything else is a clear refusal.
fn check_supported(devices: &[Arc<GpuContext>], opts: &SolveOptions) -> Result<()> {
    if devices.is_empty() {
        return Err(KrylovError::InvalidOption(
            "a distributed solve needs at least one device".into(),
        ));
    }
    if opts.method != Method::Cg || opts.variant != Variant::Pipelined {
        return Err(KrylovError::Unsupported(format!(
            "--devices runs pipelined CG only ({} {} on several devices is not built yet)",
            opts.variant, opts.method
        )));
    }
    if !matches!(opts.precond, Precond::None | Precond::Jacobi) {
        return Err(KrylovError::Unsupported(format!(
            "--devices takes --precond none or jacobi ({} on several devices is not built yet)",
            opts.precond
        )));
    }
    Ok(())
}

/// D⁻¹ of A, refusing a zero diagonal entry.
fn jacobi_inverse<T: Scalar>(a: &Csr<T>) -> Result<Vec<T>> {
    a.diagonal()
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            if d == T::zero() {
                Err(KrylovError::ZeroDiagonal { row: i })
            } else {
                Ok(T::one() / d)
            }
        })
        .collect()
}

/// `total += more`, field by field.
fn add_counts(total: &mut WorkCounts, more: &WorkCounts) {
    total.dispatches += more.dispatches;
    total.reductions += more.reductions;
    total.submits += more.submits;
    total.readbacks += more.readbacks;
    total.uploads += more.uploads;
    total.bytes_read_back += more.bytes_read_back;
    total.bytes_uploaded += more.bytes_uploaded;
}

/// The inner products of one iteration, summed over devices.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Sums {
    rz: f64,
    rr: f64,
    pap: f64,
    apdap: f64,
}

/// The distributed pipelined CG solve.
struct DistCg<'a, T> {
    a: &'a Csr<T>,
    b: &'a [T],
    blocks: Vec<DeviceBlock<T>>,
    exchange: Exchange,
    dinv: Option<Vec<T>>,
    threshold: f64,
    /// Host time waiting on each device's reads.
    wait: Vec<f64>,
    exchange_seconds: f64,
}

impl<T: Scalar> DistCg<'_, T> {
    fn has_halo(&self) -> bool {
        !self.exchange.transfers.is_empty()
    }

    /// Sets x, r = b − Ax, p = D⁻¹r (with its halo) on every device from `x` (global, f64
    /// arithmetic on the host) and returns ⟨r,z⟩, ⟨r,r⟩.
    fn start_from(&self, x: &[T]) -> Result<(f64, f64)> {
        let (rp, ci, va) = (self.a.row_ptr(), self.a.col_idx(), self.a.values());
        let r: Vec<f64> = (0..self.a.nrows())
            .into_par_iter()
            .map(|i| {
                let span = rp[i] as usize..rp[i + 1] as usize;
                let ax: f64 = ci[span.clone()]
                    .iter()
                    .zip(&va[span])
                    .map(|(&c, v)| v.as_f64() * x[c as usize].as_f64())
                    .sum();
                self.b[i].as_f64() - ax
            })
            .collect();
        let r_t: Vec<T> = r.iter().map(|&v| T::from_f64(v)).collect();
        let p_t: Vec<T> = match &self.dinv {
            Some(d) => r_t.iter().zip(d).map(|(&ri, &di)| di * ri).collect(),
            None => r_t.clone(),
        };
        let rz: f64 = r_t
            .iter()
            .zip(&p_t)
            .map(|(a, b)| a.as_f64() * b.as_f64())
            .sum();
        let rr: f64 = r_t.iter().map(|v| v.as_f64() * v.as_f64()).sum();
        for blk in &self.blocks {
            let e = &blk.engine;
            e.write(&blk.x, 0, &blk.local.gather(x));
            e.write(&blk.r, 0, &blk.local.gather(&r_t));
            e.write(&blk.p_ext, 0, &blk.local.extended(&p_t));
        }
        Ok((rz, rr))
    }

    /// x gathered from every device into global order.
    fn read_x(&self) -> Result<Vec<T>> {
        let mut x = vec![T::zero(); self.a.nrows()];
        for blk in &self.blocks {
            let xl: Vec<T> = blk.engine.read(&blk.x, 0, blk.local.nloc())?;
            for (&g, v) in blk.local.order.iter().zip(xl) {
                x[g as usize] = v;
            }
        }
        Ok(x)
    }

    /// ‖b − Ax‖ in f64 on the host.
    fn true_residual(&self, x: &[T]) -> f64 {
        let (rp, ci, va) = (self.a.row_ptr(), self.a.col_idx(), self.a.values());
        (0..self.a.nrows())
            .into_par_iter()
            .map(|i| {
                let span = rp[i] as usize..rp[i + 1] as usize;
                let ax: f64 = ci[span.clone()]
                    .iter()
                    .zip(&va[span])
                    .map(|(&c, v)| v.as_f64() * x[c as usize].as_f64())
                    .sum();
                (self.b[i].as_f64() - ax).powi(2)
            })
            .sum::<f64>()
            .sqrt()
    }

    /// One iteration's launches and exchange; `update` with α, β first unless this is the
    /// first product after a (re)start. Returns the sums of the new r and p.
    fn step(&mut self, update: Option<(f64, f64)>) -> Result<Sums> {
        // Submit 1: the update and gather, with the halo values read back.
        let mut reads: Vec<Option<PendingRead<'_, T>>> = Vec::with_capacity(self.blocks.len());
        for blk in &self.blocks {
            let mut batch = blk.engine.begin("dist update");
            if let Some((alpha, beta)) = update {
                blk.engine
                    .write(&blk.coef, 0, &[T::from_f64(alpha), T::from_f64(beta)]);
                blk.record_update(&mut batch);
            }
            if update.is_some() && blk.send_len > 0 {
                reads.push(Some(batch.submit_read(&blk.send, 0, blk.send_len)?));
            } else {
                if update.is_some() {
                    batch.submit()?;
                }
                reads.push(None);
            }
        }
        // Submit 2: the interior rows, overlapping the exchange.
        for blk in &self.blocks {
            let mut batch = blk.engine.begin("dist interior");
            blk.record_interior(&mut batch);
            batch.submit()?;
        }
        // The exchange: every owner's send buffer into its readers' halos.
        let mut sent: Vec<Vec<T>> = Vec::with_capacity(self.blocks.len());
        for (d, read) in reads.into_iter().enumerate() {
            let t = Instant::now();
            sent.push(match read {
                Some(r) => r.wait()?,
                None => Vec::new(),
            });
            self.wait[d] += t.elapsed().as_secs_f64();
        }
        if update.is_some() && self.has_halo() {
            let t = Instant::now();
            for tr in &self.exchange.transfers {
                let to = &self.blocks[tr.to];
                to.engine.write(
                    &to.p_ext,
                    to.local.nloc() + tr.dst,
                    &sent[tr.from][tr.src..tr.src + tr.len],
                );
            }
            self.exchange_seconds += t.elapsed().as_secs_f64();
        }
        // Submit 3: the boundary rows, and every slot's partial sums read back.
        let mut pending = Vec::with_capacity(self.blocks.len());
        for blk in &self.blocks {
            let mut batch = blk.engine.begin("dist boundary");
            blk.record_boundary(&mut batch);
            pending.push(batch.submit_read(&blk.partials, 0, 3 * 4 * blk.groups as usize)?);
        }
        let mut s = Sums::default();
        for (d, (blk, read)) in self.blocks.iter().zip(pending).enumerate() {
            let t = Instant::now();
            let parts = read.wait()?;
            self.wait[d] += t.elapsed().as_secs_f64();
            let u = blk.slot_sum(&parts, SLOT_UPDATE);
            let i = blk.slot_sum(&parts, SLOT_INTERIOR);
            let o = blk.slot_sum(&parts, SLOT_BOUNDARY);
            s.rz += u[0];
            s.rr += u[1];
            s.pap += i[0] + o[0];
            s.apdap += i[1] + o[1];
        }
        Ok(s)
    }

    fn run(
        &mut self,
        x0: Option<&[T]>,
        opts: &SolveOptions,
        monitor: &mut dyn Monitor,
        report: &mut SolveReport,
    ) -> Result<Vec<T>> {
        let n = self.a.nrows();
        let mut x: Vec<T> = x0.map_or_else(|| vec![T::zero(); n], <[T]>::to_vec);
        let b_norm = report.b_norm;
        let rel_target = self.threshold / if b_norm > 0.0 { b_norm } else { 1.0 };
        let counts0 = self.blocks[0].engine.counters().snapshot();
        let mut run = Run::new(monitor);
        let (mut restarts, mut restart_log) = (0, Vec::new());
        let mut loop_seconds = 0.0;
        let mut loop_counts = WorkCounts::default();
        let (reason, true_rel) = loop {
            let (mut rz, mut rr) = self.start_from(&x)?;
            run.push(rr.sqrt());
            // The first product of p belongs to the (re)start, not to an iteration.
            let mut prod =
                if rr.is_finite() && rr.sqrt() > self.threshold && run.iterations() < opts.max_iter
                {
                    Some(self.step(None)?)
                } else {
                    None
                };
            run.monitor.on_loop_start();
            let t = Instant::now();
            let c0 = self.blocks[0].engine.counters().snapshot();
            let end = loop {
                if !rr.is_finite() || !rz.is_finite() {
                    break Some(StopReason::NonFinite {
                        quantity: "residual".into(),
                    });
                }
                if rr.sqrt() <= self.threshold {
                    break None;
                }
                if run.monitor.cancelled() {
                    break Some(StopReason::Cancelled);
                }
                let Some(s) = prod.filter(|_| run.iterations() < opts.max_iter) else {
                    break Some(StopReason::MaxIterations);
                };
                if !s.pap.is_finite() || !s.apdap.is_finite() {
                    break Some(StopReason::NonFinite {
                        quantity: "<p, Ap>".into(),
                    });
                }
                if s.pap <= 0.0 {
                    break Some(StopReason::NotSpd);
                }
                if rz == 0.0 {
                    break Some(StopReason::Breakdown {
                        quantity: "<r, z>".into(),
                    });
                }
                // Paper 000, Alg. 2 (eq. 3): the α and β update_cg computes on one device.
                let alpha = rz / s.pap;
                let beta = alpha * alpha * s.apdap / rz - 1.0;
                let next = self.step(Some((alpha, beta)))?;
                rz = next.rz;
                rr = next.rr;
                run.recorded += 1;
                run.push(rr.sqrt());
                prod = Some(next);
            };
            add_counts(
                &mut loop_counts,
                &self.blocks[0].engine.counters().snapshot().since(&c0),
            );
            loop_seconds += t.elapsed().as_secs_f64();
            x = self.read_x()?;
            let true_rel = self.true_residual(&x) / if b_norm > 0.0 { b_norm } else { 1.0 };
            match end {
                None if true_rel <= rel_target * (1.0 + crate::cpu::TRUE_RESIDUAL_SLACK) => {
                    break (StopReason::Converged, true_rel);
                }
                None if restarts < MAX_RESTARTS && run.iterations() < opts.max_iter => {
                    restarts += 1;
                    restart_log.push(crate::cpu::gap_restart_note(run.iterations(), true_rel));
                    run.history.pop();
                }
                None => break (StopReason::ResidualGap, true_rel),
                Some(reason) => break (reason, true_rel),
            }
        };
        report.loop_seconds = loop_seconds;
        let counts = self.blocks[0].engine.counters().snapshot().since(&counts0);
        run.loop_counts = loop_counts;
        let detail = format!("{reason} at iteration {}", run.iterations());
        let detail = if reason == StopReason::Converged {
            format!(
                "converged at iteration {} on {} devices",
                run.iterations(),
                self.blocks.len()
            )
        } else {
            detail
        };
        run.close(report, reason, detail, true_rel, restarts);
        report.replacements = restarts;
        report.restart_log = restart_log;
        report.counts = counts;
        // GPU time per kernel on device 0 (with KRYLOV_PROFILE=1; empty otherwise).
        report.kernel_times = self.blocks[0].engine.kernel_times();
        Ok(x)
    }

    fn dist_report(&self, partition: &RowPartition, report: &SolveReport) -> DistReport {
        let size = std::mem::size_of::<T>();
        let devices = self
            .blocks
            .iter()
            .enumerate()
            .map(|(d, blk)| DevicePart {
                adapter: blk.engine.context().summary.name.clone(),
                adapter_index: blk.engine.context().summary.index,
                first_row: partition.bounds[d],
                rows: blk.local.nloc(),
                interior_rows: blk.local.interior,
                nnz: blk.local.nnz(),
                halo: blk.local.halo.len(),
                send: blk.send_len,
                split_binding: blk.split,
                wait_seconds: self.wait[d],
            })
            .collect();
        let k = self.blocks.len() as f64;
        DistReport {
            partition: "contiguous row blocks balanced by non-zeros; rows reordered interior first within a block".into(),
            devices,
            exchange_values_per_iteration: self.exchange.values(),
            exchange_bytes_per_iteration: self.exchange.bytes(size),
            exchange_seconds: self.exchange_seconds,
            exchange_share: if report.loop_seconds > 0.0 {
                self.exchange_seconds / report.loop_seconds
            } else {
                0.0
            },
            wait_seconds: self.wait.iter().sum::<f64>() / k,
            syncs_per_iteration_per_device: report.syncs_per_iteration,
        }
    }
}
