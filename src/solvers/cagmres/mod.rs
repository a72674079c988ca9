//! CA-GMRES(s, m) on the GPU (paper 002; issue #17), f32 and f64: the communication-avoiding
//! GMRES whose cycle logic is the CPU reference's ([`crate::cpu::cagmres`], one
//! `run_cycles` over a backend), with the n-length work in six kernels (`shaders/cagmres/`):
//!
//! | step (per block of s basis vectors) | kernels | reductions | host syncs |
//! |---|---|---|---|
//! | matrix powers: s SpMVs, monomial or Newton (real pairs) | s × `ca_powers` | 0 | 0 |
//! | BOrth: C_i = Q_prevᵀW, W −= Q_prev C_i, twice | 2 × (`ca_block_dots` + `ca_block_finish` + `ca_block_update`) | 2 | 0 |
//! | TSQR CholQR / SVQR: G = WᵀW, host R, Q = W R⁻¹ | `ca_block_dots` + `ca_block_finish`, `ca_block_update` (deferred CholQR: + `ca_cholqr`) | 1 | 1 (deferred: 0) |
//! | TSQR CholQR2: that twice | 2 × that | 2 | 2 (deferred: 0) |
//! | deferred CholQR / CholQR2: BOrth's second pass and the first CholQR in one | `ca_block_dots` of [Q, W]ᵀW + `ca_block_finish`, `ca_cholqr` of WᵀW − C₂ᵀC₂, one `ca_block_update` W·T − Q·C₂T | 1 for both (so 2 + the TSQR's − 1 per block) | 0 |
//! | TSQR MGS / CGS / CGS2: per column, projections and the norm on the device | 3 launches per inner-product batch | s(s+1)/2, 2s−1, 3s−2 | 0 |
//! | TSQR CAQR: each leaf's Householder QR (Q_i in place, R_i out), host QR of the stacked R_i = Q̂ R, Q = diag(Q_i) Q̂ | `ca_tsqr_leaf`, `ca_tsqr_apply` | 1 | 1 |
//! | the block's C and R read by the host (H, the estimates) | — | — | 1 (shared with the TSQR's) |
//!
//! **Deferred cycles.** With MGS, CGS, CGS2 (every reduction finished on the device) and with
//! CholQR and CholQR2 (their s × s Cholesky and R⁻¹ done on the device by `ca_cholqr`, one
//! thread), a cycle's blocks need no host value until the cycle ends: the GPU records all of
//! them (each block's C, R and norms in its own slots of the cycle buffer) and reads them back
//! once; the shared cycle logic then takes its decisions block by block as it would have,
//! from the same numbers. The restart residual before the cycle (below) is recorded with
//! its blocks and comes back in the same readback, so a full cycle costs 1 host sync instead
//! of 1 + m/s·(the TSQR's syncs) (the last restart of a solve, after a cycle whose estimate
//! met the threshold, is read alone: see `run_cycles`). A cycle that the one before
//! predicts to converge early records only its first blocks (twice the vectors the last
//! cycle's rate needs, and one block more) and the rest, should it need them, in a second
//! readback. The blocks recorded past the one where the cycle ended are wasted work,
//! counted in `iterations_recorded` (and the cycles' `recorded`). A
//! Cholesky that fails on the device (a pivot at the rounding level: the block is numerically
//! rank deficient) flags its block, and the host runs that cycle again block by block with
//! its own CholQR → SVQR fallback. The Newton basis's Arnoldi cycle (blocks of one vector,
//! CGS2) is deferred too, each step in 7 launches and 2 reductions: the SpMV, BOrth's first
//! pass, and its second pass fused with the normalisation (`ca_block_dots` of [Q, w]ᵀw, then
//! `ca_block_update` with ν² = wᵀw − ‖Qᵀw‖²). SVQR and CAQR need the host once per block.
//!
//! Per cycle: the restart residual r = b − Ax and ‖r‖ (`ca_powers` with (−1, 0, 1) and one
//! reduction: 1 sync, shared with a deferred cycle's), q₀ = r/‖r‖ on the device, and
//! x += Q y (`ca_block_update`, one upload of y). So a full cycle has 1 + m/s·(2 + the
//! TSQR's, one fewer with CholQR/CholQR2) reductions and 1 + m/s·max(1, the TSQR's syncs) host syncs as the algorithm
//! counts them — [`crate::cpu::cagmres::ca_counts_per_cycle`], asserted by the tests — and
//! 1 sync on the GPU when the cycle is deferred. With the Newton basis the first cycle is a standard GMRES(m) (Arnoldi with CGS2:
//! blocks of one vector) whose Ritz values, Leja-ordered, are the shifts.
//!
//! The host does what is s × s or m × m: Cholesky, SVQR's eigen-decomposition and R⁻¹, the
//! Hessenberg reconstruction, the least squares, the Ritz values. It reads C, R (or the Gram
//! matrix) once per block; nothing n-long crosses the bus inside the loop. Launches are
//! recorded into one batch and submitted when the host needs a value.
//!
//! Right preconditioning runs the cycles on A·M⁻¹ and updates x = x₀ + M⁻¹Q y: Jacobi is
//! fused into `ca_powers` (the SpMV reads D⁻¹v) and into x's update; a factored M (ILU(0),
//! IC(0), ILUT) is applied before each SpMV of the matrix powers (a copy out of the pool
//! and its triangular solves; `ca_powers` reads the result) and to Q y before it is added to
//! x. `--side left` is refused.
//!
//! CAQR (`--tsqr caqr`) is the CPU reference's tree cut to two levels: g leaves of consecutive
//! rows (one workgroup each, g ≤ [`CAQR_MAX_LEAVES`] and every leaf at least s rows), each a
//! Householder QR in the workgroup (`ca_tsqr_leaf`: W_i = Q_i R_i, Q_i explicit in place),
//! then on the host the Householder QR of the (g·s) × s stack [R_1; …; R_g] = Q̂ R (nalgebra,
//! f64) read in the block's one host sync, Q̂ uploaded, and Q = diag(Q_i) Q̂ row by row
//! (`ca_tsqr_apply`). Its orthogonality is O(ε) whatever cond(W) (no Gram matrix is formed),
//! where CholQR2 needs κ ≲ ε^(−1/2).
//!
//! The per-block orthogonality error ‖I − QᵀQ‖ is measured by the CPU reference and by
//! [`tsqr_block`]; the solve reports ‖I − QᵀQ‖_F of its last cycle's basis in
//! `orthogonality_loss`.
//!
//! Every `ca_block_dots` above is one of three kernels with the same partial sums
//! (`CaSystem::record_dots`): with eight rows or more per thread of a tile (n ≳ 2e6 on the
//! default grid) `ca_block_dots_pairs`; below, `ca_block_dots_staged` wherever its stage
//! holds the block (up to 96 padded columns: every block of m ≤ 60 at s ≤ 16), a workgroup
//! per row chunk reading each column once through workgroup memory; otherwise
//! `ca_block_dots` (a workgroup per 4 × 4 tile and row chunk, the columns shared through
//! the cache).
//!
//! Files: `backend.rs` (the GPU's `CaBackend`, which the shared cycle logic drives),
//! `system.rs` with `system/` (storage, the recording of the kernels, BOrth and TSQR,
//! submits and reads), `layout.rs` (the cycle buffer's slots).

mod backend;
pub(crate) mod layout;
pub(crate) mod system;

use backend::{GpuBackend, defers};
pub(crate) use backend::{block_result, finite};

pub use layout::CAQR_MAX_LEAVES;
pub use system::MAX_S;

use std::time::Instant;

use nalgebra::DMatrix;

use system::CaSystem;

use super::driver::{Run, kernel_times_since};
use super::system::{Start, start_gpu_solve, zero_rhs};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::{Precision, Scalar};
use crate::base::{Basis, CaReport, Tsqr};
use crate::cpu::cagmres::leja::Shift;
use crate::cpu::cagmres::tsqr::TsqrReport;
use crate::cpu::cagmres::{CaBackend, Control, operator_scale, run_cycles, summarise};
use crate::gpu::Engine;
use crate::matrix::Csr;
use crate::solvers::{Method, Monitor, Precond, Side, Solution, SolveOptions, StopReason};

/// Checks what CA-GMRES on the GPU supports before anything is uploaded.
fn check_supported(opts: &SolveOptions) -> Result<()> {
    opts.ca().validate()?;
    if opts.side == Side::Left && opts.precond != Precond::None {
        return Err(KrylovError::InvalidOption(format!(
            "CA-GMRES applies --precond {} on the right (x = M⁻¹y); --side left is not built \
             for it",
            opts.precond
        )));
    }
    Ok(())
}

/// Solves A x = b by CA-GMRES(s, m) on the GPU: s = `opts.s_step`, m = `opts.restart` (a
/// multiple of s), `opts.basis`, `opts.tsqr`. The report is the common one plus
/// `cagmres` (shifts, per-cycle basis condition number, TSQR and fallbacks, reductions and
/// syncs); `iterations` counts the basis vectors the solution used, as GMRES counts steps
/// (`iterations_recorded`: those computed, a block's tail past the converged column included).
///
/// Errors: the input checks of every GPU solve, bad CA options, a preconditioner on the left,
/// s > [`MAX_S`], n < 2, a pool larger than the kernels can bind. On a system with m + 1 > n
/// unknowns m (and s) shrink ([`crate::base::CaOptions::fitted_to`], said in `notes`).
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{cagmres, Method, SolveOptions};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f64>(64);
/// let b = vec![1.0; a.nrows()];
/// let opts = SolveOptions { method: Method::CaGmres, s_step: 5, restart: 30, rtol: 1e-8, ..Default::default() };
/// let sol = cagmres::solve(&engine, &a, &b, None, &opts, &mut ())?;
/// assert!(sol.report.converged);
/// println!("{:?}", sol.report.cagmres.unwrap().reductions_per_cycle);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn solve<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    check_supported(opts)?;
    // On a system smaller than a cycle, m (and s) shrink as GMRES's m does.
    let (fit, fit_note) = opts.ca().fitted_to(a.nrows())?;
    let opts = &SolveOptions {
        s_step: fit.s,
        restart: fit.m,
        ..opts.clone()
    };
    let Start {
        counts0,
        mut report,
        threshold,
    } = start_gpu_solve(engine, Method::CaGmres, a, b, x0, opts)?;
    report.notes.extend(fit_note);
    let ca = opts.ca();
    let b_norm = report.b_norm;
    if b_norm == 0.0 {
        // A x = 0 is solved by x = 0 exactly (as the CPU reference does).
        return Ok(zero_rhs(report, a.nrows()));
    }
    let sys = CaSystem::upload(engine, a, b, x0, opts, &mut report)?;
    // The restart residual's coefficients (−1, 0, 1) sit at 1 … 3 of the cycle buffer.
    sys.write(1, &[-1.0, 0.0, 1.0])?;
    // `ca_cholqr`'s pivot tolerance (s + √n)·ε·G_kk with the ε the host's Cholesky uses
    // (`cpu::cagmres::tsqr::cholesky`, f64), so that a deferred cycle falls back exactly
    // where an eager one would (an f32 Gram matrix included).
    sys.write(sys.lay.eps, &[f64::EPSILON])?;
    sys.warm_up(ca.basis == Basis::Newton, ca.tsqr);
    let mut rep = CaReport {
        options: ca,
        shifts: Vec::new(),
        scale: operator_scale(a, opts.precond != Precond::None),
        cycles: Vec::new(),
        reductions_per_cycle: None,
        syncs_per_cycle: None,
    };
    let ctl = Control {
        tau: threshold,
        max_iter: opts.max_iter,
        b_norm,
    };
    monitor.on_loop_start();
    let start = Instant::now();
    let times0 = engine.kernel_times();
    let mut run = Run::new(monitor);
    let before = engine.counters().snapshot();
    let mut hist = Vec::new();
    let (stop, discarded) = {
        let mut be = GpuBackend::new(&sys, &mut run);
        let stop = run_cycles(&mut be, &ctl, &mut hist, &ca, &mut rep)?;
        be.checkpoint(&hist);
        (stop, be.discarded)
    };
    sys.flush()?;
    // The work done: a deferred cycle computes all its blocks before the host decides.
    let recorded: usize = rep.cycles.iter().map(|c| c.recorded).sum();
    run.recorded = recorded.max(run.iterations());
    run.batch_size = ca.s;
    run.cycles = Some(rep.cycles.len());
    run.loop_counts = engine.counters().snapshot().since(&before);
    report.loop_seconds = start.elapsed().as_secs_f64();

    let x = sys.read_x()?;
    let true_abs = match T::PRECISION {
        Precision::F32 => sys.true_residual_ds()?.norm2::<T>(engine)?.sqrt(),
        Precision::F64 => {
            sys.record_residual();
            sys.read(sys.lay.rr, 1)?[0].sqrt()
        }
    };
    let true_rel = true_abs / b_norm;
    let (reason, detail) = match stop.reason {
        StopReason::Converged if !crate::cpu::confirms_convergence(true_abs, threshold) => (
            StopReason::ResidualGap,
            format!(
                "residual gap at iteration {}: the least-squares estimate met the threshold \
                 {threshold:.3e} but the true |b - Ax| = {true_abs:.3e} (|b - Ax|/|b| = \
                 {true_rel:.3e}) does not",
                run.iterations()
            ),
        ),
        other => (other, stop.detail.clone()),
    };
    // The last cycle's basis, or what a discarded cycle left of its own (a basis of one
    // cycle either way).
    let last_columns = rep
        .cycles
        .last()
        .map_or(0, |c| c.columns)
        .min(discarded.unwrap_or(usize::MAX));
    report.orthogonality_loss = sys.orthogonality_loss(last_columns)?;
    summarise(&mut rep);
    report.notes.insert(
        0,
        format!(
            "CA-GMRES(s = {}, m = {}): {} basis, TSQR {}; iterations count the basis vectors \
             the solution used (iterations_recorded the ones computed)",
            ca.s, ca.m, ca.basis, ca.tsqr
        ),
    );
    report.cagmres = Some(rep);
    report.seconds = start.elapsed().as_secs_f64();
    report.kernel_times = kernel_times_since(&times0, &engine.kernel_times());
    run.close(&mut report, reason, detail, true_rel, stop.restarts);
    report.replacements = stop.replacements;
    report.counts = engine.counters().snapshot().since(&counts0);
    Ok(Solution { x, report })
}

/// The GPU's matrix powers kernel on its own (the test oracle's counterpart of
/// [`crate::cpu::cagmres::powers::matrix_powers`]): `steps` `ca_powers` launches from `v`,
/// returning [v₀ = v, v₁, …, v_steps] read back from the device. Needs n ≥ steps + 2.
pub fn matrix_powers_gpu<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    v: &[T],
    steps: usize,
    shifts: &[Shift],
    sigma: f64,
) -> Result<Vec<Vec<T>>> {
    crate::cpu::cagmres::powers::check_shifts(shifts)?;
    let opts = SolveOptions {
        method: Method::CaGmres,
        s_step: steps.clamp(1, MAX_S),
        restart: steps.max(1),
        ..Default::default()
    };
    let mut report = crate::solvers::SolveReport::new(
        Method::CaGmres,
        opts.variant,
        T::PRECISION,
        a.nrows(),
        a.nnz(),
    );
    let sys = CaSystem::upload(engine, a, v, None, &opts, &mut report)?;
    let n = a.nrows();
    engine.write(sys.pool.low(), 0, v);
    let mut unit = ();
    let mut run = Run::new(&mut unit);
    let mut be = GpuBackend::new(&sys, &mut run);
    be.powers(0, steps, shifts, sigma)?;
    sys.flush()?;
    let all: Vec<T> = engine.read(sys.pool.low(), 0, (steps + 1) * n)?;
    Ok(all.chunks(n).map(|c| c.to_vec()).collect())
}

/// The GPU's TSQR of a block W (n × s, n ≥ s + 2, s ≤ [`MAX_S`]) on its own, as the solver
/// runs it (after a BOrth against a zero vector, which leaves W as it is): (Q, R, report
/// with the measured ‖I − QᵀQ‖_F). The oracle is [`crate::cpu::cagmres::tsqr::tsqr`].
pub fn tsqr_block<T: Scalar>(
    engine: &Engine,
    w: &DMatrix<f64>,
    tsqr: Tsqr,
) -> Result<(DMatrix<f64>, DMatrix<f64>, TsqrReport)> {
    let (n, s) = w.shape();
    let opts = SolveOptions {
        method: Method::CaGmres,
        s_step: s,
        restart: s,
        tsqr,
        ..Default::default()
    };
    let sys = identity_system::<T>(engine, n, &opts)?;
    let cols: Vec<T> = w.iter().map(|&v| T::from_f64(v)).collect();
    engine.write(sys.pool.low(), n, &cols);
    let mut unit = ();
    let mut run = Run::new(&mut unit);
    let mut be = GpuBackend::new(&sys, &mut run);
    let block = be.borth(0, s, tsqr)?;
    sys.flush()?;
    let q: Vec<T> = engine.read(sys.pool.low(), n, s * n)?;
    let q = DMatrix::from_iterator(n, s, q.into_iter().map(|v| v.as_f64()));
    let mut rep = block.report;
    rep.orth_error = crate::cpu::cagmres::tsqr::orth_error(&q);
    Ok((q, block.r, rep))
}

/// The GPU's block inner products on their own (the test oracle's counterpart is the host's
/// XᵀY): D = XᵀY (nx × ny, column-major) of the columns `x` and `y` of `cols` (n × k,
/// written to the pool as the solver's basis; the ranges may overlap, as BOrth's fused
/// second pass [Q, W]ᵀW does), one `ca_block_dots*` launch and its `ca_block_finish`, read
/// back from the cycle buffer (filled with NaN before). `staged`: whether
/// `ca_block_dots_staged` may take it (where it fits and the rows are too few for
/// `ca_block_dots_pairs`; off: the tile kernels).
pub fn block_dots_gpu<T: Scalar>(
    engine: &Engine,
    cols: &DMatrix<f64>,
    x: std::ops::Range<usize>,
    y: std::ops::Range<usize>,
    staged: bool,
) -> Result<DMatrix<f64>> {
    let (n, k) = cols.shape();
    // A solver of s = ny and m ≥ k holds the columns and the products' partial sums.
    let s = y.len();
    let m = k.div_ceil(s.max(1)) * s.max(1);
    if x.is_empty() || s == 0 || s > MAX_S || x.end > k || y.end > k || n < m + 2 {
        return Err(KrylovError::InvalidOption(format!(
            "block_dots_gpu: ranges {x:?} and {y:?} (at most {MAX_S} columns) of {k} columns \
             of {n} rows (n ≥ m + 2, m = {m})"
        )));
    }
    let opts = SolveOptions {
        method: Method::CaGmres,
        s_step: s,
        restart: m,
        ..Default::default()
    };
    let sys = identity_system::<T>(engine, n, &opts)?;
    let (nx, ny) = (x.len(), y.len());
    if sys.lay.len < nx * ny {
        return Err(KrylovError::InvalidOption(format!(
            "block_dots_gpu: {nx} × {ny} products exceed the cycle buffer ({})",
            sys.lay.len
        )));
    }
    let values: Vec<T> = cols.iter().map(|&v| T::from_f64(v)).collect();
    engine.write(sys.pool.low(), 0, &values);
    sys.write(0, &vec![f64::NAN; nx * ny])?;
    sys.staged_dots.set(staged);
    sys.record_dots(x.start, nx, y.start, ny, 0, None);
    let d = sys.read(0, nx * ny)?;
    Ok(DMatrix::from_column_slice(nx, ny, &d))
}

/// The system the kernel hooks above run on: A = I of n rows, b = 0, `opts`' s and m (its
/// pool holds the columns they write).
fn identity_system<'e, T: Scalar>(
    engine: &'e Engine,
    n: usize,
    opts: &SolveOptions,
) -> Result<CaSystem<'e, T>> {
    check_supported(opts)?;
    let eye = Csr::<T>::identity(n);
    let mut report =
        crate::solvers::SolveReport::new(Method::CaGmres, opts.variant, T::PRECISION, n, n);
    CaSystem::upload(engine, &eye, &vec![T::zero(); n], None, opts, &mut report)
}
