//! Batched solves: many independent systems A_i X_i = B_i — each with its own matrix
//! (any size and sparsity pattern) and one or more right-hand sides — in one sequence of
//! launches, each column with its own convergence.
//!
//! A work item is a system with one right-hand side (kernel `batch_cg`) or a block of up to
//! four right-hand sides of one matrix (`batch_cg_block`: A read once per SpMV for all four).
//! Each item runs in one workgroup (`shaders/lib/batch_cg.wgsl`): every inner product is a
//! workgroup reduction, so a launch runs many whole iterations of every item with no global
//! reduction and no launch per step; an item whose columns have stopped costs a status load.
//! The host reads one word (items stopped) per submit, then x, the statuses and histories
//! once; a column the recurrence calls converged is confirmed by its true residual in f64 or
//! restarted from x (a residual replacement, counted in `restarts`), as in the other solvers.
//! A batch larger than the adapter's storage binding limit runs in sequential parts.
//!
//! The CPU twin (oracle and fallback) is [`crate::cpu::batch_cg`].

mod batch_cg;

use std::time::Instant;

pub use batch_cg::ItemKind;
use batch_cg::{
    Item, LaunchSpec, Layout, PackSystem, PartBuffers, STATUS_RUNNING, part_bytes, threads_for,
};

use crate::base::batch::{BatchSolution, ColumnReport};
use crate::base::error::{KrylovError, Result};
use crate::base::report::DeviceInfo;
use crate::base::scalar::Scalar;
use rayon::prelude::*;

use crate::cpu::batch_cg::{
    BatchShape, ColumnEnd, ColumnStop, b_norm, batch_report, column_report, guard, inverse_diagonal,
};
use crate::cpu::true_relative_residual;
use crate::gpu::{ChosenDevice, Engine};
use crate::matrix::batch::{BatchSystem, validate_batch};

use super::SolveOptions;

/// Most bytes the residual histories of a batch may take (max_iter + 1 norms per column);
/// a larger batch keeps none (`history_kept: false`).
pub const HISTORY_BUDGET_BYTES: u64 = 64 << 20;

/// Iterations per launch when [`SolveOptions::batch`] is 0.
pub const AUTO_ITERATIONS_PER_LAUNCH: usize = 32;

/// Launches per submit at most: the first submit holds one, each next one twice as many.
pub const MAX_LAUNCHES_PER_SUBMIT: usize = 32;

/// How a batch is run beyond [`SolveOptions`] (tests force small parts with it).
#[derive(Debug, Clone, Default)]
pub struct BatchConfig {
    /// Largest bytes of one binding of a part (default: [`Engine::binding_limit`], the
    /// adapter's binding and buffer limits or `Tuning::max_binding_bytes`).
    pub part_limit_bytes: Option<u64>,
    /// Keep the residual histories (default: when they fit [`HISTORY_BUDGET_BYTES`]).
    pub history: Option<bool>,
}

/// Solves every system of the batch on the GPU with batched CG (Jacobi or no
/// preconditioner; `opts.rtol`, `atol`, `max_iter` per column; `opts.batch` iterations per
/// launch, 0 for [`AUTO_ITERATIONS_PER_LAUNCH`]).
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::{batch::BatchSystem, generators::poisson_2d_fd};
/// use krylov_wgpu::solvers::{SolveOptions, batch::solve_batch};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f32>(16);
/// let rhs: Vec<Vec<f32>> = (0..8).map(|k| vec![1.0 + k as f32; 256]).collect();
/// let systems: Vec<_> = rhs.iter().map(|b| BatchSystem::single(&a, b)).collect();
/// let sol = solve_batch(&engine, &systems, &SolveOptions::default())?;
/// assert!(sol.report.all_converged && sol.x.len() == 8);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn solve_batch<T: Scalar>(
    engine: &Engine,
    systems: &[BatchSystem<'_, T>],
    opts: &SolveOptions,
) -> Result<BatchSolution<T>> {
    solve_batch_with(engine, systems, opts, &BatchConfig::default())
}

/// Solves the batch on the device a [`crate::gpu::DeviceChoice`] resolved to: on `engine`
/// (or a fresh one) for a GPU, with the CPU twin [`crate::cpu::batch_cg::solve_batch`]
/// otherwise. The report's `device` and `device_reason` say which and why.
pub fn solve_batch_on<T: Scalar>(
    device: &ChosenDevice,
    engine: Option<&Engine>,
    systems: &[BatchSystem<'_, T>],
    opts: &SolveOptions,
) -> Result<BatchSolution<T>> {
    let mut sol = match (&device.context, engine) {
        (Some(_), Some(engine)) => solve_batch(engine, systems, opts)?,
        (Some(ctx), None) => solve_batch(&Engine::new(ctx.clone()), systems, opts)?,
        (None, _) => crate::cpu::batch_cg::solve_batch(systems, opts)?,
    };
    sol.report.device = device.info.clone();
    sol.report.device_reason = device.reason.clone();
    Ok(sol)
}

/// The items of a batch: a system with one right-hand side is one single-column item, one
/// with more is blocks of four (the last one partly idle); each with the workgroup size of
/// its rows (`batch_cg::threads_for`).
pub fn items_of<T: Scalar>(
    engine: &Engine,
    systems: &[BatchSystem<'_, T>],
) -> Vec<(ItemKind, Item)> {
    let mut items = Vec::new();
    for (s, sys) in systems.iter().enumerate() {
        let k = sys.rhs.len();
        let threads = threads_for::<T>(engine, sys.a.nrows());
        for first in (0..k).step_by(4) {
            let kind = ItemKind {
                block: k > 1,
                threads,
            };
            let count = if k == 1 { 1 } else { (k - first).min(4) };
            items.push((
                kind,
                Item {
                    system: s,
                    first,
                    count,
                },
            ));
        }
    }
    items
}

/// [`solve_batch`] with the part size and history choice of `config`.
pub fn solve_batch_with<T: Scalar>(
    engine: &Engine,
    systems: &[BatchSystem<'_, T>],
    opts: &SolveOptions,
    config: &BatchConfig,
) -> Result<BatchSolution<T>> {
    validate_batch(systems, opts)?;
    let jacobi = opts.precond == crate::base::options::Precond::Jacobi;
    let items = items_of(engine, systems);
    let kinds: Vec<ItemKind> = {
        let mut k: Vec<ItemKind> = items.iter().map(|(k, _)| *k).collect();
        k.sort();
        k.dedup();
        k
    };
    // Compile first: pipeline creation is not part of the solve's time (as for `solve`).
    for kind in &kinds {
        let cfg = crate::gpu::ShaderConfig {
            workgroup_size: kind.threads,
            ..engine.shader_config(T::PRECISION)
        };
        crate::gpu::kernels::solver_kernel::<T>(engine, kind.kernel(), cfg)?;
    }
    let before = engine.counters().snapshot();
    let start = Instant::now();
    let dinvs: Vec<Option<Vec<T>>> = systems
        .iter()
        .map(|s| inverse_diagonal(s.a, opts.precond))
        .collect();
    // ‖b‖ and the threshold of every column, once (the guard reuses them after each run).
    let b_norms: Vec<Vec<f64>> = systems
        .iter()
        .map(|s| s.rhs.iter().map(|b| b_norm(b)).collect())
        .collect();
    let thresholds: Vec<Vec<f64>> = b_norms
        .iter()
        .map(|ns| ns.iter().map(|n| opts.threshold(*n)).collect())
        .collect();
    let thresholds2: Vec<Vec<f64>> = thresholds
        .iter()
        .map(|t| t.iter().map(|v| v * v).collect())
        .collect();
    let packing: Vec<_> = systems
        .iter()
        .enumerate()
        .map(|(i, s)| PackSystem {
            a: s.a,
            rhs: &s.rhs[..],
            dinv: dinvs[i].as_deref(),
            thresholds2: &thresholds2[i][..],
        })
        .collect();
    let columns_total: usize = systems.iter().map(|s| s.rhs.len()).sum();
    let t_bytes = std::mem::size_of::<T>() as u64;
    let history_len = opts.max_iter.saturating_add(1);
    let slots: u64 = items.iter().map(|(k, _)| k.lanes() as u64).sum();
    let keep_history = config.history.unwrap_or_else(|| {
        slots
            .saturating_mul(history_len as u64)
            .saturating_mul(t_bytes)
            <= HISTORY_BUDGET_BYTES
    });
    let history_len = if keep_history { history_len } else { 0 };
    let iters = if opts.batch > 0 {
        opts.batch
    } else {
        AUTO_ITERATIONS_PER_LAUNCH
    };
    let limit = config
        .part_limit_bytes
        .unwrap_or_else(|| engine.binding_limit());
    let parts = split_parts::<T>(systems, &items, limit, history_len)?;

    // x[system][rhs], filled part by part.
    let mut xs: Vec<Vec<Vec<T>>> = systems
        .iter()
        .map(|s| vec![Vec::new(); s.rhs.len()])
        .collect();
    let mut outcome: Vec<Vec<Option<ColumnEnd<T>>>> =
        systems.iter().map(|s| vec![None; s.rhs.len()]).collect();
    let mut launches = 0u64;
    let (mut setup_seconds, mut loop_seconds) = (start.elapsed().as_secs_f64(), 0.0);
    for (kind, part) in &parts {
        let t = Instant::now();
        let lay = Layout::new(*kind, part, &packing);
        let spec = LaunchSpec {
            jacobi,
            max_iter: opts.max_iter,
            history_len,
            iters,
        };
        let bufs = PartBuffers::upload(engine, *kind, part, &packing, &lay, &spec)?;
        setup_seconds += t.elapsed().as_secs_f64();
        let lanes = kind.lanes();
        // The part's columns: (item, lane).
        let cols: Vec<(usize, usize)> = part
            .iter()
            .enumerate()
            .flat_map(|(i, it)| (0..it.count).map(move |lane| (i, lane)))
            .collect();
        let mut restarts = vec![[0usize; 4]; part.len()];
        loop {
            let t = Instant::now();
            launches += run_launches(engine, &bufs, iters, opts.max_iter)?;
            loop_seconds += t.elapsed().as_secs_f64();
            let flags: Vec<u32> = engine.read(&bufs.flags, 0, 8 * part.len())?;
            let x: Vec<T> = engine.read(&bufs.vecs, 0, lay.stride())?;
            // Each undecided column's x and true residual (in f64, on every core).
            let checked: Vec<(usize, usize, Vec<T>, f64)> = cols
                .par_iter()
                .filter(|(i, lane)| outcome[part[*i].system][part[*i].first + lane].is_none())
                .map(|&(i, lane)| {
                    let it = part[i];
                    let sys = &systems[it.system];
                    let col: Vec<T> = (0..sys.a.nrows())
                        .map(|row| x[(lay.row_offset[i] + row) * lanes + lane])
                        .collect();
                    let rel = true_relative_residual(sys.a, sys.rhs[it.first + lane], &col);
                    (i, lane, col, rel)
                })
                .collect();
            // Confirm each converged column by its true residual, or restart it from x.
            let mut again = vec![false; part.len()];
            for (i, lane, col, rel) in checked {
                let it = part[i];
                let (s, j) = (it.system, it.first + lane);
                let status = flags[8 * i + lane];
                let stop = ColumnStop::from_status(status).ok_or_else(|| {
                    KrylovError::Gpu(format!(
                        "batched CG left system {s} (right-hand side {j}) with status {status}"
                    ))
                })?;
                match guard(
                    stop,
                    rel,
                    b_norms[s][j],
                    thresholds[s][j],
                    restarts[i][lane],
                ) {
                    Ok(reason) => {
                        outcome[s][j] = Some(ColumnEnd {
                            iterations: flags[8 * i + 4 + lane] as usize,
                            reason,
                            restarts: restarts[i][lane],
                            relative_residual: rel,
                            history: Vec::new(),
                        });
                        xs[s][j] = col;
                    }
                    Err(()) => {
                        restarts[i][lane] += 1;
                        again[i] = true;
                    }
                }
            }
            if !again.iter().any(|a| *a) {
                break;
            }
            // The restarted columns run again from x (the start launch recomputes r).
            let mut new_flags = flags.clone();
            for &(i, lane) in &cols {
                let it = part[i];
                if outcome[it.system][it.first + lane].is_none() {
                    new_flags[8 * i + lane] = STATUS_RUNNING;
                }
            }
            let stopped = again.iter().filter(|a| !**a).count() as u32;
            engine.write(&bufs.flags, 0, &new_flags);
            engine.write(&bufs.state, 0, &[stopped]);
        }
        if history_len > 0 {
            // Iteration-major: the iterations run, no more.
            let slots = part.len() * lanes;
            let run = cols
                .iter()
                .map(|&(i, lane)| {
                    let it = part[i];
                    outcome[it.system][it.first + lane]
                        .as_ref()
                        .map_or(0, |o| o.iterations)
                })
                .max()
                .unwrap_or(0);
            let kept = (run + 1).min(history_len);
            let h: Vec<T> = engine.read(&bufs.history, 0, kept * slots)?;
            for &(i, lane) in &cols {
                let it = part[i];
                let o = outcome[it.system][it.first + lane]
                    .as_mut()
                    .expect("column decided");
                let slot = i * lanes + lane;
                o.history = (0..(o.iterations + 1).min(kept))
                    .map(|k| h[k * slots + slot])
                    .collect();
            }
        }
    }
    let mut columns: Vec<ColumnReport> = Vec::with_capacity(columns_total);
    for (s, sys) in systems.iter().enumerate() {
        for (j, b) in sys.rhs.iter().enumerate() {
            let end = outcome[s][j].take().expect("every column decided");
            columns.push(column_report(s, j, sys.a, b, end));
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let counts = engine.counters().snapshot().since(&before);
    let shape = BatchShape {
        items: items.len(),
        parts: parts.len(),
        iterations_per_launch: iters,
        launches,
        history_kept: history_len > 0,
        workgroup_sizes: {
            let mut w: Vec<u32> = kinds.iter().map(|k| k.threads).collect();
            w.sort_unstable();
            w.dedup();
            w
        },
        counts,
        setup_seconds,
        loop_seconds,
        check_seconds: seconds - setup_seconds - loop_seconds,
    };
    let report = batch_report(
        T::PRECISION,
        opts,
        DeviceInfo::gpu(&engine.context().summary),
        {
            let mut names: Vec<String> = kinds.iter().map(|k| k.kernel().to_string()).collect();
            names.dedup();
            names
        },
        systems.len(),
        shape,
        columns,
        seconds,
    );
    Ok(BatchSolution { x: xs, report })
}

/// Runs launches until every item of the part has stopped: submits of 1, 2, 4, … launches
/// (at most [`MAX_LAUNCHES_PER_SUBMIT`]), the first from x (`bg_start`), each followed by a
/// read of the stopped-items count. Returns the launches made.
fn run_launches(engine: &Engine, bufs: &PartBuffers, iters: usize, max_iter: usize) -> Result<u64> {
    // Every launch gives each running column `iters` iterations, so all have stopped (at
    // the latest on the iteration limit) after this many launches.
    let enough = (max_iter / iters.max(1)) as u64 + 2;
    let mut launches = 0u64;
    let mut per_submit = 1usize;
    loop {
        let mut batch = engine.begin("batch cg");
        for _ in 0..per_submit {
            let bg = if launches == 0 {
                &bufs.bg_start
            } else {
                &bufs.bg_go_on
            };
            batch.dispatch(&bufs.kernel, bg, bufs.groups);
            launches += 1;
        }
        let stopped: Vec<u32> = batch.submit_and_read(&bufs.state, 0, 1)?;
        if stopped[0] >= bufs.items {
            return Ok(launches);
        }
        if launches > enough {
            return Err(KrylovError::Gpu(format!(
                "batched CG: {} of {} items still running after {launches} launches of {iters} \
                 iterations (limit {max_iter})",
                bufs.items - stopped[0],
                bufs.items
            )));
        }
        per_submit = (per_submit * 2).min(MAX_LAUNCHES_PER_SUBMIT);
    }
}

/// Splits the items into parts of one kind (kernel and workgroup size) whose bindings each
/// fit `limit` bytes, kind by kind (single-column items first, then blocks). An item that alone exceeds it is refused,
/// naming the system.
fn split_parts<T: Scalar>(
    systems: &[BatchSystem<'_, T>],
    items: &[(ItemKind, Item)],
    limit: u64,
    history_len: usize,
) -> Result<Vec<(ItemKind, Vec<Item>)>> {
    let mut parts: Vec<(ItemKind, Vec<Item>)> = Vec::new();
    let mut kinds: Vec<ItemKind> = items.iter().map(|(k, _)| *k).collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        let lanes = kind.lanes();
        let mut current: Vec<Item> = Vec::new();
        let (mut rows, mut nnz, mut mrows) = (0usize, 0usize, 0usize);
        let mut last_system = usize::MAX;
        for (_, it) in items.iter().filter(|(k, _)| *k == kind) {
            let a = systems[it.system].a;
            let fits = |r, z, m, k| {
                part_bytes::<T>(r, z, m, k, lanes, history_len)
                    .iter()
                    .all(|b| *b <= limit)
            };
            // The sizes with this item added (its matrix only once per run of its items).
            let grow = |rows: usize, nnz: usize, mrows: usize, last: usize| {
                let new_matrix = it.system != last;
                (
                    rows + a.nrows(),
                    nnz + if new_matrix { a.nnz() } else { 0 },
                    mrows + if new_matrix { a.nrows() + 1 } else { 0 },
                )
            };
            let (r2, z2, m2) = grow(rows, nnz, mrows, last_system);
            if !current.is_empty() && !fits(r2, z2, m2, current.len() + 1) {
                parts.push((kind, std::mem::take(&mut current)));
                (rows, nnz, mrows, last_system) = (0, 0, 0, usize::MAX);
            }
            let (r2, z2, m2) = grow(rows, nnz, mrows, last_system);
            if !fits(r2, z2, m2, current.len() + 1) {
                return Err(too_large(it.system, a.nrows(), limit));
            }
            current.push(*it);
            (rows, nnz, mrows, last_system) = (r2, z2, m2, it.system);
        }
        if !current.is_empty() {
            parts.push((kind, current));
        }
    }
    Ok(parts)
}

fn too_large(system: usize, n: usize, limit: u64) -> KrylovError {
    KrylovError::InvalidOption(format!(
        "system {system} of the batch (n = {n}) alone exceeds the {limit}-byte storage binding \
         of a batched part; solve it with `krylov solve`, which splits large systems \
         differently",
    ))
}
