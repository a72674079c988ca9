//! The host's side of a distributed solve ([`Host`]): one *phase* on every device (the
//! module diagram of `dist/mod.rs`), the halo exchange through [`Comm`], the true residual in
//! f64, the gather of x, and the report's `devices` section.

use std::time::Instant;

use rayon::prelude::*;

use super::block::{BlockCore, Launch, Partials};
use super::{Comm, LoopTotals, Restarts, Run, add_counts};
use crate::base::dist::{DevicePart, DistReport};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{SolveReport, StopReason, WorkCounts};
use crate::gpu::PendingRead;
use crate::matrix::Csr;
use crate::matrix::partition::{Exchange, RowPartition};

/// (b − Ax)_i in f64 for the rows `rows`, in parallel over rows (each row's sum in stored
/// order).
pub(super) fn residual_rows<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x: &[T],
    rows: std::ops::Range<usize>,
) -> Vec<f64> {
    let (rp, ci, va) = (a.row_ptr(), a.col_idx(), a.values());
    rows.into_par_iter()
        .map(|i| {
            let span = rp[i] as usize..rp[i + 1] as usize;
            let ax: f64 = ci[span.clone()]
                .iter()
                .zip(&va[span])
                .map(|(&c, v)| v.as_f64() * x[c as usize].as_f64())
                .sum();
            b[i].as_f64() - ax
        })
        .collect()
}

/// The host's timers of a distributed solve (see [`Host`]; the two-device BiCG keeps the
/// same set).
#[derive(Debug, Clone, Default)]
pub(super) struct HostTimes {
    /// Waiting on each device's reads.
    pub(super) wait: Vec<f64>,
    pub(super) exchange: f64,
    pub(super) submit: f64,
    pub(super) queue_submit: f64,
}

impl HostTimes {
    /// Adds the time between the readings `mark` and `now` of the same timers: how the loop
    /// sums are kept (a loop's timers from its start to its end).
    pub(super) fn add_span(&mut self, now: &HostTimes, mark: &HostTimes) {
        self.wait.resize(now.wait.len(), 0.0);
        for (d, w) in self.wait.iter_mut().enumerate() {
            *w += now.wait[d] - mark.wait.get(d).copied().unwrap_or(0.0);
        }
        self.exchange += now.exchange - mark.exchange;
        self.submit += now.submit - mark.submit;
        self.queue_submit += now.queue_submit - mark.queue_submit;
    }
}

/// Host seconds the devices' engines have spent in wgpu's `finish` + `Queue::submit`.
fn queue_seconds<T>(cores: &[&BlockCore<T>]) -> f64 {
    cores.iter().map(|c| c.engine.queue_submit_seconds()).sum()
}

/// One phase's launches on one device (see the module's diagram).
#[derive(Default)]
pub(super) struct PhaseLaunches<'l> {
    /// The vector update(s) of submit 1.
    pub(super) update: Vec<&'l Option<Launch>>,
    /// The gather of the updated vector's sent entries, and the buffer whose halo the
    /// exchange fills (`None`: no exchange this phase).
    pub(super) gather: Option<(&'l Option<Launch>, &'l wgpu::Buffer)>,
    pub(super) interior: Option<&'l Option<Launch>>,
    pub(super) boundary: Option<&'l Option<Launch>>,
    /// The phase's sums are not needed: submit 3 reads nothing back (the next phase's first
    /// read, behind it on the same queue, is its synchronisation). CA-GMRES's matrix powers
    /// steps: one host round trip each instead of two.
    pub(super) no_sums: bool,
}

/// The host's side of a distributed solve: A and b for the true residual, the exchange
/// plan, and where the time went.
pub(super) struct Host<'a, T> {
    pub(super) a: &'a Csr<T>,
    pub(super) b: &'a [T],
    pub(super) exchange: Exchange,
    pub(super) threshold: f64,
    /// Host time waiting on each device's reads.
    pub(super) wait: Vec<f64>,
    pub(super) exchange_seconds: f64,
    /// Host time recording and submitting batches.
    pub(super) submit_seconds: f64,
    /// Of `submit_seconds`, the time inside wgpu's `finish` + `Queue::submit`.
    pub(super) queue_submit_seconds: f64,
    /// The timers above as the current loop started ([`Host::mark_loop`]), and their sums over
    /// the loops: what the report gives, beside the loops' wall time (a (re)start's first
    /// phase and the set-up, whose first waits include the uploads, are not in it).
    pub(super) loop_mark: HostTimes,
    pub(super) in_loops: HostTimes,
    /// Products (each with a halo exchange) per iteration: 1 for CG, 2 for BiCGStab.
    pub(super) products: usize,
    /// Values exchanged per iteration where it is not `products` halos (CA-GMRES's matrix
    /// powers: one deep halo per block): set by the method.
    pub(super) values_per_iteration: Option<usize>,
    /// The parts whose blocks live in this process (`cores[p − here.start]`) and their rows.
    pub(super) here: std::ops::Range<usize>,
    pub(super) rows: std::ops::Range<usize>,
    /// Every part's rows in its local order (global row of local row i), and its rows,
    /// interior rows, non-zeros and halo.
    pub(super) orders: Vec<Vec<u32>>,
    pub(super) summaries: Vec<[usize; 4]>,
    pub(super) comm: Comm,
}

impl<T: Scalar> Host<'_, T> {
    /// b − Ax in f64.
    pub(super) fn residual(&self, x: &[T]) -> Vec<f64> {
        self.residual_rows(x, 0..self.a.nrows())
    }

    /// (b − Ax)_i in f64 for the rows `rows`.
    fn residual_rows(&self, x: &[T], rows: std::ops::Range<usize>) -> Vec<f64> {
        residual_rows(self.a, self.b, x, rows)
    }

    /// ‖b − Ax‖/‖b‖ in f64 (over MPI every rank computes its own rows — in order, so the
    /// sum does not depend on the thread schedule — then the sum over ranks: every rank gets
    /// the same value, and so takes the same decision).
    pub(super) fn true_relative(&self, x: &[T], b_norm: f64) -> f64 {
        let mut rr = [if self.comm.is_mpi() {
            let r = self.residual_rows(x, self.rows.clone());
            r.iter().map(|v| v * v).sum::<f64>()
        } else {
            self.residual(x).par_iter().map(|v| v * v).sum::<f64>()
        }];
        self.comm.sum(&mut rr);
        rr[0].sqrt() / if b_norm > 0.0 { b_norm } else { 1.0 }
    }

    /// The end of an inner loop started at `started` with device 0's counts at `c0`: its time
    /// and counts added to `totals`, x gathered from `xs`, and its true relative residual.
    pub(super) fn end_loop(
        &mut self,
        cores: &[&BlockCore<T>],
        xs: &[&wgpu::Buffer],
        (c0, started): (&WorkCounts, Instant),
        totals: &mut LoopTotals,
        b_norm: f64,
    ) -> Result<(Vec<T>, f64)> {
        let counts = cores[0].engine.counters().snapshot().since(c0);
        add_counts(&mut totals.counts, &counts);
        totals.seconds += started.elapsed().as_secs_f64();
        let now = self.timers();
        self.in_loops.add_span(&now, &self.loop_mark);
        let x = self.read_x(cores, xs)?;
        let true_rel = self.true_relative(&x, b_norm);
        Ok((x, true_rel))
    }

    /// The timers now.
    fn timers(&self) -> HostTimes {
        HostTimes {
            wait: self.wait.clone(),
            exchange: self.exchange_seconds,
            submit: self.submit_seconds,
            queue_submit: self.queue_submit_seconds,
        }
    }

    /// Marks the start of a loop (call beside starting its clock): the host's timers count
    /// towards the report from here to [`Host::end_loop`].
    pub(super) fn mark_loop(&mut self) {
        self.loop_mark = self.timers();
    }

    /// Adds `v` over the processes (see [`Comm::sum`]).
    pub(super) fn sum(&self, v: &mut [f64]) {
        self.comm.sum(v);
    }

    /// x gathered from every device's `x` buffer into global order.
    pub(super) fn read_x(&self, cores: &[&BlockCore<T>], xs: &[&wgpu::Buffer]) -> Result<Vec<T>> {
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
    pub(super) fn phase(
        &mut self,
        cores: &[&BlockCore<T>],
        launches: &[PhaseLaunches<'_>],
    ) -> Result<Vec<Partials<T>>> {
        let exchanging =
            launches.iter().any(|l| l.gather.is_some()) && !self.exchange.transfers.is_empty();
        let t = Instant::now();
        let q = queue_seconds(cores);
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
        self.submit_seconds += t.elapsed().as_secs_f64();
        self.queue_submit_seconds += queue_seconds(cores) - q;
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
        let t = Instant::now();
        let q = queue_seconds(cores);
        let mut pending = Vec::with_capacity(cores.len());
        for (core, l) in cores.iter().zip(launches) {
            let mut batch = core.engine.begin("dist boundary");
            if let Some(Some(bnd)) = l.boundary {
                match l.interior {
                    Some(Some(_)) => bnd.record_continuing(&mut batch),
                    _ => bnd.record(&mut batch),
                }
            }
            if l.no_sums {
                batch.submit()?;
            } else {
                pending.push(Self::read_partials(core, l, batch)?);
            }
        }
        self.submit_seconds += t.elapsed().as_secs_f64();
        self.queue_submit_seconds += queue_seconds(cores) - q;
        self.wait_partials(pending)
    }

    /// Submits `batch` with a read of the partial-sum slots the phase's launches wrote.
    fn read_partials<'e>(
        core: &'e BlockCore<T>,
        l: &PhaseLaunches<'_>,
        batch: crate::gpu::Batch<'e>,
    ) -> Result<(u32, PendingRead<'e, T>)> {
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
        Ok((slots.start, read))
    }

    /// Waits for every device's partial sums (the waits timed per device).
    fn wait_partials(
        &mut self,
        pending: Vec<(u32, PendingRead<'_, T>)>,
    ) -> Result<Vec<Partials<T>>> {
        let mut out = Vec::with_capacity(pending.len());
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
    pub(super) fn close(
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

    pub(super) fn dist_report(
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
                            wait_seconds: self.in_loops.wait.get(d).copied().unwrap_or(0.0),
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
            exchange_values_per_iteration: self
                .values_per_iteration
                .unwrap_or(self.products * self.exchange.values()),
            exchange_bytes_per_iteration: match self.values_per_iteration {
                Some(v) => (2 * v * size) as u64,
                None => self.products as u64 * self.exchange.bytes(size),
            },
            exchange_seconds: self.in_loops.exchange,
            exchange_share: if report.loop_seconds > 0.0 {
                self.in_loops.exchange / report.loop_seconds
            } else {
                0.0
            },
            wait_seconds: self.in_loops.wait.iter().sum::<f64>() / k,
            syncs_per_iteration_per_device: report.syncs_per_iteration,
            submit_seconds: self.in_loops.submit,
            queue_submit_seconds: self.in_loops.queue_submit,
        }
    }
}
