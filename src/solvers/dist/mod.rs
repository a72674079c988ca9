//! Solves across several devices in one process (issue #19): A's rows split in contiguous
//! blocks balanced by non-zeros ([`RowPartition`]), one block per device (`block::BlockCore`),
//! the halo of each block's product exchanged through the host ([`Exchange`]), and every inner
//! product summed over the devices' partial sums on the host in f64.
//!
//! Methods: **CG** — pipelined (paper 000, Alg. 2, the recurrence of
//! [`super::cg::PipelinedCg`]) or classical (Alg. 1) —, **BiCGStab** (the classical
//! recurrence of [`crate::cpu::bicgstab`], right-preconditioned) and **GMRES(m)** (the simpler
//! GMRES of [`crate::cpu::gmres`] with classical Gram–Schmidt twice, right-preconditioned), each
//! with Jacobi or no preconditioner.
//! All are written as *phases* ([`Host::phase`]): one phase on every device is
//!
//! ```text
//!  submit 1: the phase's vector update (+ first stage of its inner products),
//!            dist_gather (the updated vector's entries other blocks read)      → read them
//!  submit 2: the product over the interior rows   ← runs while the host moves the halos
//!            host: halo from every owner into every reader's [v; v_halo]
//!  submit 3: the product over the boundary rows                          → read the partials
//!            host: inner products summed over workgroups and devices in f64
//! ```
//!
//! A pipelined CG iteration is one phase (update of x, r, p; product Ap): two host round trips
//! with a halo, one without; a classical one two (x and r; p and Ap): three round trips. A
//! BiCGStab iteration is three (p and Ap; s and As; x and r): five round trips with a halo,
//! three without; a GMRES step two (basis vector and product; first Gram–Schmidt pass):
//! three round trips, and each GMRES cycle one more phase (x and the restart residual). After
//! the loop x comes back to the host and the true residual ‖b − Ax‖ is recomputed there in
//! f64; a convergence it contradicts restarts from x (residual replacement, at most
//! [`MAX_RESTARTS`] times) before the solve reports a residual gap; a BiCGStab breakdown
//! restarts from x with r̂ = r.
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

mod bicgstab;
mod block;
mod cg;
mod comm;
mod gmres;
#[cfg(feature = "mpi")]
pub mod mpi;

pub(crate) use self::comm::Comm;

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use self::block::{BlockCore, Launch, Partials};
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

/// Solves A x = b over `devices` (one row block each), A split by
/// [`RowPartition::balanced`], with the method of `opts` (CG, BiCGStab or GMRES).
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
    let k = devices.len();
    solve_blocks(devices, Comm::Local, k, a, b, x0, opts, config, monitor)
}

/// The distributed solve of `k` blocks, those of `comm.parts(k)` on `devices` (one each).
#[allow(clippy::too_many_arguments)]
fn solve_blocks<T: Scalar>(
    devices: &[Arc<GpuContext>],
    comm: Comm,
    k: usize,
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    config: &DistConfig,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    let start = Instant::now();
    check_supported(devices, opts)?;
    crate::solvers::validate_system(a, b, opts)?;
    crate::matrix::check_initial_guess(x0, a.ncols())?;
    let here = comm.parts(k);
    if here.len() != devices.len() {
        return Err(KrylovError::InvalidOption(format!(
            "{} devices for the {} blocks of this process",
            devices.len(),
            here.len()
        )));
    }
    let partition = match config.partition.clone() {
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
    let orders: Vec<Vec<u32>> = locals.iter().map(|l| l.order.clone()).collect();
    let summaries: Vec<[usize; 4]> = locals
        .iter()
        .map(|l| [l.nloc(), l.interior, l.nnz(), l.halo.len()])
        .collect();
    // Only this process's blocks go to devices.
    let locals: Vec<LocalPart<T>> = locals
        .into_iter()
        .filter(|l| here.contains(&l.part))
        .collect();
    let engines: Vec<Engine> = devices
        .iter()
        .map(|ctx| Engine::with_tuning(ctx.clone(), config.tuning))
        .collect();
    let variant = match opts.method {
        Method::Cg => opts.variant,
        _ => Variant::Classical,
    };
    let mut report = SolveReport::new(opts.method, variant, T::PRECISION, a.nrows(), a.nnz());
    report.device = DeviceInfo::gpu(&devices[0].summary);
    report.device_reason = if comm.is_mpi() {
        format!("{k} MPI ranks, one device each (--mpi)")
    } else {
        format!("{k} devices (--devices)")
    };
    report.b_norm = crate::cpu::norm2_f64(b);
    report.format = "csr".into();
    report.format_reason = "row blocks in CSR, one per device".into();
    report.matrix_bytes = locals
        .iter()
        .map(|l| (l.nnz() * (4 + std::mem::size_of::<T>()) + 4 * (l.nloc() + 1)) as u64)
        .sum();
    if opts.precond == Precond::Jacobi {
        report
            .notes
            .push("Jacobi on each block (D⁻¹ fused into the kernels)".into());
    }
    if opts.method == Method::Bicgstab && opts.variant == Variant::Pipelined {
        report.notes.push(
            "BiCGStab on several devices runs the classical recurrence (three phases per iteration)"
                .into(),
        );
    }
    if opts.method == Method::Gmres {
        report.notes.push(format!(
            "GMRES({}) on several devices: simpler GMRES with classical Gram–Schmidt twice, the first pass fused into the product (two phases per step){}",
            opts.restart.min(a.nrows()).max(1),
            if opts.variant == Variant::Pipelined || opts.gs != crate::base::GramSchmidt::Cgs2 {
                format!(" — the requested {} {} is not what runs", opts.variant, opts.gs)
            } else {
                String::new()
            }
        ));
    }
    let host = Host {
        a,
        b,
        exchange,
        threshold: opts.threshold(report.b_norm),
        wait: vec![0.0; here.len()],
        exchange_seconds: 0.0,
        products: 1,
        rows: partition.bounds[here.start]..partition.bounds[here.end],
        here,
        orders,
        summaries,
        comm,
    };
    let setup = Setup {
        engines,
        locals,
        dinv,
        x0,
        opts,
    };
    let (x, host, cores) = match opts.method {
        Method::Cg => cg::solve(host, setup, monitor, &mut report)?,
        Method::Gmres => gmres::solve(host, setup, monitor, &mut report)?,
        _ => bicgstab::solve(host, setup, monitor, &mut report)?,
    };
    report.seconds = start.elapsed().as_secs_f64();
    crate::cpu::explain_f32_gap(&mut report);
    let cores: Vec<&BlockCore<T>> = cores.iter().collect();
    report.devices = Some(host.dist_report(&cores, &partition, &report));
    Ok(Solution { x, report })
}

/// What runs on several devices today; anything else is a clear refusal.
fn check_supported(devices: &[Arc<GpuContext>], opts: &SolveOptions) -> Result<()> {
    if devices.is_empty() {
        return Err(KrylovError::InvalidOption(
            "a distributed solve needs at least one device".into(),
        ));
    }
    match (opts.method, opts.variant) {
        (Method::Cg | Method::Bicgstab | Method::Gmres, _) => {}
        (method, variant) => {
            return Err(KrylovError::Unsupported(format!(
                "--devices runs CG, BiCGStab and GMRES ({variant} {method} on several devices is not built yet)"
            )));
        }
    }
    if !matches!(opts.precond, Precond::None | Precond::Jacobi) {
        return Err(KrylovError::Unsupported(format!(
            "--devices takes --precond none or jacobi ({} on several devices is not built yet)",
            opts.precond
        )));
    }
    if matches!(opts.method, Method::Bicgstab | Method::Gmres)
        && opts.side == crate::base::Side::Left
        && opts.precond != Precond::None
    {
        return Err(KrylovError::Unsupported(format!(
            "--devices runs {} preconditioned on the right only",
            opts.method
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

/// Time and device 0's counts over a solve's inner loops.
#[derive(Default)]
struct LoopTotals {
    seconds: f64,
    counts: WorkCounts,
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

/// What a method's `solve` starts from: a device's engine and block of A each, D⁻¹ of A (in
/// global order) for Jacobi, x₀ and the options.
struct Setup<'s, T> {
    engines: Vec<Engine>,
    locals: Vec<LocalPart<T>>,
    dinv: Option<Vec<T>>,
    x0: Option<&'s [T]>,
    opts: &'s SolveOptions,
}

impl<T: Scalar> Setup<'_, T> {
    /// One solver block per device: `make(engine, block, D⁻¹ (global), send list)`.
    fn blocks<B>(
        &mut self,
        exchange: &Exchange,
        make: impl Fn(Engine, LocalPart<T>, Option<&[T]>, &[u32]) -> Result<B>,
    ) -> Result<Vec<B>> {
        let locals = std::mem::take(&mut self.locals);
        let engines = std::mem::take(&mut self.engines);
        locals
            .into_iter()
            .zip(engines)
            .map(|(local, engine)| {
                let send = exchange.send[local.part].clone();
                make(engine, local, self.dinv.as_deref(), &send)
            })
            .collect()
    }

    /// x₀, or zero.
    fn x0(&self, n: usize) -> Vec<T> {
        self.x0.map_or_else(|| vec![T::zero(); n], <[T]>::to_vec)
    }
}

/// What a method's `solve` gives back: x, the host (its timings) and the blocks' cores.
type Solved<'a, T> = (Vec<T>, Host<'a, T>, Vec<BlockCore<T>>);

/// The restarts of a distributed solve and the rule that decides them (the one-device
/// driver's): a convergence the true residual contradicts restarts from x (residual
/// replacement, at most [`MAX_RESTARTS`] times); a breakdown, for methods that allow it,
/// restarts from x with fresh shadow vectors if the solve made progress since the last restart.
#[derive(Default)]
struct Restarts {
    total: usize,
    gaps: usize,
    breakdowns: usize,
    at: Option<usize>,
    log: Vec<String>,
}

impl Restarts {
    /// After an inner loop that ended with `end` (`None`: the recurrence converged) at
    /// iteration `it` with true relative residual `true_rel`: the final stop, or `None` to
    /// restart from x (logged).
    fn decide(
        &mut self,
        end: Option<StopReason>,
        (true_rel, rel_target): (f64, f64),
        (it, max_iter): (usize, usize),
        breakdown_restarts: bool,
    ) -> Option<(StopReason, f64)> {
        match end {
            None if true_rel <= rel_target * (1.0 + crate::cpu::TRUE_RESIDUAL_SLACK) => {
                return Some((StopReason::Converged, true_rel));
            }
            None if self.gaps < MAX_RESTARTS && it < max_iter => {
                self.gaps += 1;
                self.log.push(crate::cpu::gap_restart_note(it, true_rel));
            }
            None => return Some((StopReason::ResidualGap, true_rel)),
            Some(StopReason::Breakdown { quantity })
                if breakdown_restarts
                    && self.breakdowns < crate::cpu::MAX_BREAKDOWN_RESTARTS
                    && it > self.at.unwrap_or(0)
                    && it < max_iter =>
            {
                self.breakdowns += 1;
                self.log
                    .push(crate::cpu::breakdown_restart_note(&quantity, it));
            }
            Some(reason) => return Some((reason, true_rel)),
        }
        self.total += 1;
        self.at = Some(it);
        None
    }
}

/// One phase's launches on one device (see the module's diagram).
#[derive(Default)]
struct PhaseLaunches<'l> {
    /// The vector update(s) of submit 1.
    update: Vec<&'l Option<Launch>>,
    /// The gather of the updated vector's sent entries, and the buffer whose halo the
    /// exchange fills (`None`: no exchange this phase).
    gather: Option<(&'l Option<Launch>, &'l wgpu::Buffer)>,
    interior: Option<&'l Option<Launch>>,
    boundary: Option<&'l Option<Launch>>,
}

/// The host's side of a distributed solve: A and b for the true residual, the exchange
/// plan, and where the time went.
struct Host<'a, T> {
    a: &'a Csr<T>,
    b: &'a [T],
    exchange: Exchange,
    threshold: f64,
    /// Host time waiting on each device's reads.
    wait: Vec<f64>,
    exchange_seconds: f64,
    /// Products (each with a halo exchange) per iteration: 1 for CG, 2 for BiCGStab.
    products: usize,
    /// The parts whose blocks live in this process (`cores[p − here.start]`) and their rows.
    here: std::ops::Range<usize>,
    rows: std::ops::Range<usize>,
    /// Every part's rows in its local order (global row of local row i), and its rows,
    /// interior rows, non-zeros and halo.
    orders: Vec<Vec<u32>>,
    summaries: Vec<[usize; 4]>,
    comm: Comm,
}

impl<T: Scalar> Host<'_, T> {
    /// b − Ax in f64.
    fn residual(&self, x: &[T]) -> Vec<f64> {
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
                self.b[i].as_f64() - ax
            })
            .collect()
    }

    /// ‖b − Ax‖/‖b‖ in f64 (over MPI: every rank adds its rows', then the sum over ranks:
    /// every rank gets the same value, and so takes the same decision).
    fn true_relative(&self, x: &[T], b_norm: f64) -> f64 {
        let r = self.residual(x);
        let mut rr = [if self.comm.is_mpi() {
            r[self.rows.clone()].iter().map(|v| v * v).sum::<f64>()
        } else {
            r.par_iter().map(|v| v * v).sum::<f64>()
        }];
        self.comm.sum(&mut rr);
        rr[0].sqrt() / if b_norm > 0.0 { b_norm } else { 1.0 }
    }

    /// The end of an inner loop started at `started` with device 0's counts at `c0`: its time
    /// and counts added to `totals`, x gathered from `xs`, and its true relative residual.
    fn end_loop(
        &self,
        cores: &[&BlockCore<T>],
        xs: &[&wgpu::Buffer],
        (c0, started): (&WorkCounts, Instant),
        totals: &mut LoopTotals,
        b_norm: f64,
    ) -> Result<(Vec<T>, f64)> {
        let counts = cores[0].engine.counters().snapshot().since(c0);
        add_counts(&mut totals.counts, &counts);
        totals.seconds += started.elapsed().as_secs_f64();
        let x = self.read_x(cores, xs)?;
        let true_rel = self.true_relative(&x, b_norm);
        Ok((x, true_rel))
    }

    /// Adds `v` over the processes (see [`Comm::sum`]).
    fn sum(&self, v: &mut [f64]) {
        self.comm.sum(v);
    }

    /// x gathered from every device's `x` buffer into global order.
    fn read_x(&self, cores: &[&BlockCore<T>], xs: &[&wgpu::Buffer]) -> Result<Vec<T>> {
        let mut mine = Vec::new();
        for (core, buf) in cores.iter().zip(xs) {
            mine.extend(core.engine.read::<T>(buf, 0, core.local.nloc())?);
        }
        // Over MPI every rank gets every block's x (the true residual needs all of it).
        let counts: Vec<usize> = self.orders.iter().map(Vec::len).collect();
        let all = self.comm.gather(mine, &counts);
        let parts = if self.comm.is_mpi() {
            0..self.orders.len()
        } else {
            self.here.clone()
        };
        let mut x = vec![T::zero(); self.a.nrows()];
        let mut at = 0;
        for p in parts {
            for &g in &self.orders[p] {
                x[g as usize] = all[at];
                at += 1;
            }
        }
        Ok(x)
    }

    /// Runs one phase on every device and returns each device's partials.
    fn phase(
        &mut self,
        cores: &[&BlockCore<T>],
        launches: &[PhaseLaunches<'_>],
    ) -> Result<Vec<Partials<T>>> {
        let exchanging =
            launches.iter().any(|l| l.gather.is_some()) && !self.exchange.transfers.is_empty();
        // Submit 1: the updates and the gather, the sent entries read back.
        let mut reads: Vec<Option<PendingRead<'_, T>>> = Vec::with_capacity(cores.len());
        for (core, l) in cores.iter().zip(launches) {
            if l.update.is_empty() && l.gather.is_none() {
                reads.push(None);
                continue;
            }
            let mut batch = core.engine.begin("dist update");
            for u in l.update.iter().copied().flatten() {
                u.record(&mut batch);
            }
            let gather = l.gather.and_then(|(g, _)| g.as_ref());
            if let Some(g) = gather {
                g.record(&mut batch);
            }
            if exchanging && gather.is_some() {
                reads.push(Some(batch.submit_read(&core.send, 0, core.send_len)?));
            } else {
                batch.submit()?;
                reads.push(None);
            }
        }
        // Submit 2: the interior rows, overlapping the exchange.
        for (core, l) in cores.iter().zip(launches) {
            if let Some(Some(i)) = l.interior {
                let mut batch = core.engine.begin("dist interior");
                i.record(&mut batch);
                batch.submit()?;
            }
        }
        // The exchange: every owner's sent entries into its readers' halos.
        let mut sent: Vec<Vec<T>> = Vec::with_capacity(cores.len());
        for (d, read) in reads.into_iter().enumerate() {
            let t = Instant::now();
            sent.push(match read {
                Some(r) => r.wait()?,
                None => Vec::new(),
            });
            self.wait[d] += t.elapsed().as_secs_f64();
        }
        if exchanging {
            let t = Instant::now();
            let first = self.here.start;
            self.comm.exchange(
                &self.exchange,
                self.here.clone(),
                &sent,
                |to, dst, values| {
                    let core = cores[to - first];
                    if let Some((_, ext)) = launches[to - first].gather {
                        core.engine.write(ext, core.local.nloc() + dst, values);
                    }
                },
            );
            self.exchange_seconds += t.elapsed().as_secs_f64();
        }
        // Submit 3: the boundary rows, and every slot's partial sums read back.
        let mut pending = Vec::with_capacity(cores.len());
        for (core, l) in cores.iter().zip(launches) {
            let mut batch = core.engine.begin("dist boundary");
            if let Some(Some(bnd)) = l.boundary {
                match l.interior {
                    Some(Some(_)) => bnd.record_continuing(&mut batch),
                    _ => bnd.record(&mut batch),
                }
            }
            // Only the slots this phase's launches wrote.
            let mut used: Vec<&Option<Launch>> = l.update.clone();
            used.extend(l.interior.iter().chain(l.boundary.iter()).copied());
            let slots = BlockCore::<T>::slot_range(&used);
            let per_slot = 4 * core.groups as usize;
            let read = batch.submit_read(
                &core.partials,
                slots.start as usize * per_slot,
                slots.len() * per_slot,
            )?;
            pending.push((slots.start, read));
        }
        let mut out = Vec::with_capacity(cores.len());
        for (d, (first, read)) in pending.into_iter().enumerate() {
            let t = Instant::now();
            out.push(Partials {
                first,
                data: read.wait()?,
            });
            self.wait[d] += t.elapsed().as_secs_f64();
        }
        Ok(out)
    }

    /// Fills the report's stop fields from the run, device 0's counts and kernel times.
    #[allow(clippy::too_many_arguments)]
    fn close(
        &self,
        core0: &BlockCore<T>,
        mut run: Run<'_>,
        report: &mut SolveReport,
        (reason, true_rel): (StopReason, f64),
        loop_counts: WorkCounts,
        counts0: &WorkCounts,
        restarts: Restarts,
        k: usize,
    ) {
        let counts = core0.engine.counters().snapshot().since(counts0);
        run.loop_counts = loop_counts;
        let detail = if reason == StopReason::Converged {
            format!("converged at iteration {} on {k} devices", run.iterations())
        } else {
            format!("{reason} at iteration {}", run.iterations())
        };
        run.close(report, reason, detail, true_rel, restarts.total);
        report.replacements = restarts.gaps;
        report.restart_log = restarts.log;
        report.counts = counts;
        // GPU time per kernel on device 0 (with KRYLOV_PROFILE=1; empty otherwise).
        report.kernel_times = core0.engine.kernel_times();
    }

    fn dist_report(
        &self,
        cores: &[&BlockCore<T>],
        partition: &RowPartition,
        report: &SolveReport,
    ) -> DistReport {
        let size = std::mem::size_of::<T>();
        // Every part: this process's blocks from their devices, the other ranks' (MPI) from
        // the partition every rank built (their wait and kernel times stay on those ranks).
        let devices = (0..self.orders.len())
            .map(|p| {
                match p
                    .checked_sub(self.here.start)
                    .filter(|_| self.here.contains(&p))
                {
                    Some(d) => {
                        let c = cores[d];
                        DevicePart {
                            adapter: c.engine.context().summary.name.clone(),
                            adapter_index: c.engine.context().summary.index,
                            first_row: partition.bounds[p],
                            rows: c.local.nloc(),
                            interior_rows: c.local.interior,
                            nnz: c.local.nnz(),
                            halo: c.local.halo.len(),
                            send: c.send_len,
                            split_binding: c.split(),
                            wait_seconds: self.wait[d],
                            kernel_times: c.engine.kernel_times(),
                        }
                    }
                    None => {
                        let [rows, interior_rows, nnz, halo] = self.summaries[p];
                        DevicePart {
                            adapter: format!("MPI rank {p}"),
                            adapter_index: p,
                            first_row: partition.bounds[p],
                            rows,
                            interior_rows,
                            nnz,
                            halo,
                            send: self.exchange.send[p].len(),
                            split_binding: false,
                            wait_seconds: 0.0,
                            kernel_times: Vec::new(),
                        }
                    }
                }
            })
            .collect();
        let k = cores.len() as f64;
        DistReport {
            partition: "contiguous row blocks balanced by non-zeros; rows reordered interior first within a block".into(),
            devices,
            exchange_values_per_iteration: self.products * self.exchange.values(),
            exchange_bytes_per_iteration: self.products as u64 * self.exchange.bytes(size),
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
