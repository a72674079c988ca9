//! CA-GMRES(s, m) on several devices (paper 002 §IV–VI's multi-GPU CA-GMRES; issue #19): the
//! cycle logic of the CPU reference and of one GPU ([`run_cycles`] over a [`CaBackend`],
//! `backend.rs`), with the n-length work on every device's row block:
//!
//! ```text
//!  matrix powers of a block (s ≥ 2), paper 002 Fig. 4 (mpk.rs):
//!     dist_ca_mpk_load   z₀ = q_j on the owned rows, the deep send list gathered   → read, exchange
//!                        (the host fills every device's ghost rows within s edges)
//!     dist_ca_mpk_step   k = 1 … s: z_k on the owned rows and the ghosts of depth ≤ s − k, no
//!                        exchange between steps; the owned rows into the pool as q_{j+k}
//!  an Arnoldi step's product (s = 1), the restart residual: one distributed product (dist/mod.rs)
//!     dist_ca_load, dist_gather → read, exchange; dist_ca_powers (interior, boundary rows)
//!  BOrth, twice:      ca_block_dots + ca_block_finish of the block's share of Q_prevᵀW → read,
//!                     the host sums C over devices, uploads it; ca_block_update W −= Q_prev C
//!                     (CholQR, CholQR2: the second pass reads [Q_prev, W]ᵀW instead, and the
//!                     host factors WᵀW − C₂ᵀC₂ for CholQR's first R: one update W R⁻¹ − Q C₂R⁻¹)
//!  TSQR (CholQR, CholQR2, SVQR): the Gram matrix WᵀW the same way, R on the host, W R⁻¹
//!  restart:           x += D⁻¹ Q y (ca_block_update); one product r = b − Ax with ‖r‖²
//! ```
//!
//! Each device keeps its rows of the basis in a [`CaSystem`] built for rows
//! ([`CaSystem::for_rows`]): the same pool, cycle buffer and block kernels as on one GPU, whose
//! inner products are that block's share; the host adds the shares over devices in f64
//! before anything uses them, so every device applies the same C and R. A block of s vectors
//! costs one exchange (one host round trip) for its products and one round trip per
//! reduction (2 + the TSQR's, one fewer with CholQR/CholQR2) — against distributed GMRES's three round trips and two
//! reductions per vector. With the Newton basis the first cycle is Arnoldi (blocks of one
//! vector: one exchange and two reductions each), as on one GPU. Blocks are not deferred:
//! each needs the host between its reductions. Where a device's extended rows exceed one
//! storage binding the block's products exchange once each instead (noted in the report).
//!
//! Supported: `--tsqr cholqr`, `cholqr2` (the default) and `svqr` (each needs only Gram
//! matrices, which are sums over devices), right Jacobi or no preconditioner; the rest is
//! refused by `dist::check_supported` with a message.

mod backend;

use std::time::Instant;

use super::block::{BlockCore, Launch, Rows, poisoned};
use super::mpk::{DeepHalo, ExtBlock, MpkDevice};
use super::{Host, LoopTotals, Restarts, Run, Setup, Solved};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{CaReport, Monitor, Precond, SolveReport, StopReason, Tsqr};
use crate::cpu::cagmres::{CaBackend, Control, operator_scale, run_cycles, summarise};
use crate::gpu::shader::PoolLayout;
use crate::matrix::Csr;
use crate::matrix::partition::{LocalPart, RowPartition};
use crate::solvers::cagmres::system::CaSystem;
use backend::{DistBackend, DistCa};

/// The TSQR variants CA-GMRES runs on several devices: those built from Gram matrices.
pub(super) fn supports(tsqr: Tsqr) -> bool {
    matches!(tsqr, Tsqr::CholQr | Tsqr::CholQr2 | Tsqr::Svqr)
}

/// One device's product launches and the buffers they add to its [`CaSystem`].
pub(super) struct CaLaunches {
    /// `[v; v_halo]`: what a product multiplies.
    ext: wgpu::Buffer,
    /// The `DistCa` uniform of the phase.
    step: wgpu::Buffer,
    load: Option<Launch>,
    gather: Option<Launch>,
    powers_interior: Option<Launch>,
    powers_boundary: Option<Launch>,
    residual_interior: Option<Launch>,
    residual_boundary: Option<Launch>,
}

impl CaLaunches {
    fn new<T: Scalar>(core: &BlockCore<T>, sys: &CaSystem<'_, T>) -> Result<Self> {
        let e = &core.engine;
        let next = core.local.nloc() + core.local.halo.len();
        let ext = poisoned::<T>(e, "dist cagmres v_ext", next)?;
        let step = e.uniform_from("dist cagmres step", &DistCa::default());
        let mut vecs = vec![(8, &ext), (10, sys.dinv()), (22, &step)];
        vecs.extend(sys.pool.entries_at(PoolLayout::Dist));
        let parts = sys.pool.parts();
        let (k_load, k_gather, k_powers) = (
            core.pool_kernel("dist_ca_load", parts)?,
            core.kernel("dist_gather")?,
            core.pool_kernel("dist_ca_powers", parts)?,
        );
        // A powers step's sums are not read: no reduction.
        let k_step = k_powers.without_reduction();
        Ok(CaLaunches {
            load: core.launch(&k_load, Rows::All, None, &vecs),
            gather: core.launch(&k_gather, Rows::Send, None, &vecs),
            powers_interior: core.launch(&k_step, Rows::Interior, Some(0), &vecs),
            powers_boundary: core.launch(&k_step, Rows::Boundary, Some(1), &vecs),
            residual_interior: core.launch(&k_powers, Rows::Interior, Some(0), &vecs),
            residual_boundary: core.launch(&k_powers, Rows::Boundary, Some(1), &vecs),
            ext,
            step,
        })
    }
}

/// The diagonal block's diagonal of a local part (its rows, in local order), as the CSR a
/// Jacobi M is built from (an absent entry is 0: refused by the global check before).
fn local_diagonal<T: Scalar>(local: &LocalPart<T>) -> Result<Csr<T>> {
    let n = local.nloc();
    let d: Vec<T> = (0..n)
        .map(|i| {
            let span = local.row_ptr[i] as usize..local.row_ptr[i + 1] as usize;
            local.col_idx[span.clone()]
                .iter()
                .zip(&local.values[span])
                .find(|(c, _)| **c as usize == i)
                .map_or(T::zero(), |(_, v)| *v)
        })
        .collect();
    Csr::new(n, n, (0..=n as u32).collect(), (0..n as u32).collect(), d)
}

/// CA-GMRES(s, m) over the devices of `setup`; returns x, the host (its timings) and the
/// blocks' cores.
pub(super) fn solve<'a, T: Scalar>(
    mut host: Host<'a, T>,
    mut setup: Setup<'_, T>,
    monitor: &mut dyn Monitor,
    report: &mut SolveReport,
) -> Result<Solved<'a, T>> {
    let opts = setup.opts;
    let ca = opts.ca();
    let n = host.a.nrows();
    let b = host.b;
    let x0 = setup.x0(n);
    let parts = setup.blocks(&host.exchange, |engine, local, _dinv, send| {
        let diag = local_diagonal(&local)?;
        let (rhs, x0) = (local.gather(b), local.gather(&x0));
        let core = BlockCore::new(engine, local, send, 2, false)?;
        Ok((core, diag, rhs, x0))
    })?;
    let mut cores = Vec::with_capacity(parts.len());
    let mut rest = Vec::with_capacity(parts.len());
    for (core, diag, rhs, x0) in parts {
        cores.push(core);
        rest.push((diag, rhs, x0));
    }
    let b_norm = report.b_norm;
    let counts0 = cores[0].engine.counters().snapshot();
    let mut totals = LoopTotals::default();
    let mut run = Run::new(monitor);
    let dinv = setup.dinv.take();
    let (x, true_rel, stop, rep, exchanged) = {
        let systems: Vec<CaSystem<'_, T>> = cores
            .iter()
            .zip(&rest)
            .map(|(core, (diag, rhs, x0))| {
                CaSystem::for_rows(&core.engine, diag, rhs, Some(x0), opts)
            })
            .collect::<Result<_>>()?;
        let launches: Vec<CaLaunches> = cores
            .iter()
            .zip(&systems)
            .map(|(core, sys)| CaLaunches::new(core, sys))
            .collect::<Result<_>>()?;
        let most = systems.iter().map(|s| s.pool.parts()).max().unwrap_or(1);
        if most > 1 {
            report.notes.push(format!(
                "a block's CA-GMRES({}, {}) pool exceeds one storage binding: held in up to {most} \
                 bindings",
                ca.s, ca.m
            ));
        }
        let deep = deep_powers(&host, &cores, &systems, dinv.as_deref(), ca.s)?;
        report.notes.push(match &deep {
            Some((halo, _)) => format!(
                "matrix powers: one exchange per block of a depth-{} halo ({} values over the \
                 devices, against {} for one product's), then every product on each device \
                 alone (paper 002 Fig. 4)",
                halo.depth,
                halo.exchange.values(),
                host.exchange.values()
            ),
            None if ca.s >= 2 => "matrix powers: one exchange per product (a block's extended \
                 rows exceed one storage binding)"
                .into(),
            None => "matrix powers: one exchange per product (s = 1)".into(),
        });
        let mut rep = CaReport {
            options: ca,
            shifts: Vec::new(),
            scale: operator_scale(host.a, opts.precond != Precond::None),
            cycles: Vec::new(),
            reductions_per_cycle: None,
            syncs_per_cycle: None,
        };
        let ctl = Control {
            tau: host.threshold,
            max_iter: opts.max_iter,
            b_norm,
        };
        run.monitor.on_loop_start();
        let t = Instant::now();
        host.mark_loop();
        let c0 = cores[0].engine.counters().snapshot();
        let mut hist = Vec::new();
        let mut be = DistBackend {
            host: &mut host,
            cores: &cores,
            systems: &systems,
            launches: &launches,
            deep: deep.as_ref().map(|(h, m)| (h, m.as_slice())),
            run: &mut run,
            jacobi: opts.precond == Precond::Jacobi,
            n,
            exchanged: 0,
        };
        let stop = run_cycles(&mut be, &ctl, &mut hist, &ca, &mut rep)?;
        be.checkpoint(&hist);
        be.flush()?;
        let exchanged = be.exchanged;
        // x from each pool into the first rows of `ext`, where the host reads it.
        for ((core, sys), l) in cores.iter().zip(&systems).zip(&launches) {
            let bytes = (sys.n * std::mem::size_of::<T>()) as u64;
            let mut batch = core.engine.begin("dist cagmres x");
            let (buf, at) = sys.pool.locate(sys.x());
            let size = std::mem::size_of::<T>() as u64;
            batch.copy(buf, at as u64 * size, &l.ext, 0, bytes);
            batch.submit()?;
        }
        let core_refs: Vec<&BlockCore<T>> = cores.iter().collect();
        let xs: Vec<&wgpu::Buffer> = launches.iter().map(|l| &l.ext).collect();
        let (x, true_rel) = host.end_loop(&core_refs, &xs, (&c0, t), &mut totals, b_norm)?;
        // After the loop's counts: the orthogonality of the last cycle's basis.
        let last_columns = rep.cycles.last().map_or(0, |c| c.columns);
        let mut be = DistBackend {
            host: &mut host,
            cores: &cores,
            systems: &systems,
            launches: &launches,
            deep: None,
            run: &mut run,
            jacobi: false,
            n,
            exchanged: 0,
        };
        report.orthogonality_loss = be.orthogonality_loss(last_columns)?;
        (x, true_rel, stop, rep, exchanged)
    };
    let mut rep = rep;
    let recorded: usize = rep.cycles.iter().map(|c| c.recorded).sum();
    run.recorded = recorded.max(run.iterations());
    run.batch_size = ca.s;
    run.cycles = Some(rep.cycles.len());
    host.values_per_iteration = Some(exchanged / run.recorded.max(1));
    report.loop_seconds = totals.seconds;
    let true_abs = true_rel * if b_norm > 0.0 { b_norm } else { 1.0 };
    let (reason, detail) = match stop.reason {
        StopReason::Converged if !crate::cpu::confirms_convergence(true_abs, host.threshold) => (
            StopReason::ResidualGap,
            format!(
                "residual gap at iteration {}: the least-squares estimate met the threshold \
                 {:.3e} but the true |b - Ax| = {true_abs:.3e} (|b - Ax|/|b| = {true_rel:.3e}) \
                 does not",
                run.iterations(),
                host.threshold
            ),
        ),
        other => (other, stop.detail.clone()),
    };
    summarise(&mut rep);
    let k = cores.len();
    report.notes.insert(
        0,
        format!(
            "CA-GMRES(s = {}, m = {}) on {k} devices: {} basis, TSQR {}; each basis vector's \
             product one halo exchange, each block's inner products summed over the devices on \
             the host; iterations count the basis vectors the solution used",
            ca.s, ca.m, ca.basis, ca.tsqr
        ),
    );
    report.cagmres = Some(rep);
    let restarts = Restarts {
        total: stop.restarts,
        gaps: stop.replacements,
        ..Default::default()
    };
    host.close(
        &cores[0],
        run,
        report,
        (reason, true_rel),
        totals.counts,
        &counts0,
        restarts,
        k,
    );
    if !detail.is_empty() && report.reason != StopReason::Converged {
        report.reason_detail = detail;
    }
    Ok((x, host, cores))
}

/// The deep halo of CA-GMRES's matrix powers for blocks of `s` and every device's side of it
/// (`mpk.rs`); `None` for s = 1, or where a device's extended rows exceed one binding (the
/// products then exchange once each).
#[allow(clippy::type_complexity)]
fn deep_powers<T: Scalar>(
    host: &Host<'_, T>,
    cores: &[BlockCore<T>],
    systems: &[CaSystem<'_, T>],
    dinv: Option<&[T]>,
    s: usize,
) -> Result<Option<(DeepHalo, Vec<MpkDevice>)>> {
    if s < 2 {
        return Ok(None);
    }
    let n = host.a.nrows();
    let mut bounds = vec![0];
    for o in &host.orders {
        bounds.push(bounds.last().expect("bounds start at 0") + o.len());
    }
    let partition = RowPartition::from_bounds(n, bounds)?;
    let interiors: Vec<usize> = host.summaries.iter().map(|s| s[1]).collect();
    let halo = DeepHalo::plan(host.a, &partition, &host.orders, &interiors, s);
    let mut devices = Vec::with_capacity(cores.len());
    for (core, sys) in cores.iter().zip(systems) {
        let p = core.local.part;
        let ext = ExtBlock::build(host.a, &partition, p, &host.orders[p], &halo);
        let dinv_ext: Option<Vec<T>> = dinv.map(|d| {
            host.orders[p]
                .iter()
                .chain(&halo.ghosts[p])
                .map(|&g| d[g as usize])
                .collect()
        });
        match MpkDevice::new(
            &core.engine,
            &ext,
            dinv_ext.as_deref(),
            &halo.exchange.send[p],
            &sys.pool,
        )? {
            Some(m) => devices.push(m),
            None => return Ok(None),
        }
    }
    Ok(Some((halo, devices)))
}
