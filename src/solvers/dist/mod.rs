//! Solves across several devices in one process (issue #19): A's rows split in contiguous
//! blocks balanced by non-zeros ([`RowPartition`]), one block per device (`block::BlockCore`),
//! the halo of each block's product exchanged through the host ([`Exchange`]), and every inner
//! product summed over the devices' partial sums on the host in f64.
//!
//! Methods: **CG** — pipelined (paper 000, Alg. 2, the recurrence of
//! [`super::cg::PipelinedCg`]) or classical (Alg. 1) —, **BiCGStab** — pipelined (Alg. 4,
//! two phases per iteration) or classical (Alg. 3, three), right-preconditioned — and **GMRES(m)** (the simpler
//! GMRES of [`crate::cpu::gmres`] with classical Gram–Schmidt twice, right-preconditioned) and
//! **CA-GMRES(s, m)** (paper 002's cycle logic of [`crate::cpu::cagmres`], each device's rows
//! of the basis in a CA-GMRES system of its own: `cagmres.rs`), each with Jacobi or no
//! preconditioner.
//! All are written as *phases* (`Host::phase`): one phase on every device is
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
//! pipelined BiCGStab iteration is two phases (s and As; x, r, p and Ap): four round trips
//! with a halo, two without; a classical one three (p and Ap; s and As; x and r): five with a
//! halo, three without; a GMRES step two (basis vector and product; first Gram–Schmidt pass):
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

mod bicg_pair;
mod bicgstab;
mod block;
mod cagmres;
mod cg;
mod comm;
mod gmres;
mod host;
#[cfg(feature = "mpi")]
pub mod mpi;
mod mpk;

pub(crate) use self::comm::Comm;

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use self::block::BlockCore;
use self::host::{Host, PhaseLaunches};
use super::driver::{MAX_RESTARTS, Run};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::base::{
    DeviceInfo, Method, Monitor, Precond, Solution, SolveReport, StopReason, Variant, WorkCounts,
};
use crate::gpu::{Engine, GpuContext, Tuning};
use crate::matrix::Csr;
use crate::matrix::partition::{Exchange, LocalPart, RowPartition};
use crate::solvers::SolveOptions;

/// Solves A x = b over `devices` (one row block each), A split by
/// [`RowPartition::balanced`], with the method of `opts` (CG, BiCGStab, GMRES or CA-GMRES).
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
    if opts.method == Method::Bicg {
        // Not row blocks: the two recurrences on two devices (paper 004).
        return bicg_pair::solve(devices, a, b, x0, opts, config.tuning, monitor);
    }
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
        Method::Cg | Method::Bicgstab => opts.variant,
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
        submit_seconds: 0.0,
        queue_submit_seconds: 0.0,
        loop_mark: Default::default(),
        in_loops: Default::default(),
        products: 1,
        values_per_iteration: None,
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
        Method::CaGmres => cagmres::solve(host, setup, monitor, &mut report)?,
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
        (Method::Cg, Variant::Cooperative) => {
            return Err(KrylovError::Unsupported(
                "CG on several devices runs the pipelined or classical variant (the cooperative \
                 variant's grid barrier holds the workgroups of one device)"
                    .into(),
            ));
        }
        (Method::Cg, Variant::Fused) => {
            return Err(KrylovError::Unsupported(
                "CG on several devices runs the pipelined or classical variant (fused CG's \
                 product would need three vectors' halos per launch; it is a one-device variant)"
                    .into(),
            ));
        }
        (Method::Gmres, Variant::Fused) => {
            return Err(KrylovError::Unsupported(
                "GMRES on several devices runs the pipelined or classical variant (fused \
                 GMRES's inner products over its own rows are a one-device scheme)"
                    .into(),
            ));
        }
        (Method::Gmres, Variant::P1) => {
            return Err(KrylovError::Unsupported(
                "GMRES on several devices runs the pipelined or classical variant (p(1)-GMRES's \
                 inner products over its own rows are a one-device scheme)"
                    .into(),
            ));
        }
        (Method::Cg | Method::Bicgstab | Method::Gmres, _) => {}
        (Method::CaGmres, _) => {
            opts.ca().validate()?;
            let tsqr = opts.ca().tsqr;
            if !cagmres::supports(tsqr) {
                return Err(KrylovError::Unsupported(format!(
                    "CA-GMRES on several devices runs --tsqr cholqr, cholqr2 or svqr (its blocks \
                     are orthogonalised from Gram matrices summed over the devices); {tsqr} is not \
                     built there"
                )));
            }
        }
        (method, variant) => {
            return Err(KrylovError::Unsupported(format!(
                "--devices runs CG, BiCGStab, GMRES and CA-GMRES over row blocks, and BiCG on two devices in one process ({variant} {method} {} is not built yet)",
                if method == Method::Bicg {
                    "over MPI ranks"
                } else {
                    "on several devices"
                }
            )));
        }
    }
    if !matches!(opts.precond, Precond::None | Precond::Jacobi) {
        return Err(KrylovError::Unsupported(format!(
            "--devices takes --precond none or jacobi ({} on several devices is not built yet)",
            opts.precond
        )));
    }
    if matches!(
        opts.method,
        Method::Bicgstab | Method::Gmres | Method::CaGmres
    ) && opts.side == crate::base::Side::Left
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
