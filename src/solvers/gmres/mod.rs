//! Restarted GMRES(m) on the GPU — the "simpler GMRES" of Walker & Zhou as in paper 000
//! §3.3 — classical ([`Variant::Classical`], Alg. 5), pipelined ([`Variant::Pipelined`],
//! Alg. 6), fused ([`Variant::Fused`]: Alg. 6's step in two launches) and p(1)
//! ([`Variant::P1`]: one launch per step, `p1.rs`), in f32 and f64,
//! with or without right preconditioning (Jacobi fused into the kernels; ILU(0)/IC(0)
//! applied between launches by the classical variant). It mirrors the CPU
//! reference [`crate::cpu::gmres`] step by step (same basis, same R and ξ, same Walker–Zhou
//! estimate, same cycle truncation, breakdown rule and restarts).
//!
//! # The algorithm (paper 000, Alg. 5/6; the line numbers the code's comments cite)
//!
//! ```text
//! l.2     r = b − A x                      gmres_residual         (cycles.rs)
//! l.3–4   ρ0 = ‖r‖, v_0 = r/ρ0
//! l.6     for i = 1 … m:                   one step               (classical.rs, pipelined.rs, fused.rs)
//! l.7       v_i = A v_{i−1}                (A D⁻¹ v_{i−1} with Jacobi)
//! l.8–13    R_{j,i} = ⟨v_j, v_i⟩, v_i −= Σ_j R_{j,i} v_j, j < i   (MGS, CGS or CGS2)
//! l.14      R_{i,i} = ‖v_i‖, v_i /= R_{i,i}                      (breakdown: R_{i,i} ≈ 0)
//! l.15      ξ_i = ⟨r, v_i⟩;  ‖r_i‖ = √(‖r_{i−1}‖² − ξ_i²)      (Walker–Zhou estimate)
//! l.16      r −= ξ_i v_i                   (Alg. 5 only; applied lazily, in step i + 1)
//! l.21    solve R η = ξ                    host, f64              (least_squares.rs)
//! l.22    x += D⁻¹(Σ_i η_i v_{i−1})        gmres_update_x         (Alg. 5: with r and η̃)
//! ```
//!
//! The restart loop around it, with the true-residual checks, is in `cycles.rs`; the pool
//! and the cycle buffer are laid out in `basis.rs`.
//!
//! # Storage
//!
//! The Krylov basis v_0 … v_m lives in ONE storage buffer, the *pool*, followed by the
//! vectors r (the residual), z (D⁻¹v with Jacobi), x, b and, for the classical variant, w:
//! vector k at offset k·n, (m + 5)·n entries (pipelined) or (m + 6)·n (classical). (With x and
//! b in the pool no GMRES kernel binds more than 8 storage buffers, WebGPU's default limit.)
//! The pool is never split: if it exceeds the adapter's `max_storage_buffer_binding_size` the
//! solve is refused with [`KrylovError::BufferTooLarge`] (choose a smaller restart length).
//! R (upper triangular, m×m), ξ, the per-step estimates and the update coefficients η live in
//! a small *cycle buffer* on the GPU (bound where solver kernels bind their scalars); it is
//! what the host reads back, once per cycle.
//!
//! # Pipelined GMRES (Alg. 6, classical Gram–Schmidt)
//!
//! Four fused kernels per step (`gmres_spmv_dot`, `gmres_basis_dots`, `gmres_gs_update`,
//! `gmres_normalize`; what each does is tabled in `pipelined.rs`). Launches per step: **2 in
//! step 1, 4 from step 2 on**, as paper 000 states — 4k − 2 for a cycle of k ≥ 2 steps (the
//! step-2 launch of `gmres_basis_dots` has the empty range j = 1 … 0; it costs one idle
//! dispatch per cycle and keeps the structure the paper describes). No host transfer inside the
//! Gram–Schmidt process. With [`GramSchmidt::Cgs2`](crate::solvers::GramSchmidt::Cgs2) every step from the second
//! re-orthogonalises once: `gmres_basis_dots` over j = 1 … i−1 and a second `gmres_gs_update`
//! (adding to R), so 2, 6, 6, … launches (6k − 4).
//!
//! Global reductions (`reductions_per_iteration`): every one of the four kernels starts one,
//! except step 2's idle `gmres_basis_dots` and, with CGS2, the first `gmres_gs_update` (the
//! second starts ‖w‖²): 2 in step 1, then 3, 4, 4, … (CGS; 4k − 2 for k ≥ 2 steps) or 4, 5,
//! 5, … (CGS2; 5k − 4), + 1 per cycle for the restart's ‖r‖². `syncs_per_cycle`: 1 in
//! `device` mode, k + 2 in `paper` mode (restart residual, k step records, R).
//!
//! Per cycle: `gmres_residual` (r = b − Ax, z = D⁻¹r, first stage of ‖r‖²: the true residual
//! at every restart) and, from the second cycle on, `gmres_update_x` (x += D⁻¹ Σ η_i v_{i−1},
//! the update of the previous cycle in one kernel, after one upload of η).
//!
//! * `device` mode: one submit per cycle — [update of the previous cycle] + residual + the m
//!   steps — and ONE readback of the cycle buffer (R, ξ, estimates, ρ0), no transfer inside the
//!   cycle. The kernels themselves finish ξ_{i−1} in step i, keep the Walker–Zhou estimate and
//!   stop the rest of the cycle (later launches do nothing) once it meets the threshold, the
//!   truncation or a breakdown; a cycle whose restart residual already meets the threshold does
//!   nothing at all. The host finishes the last ξ, solves R η = ξ in f64 and uploads η (one
//!   upload per cycle). After a cycle whose estimate met the threshold the host needs the true
//!   residual before recording more steps: that update + residual go alone, with one readback
//!   of the partial sums of ‖r‖². Per cycle: 1 readback + 1 upload (+1 readback at the end).
//! * `paper` mode (paper 000's scheme): the host reads the restart residual (1 readback), then
//!   per step one readback of that step's record (R_{i,i}, ‖A v_{i−1}‖² and the partial sums of
//!   ξ_i, finished on the host: the paper's monitoring transfer), then R once (1 readback), and
//!   uploads η (1 upload). The kernels are the same; the host decides.
//!
//! # Fused GMRES (Alg. 6 in two launches per step)
//!
//! The pool keeps w_i = R_{i,i} v_i unnormalised and every kernel divides by R_{i,i} where it
//! reads v_i, so the normalisation of step i (a global reduction) is finished by the first
//! launch of step i + 1, which also forms every inner product of its product over the rows
//! it wrote: `gmres_scale_spmv_dots` (close step i − 1, w = A v_{i−1}, all ⟨v_j, w⟩ and ‖w‖²)
//! and `gmres_gs_update` (R_{j,i}, w −= Σ R_{j,i} v_j, ‖w‖² and ⟨r, w⟩), tabled in
//! `fused.rs`. Launches: **2 per step** and 1 per cycle that closes its last step (2k + 1 for
//! k steps against pipelined's 4k − 2); CGS2 adds `gmres_basis_dots` and a second update from
//! step 2 (4 per step). Global reductions: 2 per step (3 with CGS2 from step 2), + 1 per
//! cycle. `paper` mode closes each step in its own launch (3 per step) and reads its record
//! (R_{i,i}, ξ_i finished on the device) once per step. The update of x divides η_i by
//! R_{i−1,i−1}; `orthogonality_loss` divides the Gram matrix by the norms. Same cycles, stop
//! tests and reports as pipelined GMRES, whose CPU reference it shares.
//!
//! # p(1)-GMRES (one launch per step)
//!
//! A second basis u_j = A v_{j−1} by recurrence lets the product of step i read u_{i−1},
//! which the previous launch finished; R_{i,i} comes from Pythagoras and is corrected one
//! launch later by the explicit norm of v_i (`p1.rs` tables the kernel). Launches: **1 per
//! step** and 1 per cycle that closes its last step; 1 global reduction per step (+ 1 per
//! cycle); `paper` mode closes each step in its own launch. A step whose R_{i,i} is lost to
//! cancellation ends the cycle early (a restart, counted and noted); after
//! [`P1_MAX_LOST_CYCLES`](crate::cpu::gmres::P1_MAX_LOST_CYCLES) such cycles, or one that
//! left the restart residual where it was, the solve goes on as fused GMRES. Its CPU twin is [`crate::cpu::gmres::p1`].
//!
//! # Classical GMRES (Alg. 5) as a conventional GPU library runs it
//!
//! One BLAS-like launch per operation on pool vectors, the inner products as a first stage
//! (`gmres_basis_dots`) plus a one-workgroup second stage (`gmres_finish`, device-side scalars)
//! in `device` mode, or a readback finished on the host (and, where the device needs the value,
//! an upload) in `paper` mode (`classical.rs`). Step i:
//!
//! | | launches (`device`) | launches / readbacks / uploads (`paper`) |
//! |---|---|---|
//! | w = A v_{i−1} (+ `gmres_basis_diag` with Jacobi; + the apply's `a` launches with ILU) | 1 (+1, +a) | 1 (+1, +a) / 0 / 0 |
//! | ‖w‖² (for the breakdown test): dot + finish | 2 | 1 / 1 / 0 |
//! | MGS, per j < i: dot + finish + axpy | 3 | 2 / 1 / 1 |
//! | CGS (i ≥ 2): all dots + finish + update (GEMV) | 3 | 2 / 1 / 1 |
//! | CGS2 (i ≥ 2): twice that | 6 | 4 / 2 / 2 |
//! | R_{i,i}: dot + finish, v_i = w/R_{i,i} | 3 | 2 / 1 / 1 |
//! | r −= ξ_{i−1} v_{i−1} (i ≥ 2, Alg. 5 l.16, applied lazily) | 1 | 1 / 0 / 1 |
//! | ξ_i = ⟨r, v_i⟩: dot + finish (`paper`: ξ_i sent up in step i + 1, for l.16) | 2 | 1 / 1 / 0 |
//!
//! Global reductions of step i (`reductions_per_iteration`; one per `gmres_basis_dots`
//! launch, none per `gmres_finish`, the same in both modes): 3 in step 1 (‖w‖², R_{i,i}, ξ_i),
//! then i + 2 (MGS), 4 (CGS), 5 (CGS2); + 1 per cycle (the restart's ‖r‖²).
//!
//! so `device`: 8 launches in step 1, then 3i + 6 (MGS), 12 (CGS), 15 (CGS2) — at least the
//! seven of paper 000; `paper`: 5 launches / 3 readbacks / 1 upload in step 1, then
//! 2i + 4 / i + 2 / i + 1 (MGS), 8 / 4 / 3 (CGS), 10 / 5 / 4 (CGS2). Per cycle: residual +
//! (device) finish of ρ0 + v_0 = r/ρ0 (paper: 1 readback + 1 upload of ρ0 instead of the
//! finish) + the update of the previous cycle. In `device` mode R and ξ are read back once per
//! cycle with the same fused submit as above; in `paper` mode the host already has them.
//!
//! **With a factored M** (ILU(0)/IC(0), right preconditioning: x = x0 + M⁻¹V η) the steps
//! multiply A by z = M⁻¹v_{i−1}: the apply's triangular solves bind whole buffers, so v_{i−1}
//! is copied out of the pool and z back in (two buffer copies on the GPU, no host transfer)
//! around its `a` launches (the report's `preconditioner.dispatches_per_apply`). The update of
//! x becomes u = η_r r + Σ η_i v_{i−1} into z (`gmres_update_x` storing), z = M⁻¹u, x += z (a
//! second `gmres_update_x`): 2 + a launches and two copies per cycle. A pipelined request
//! with a factored M runs this classical variant (the fused kernels know only D⁻¹) and says
//! so in the report's `notes`.
//!
//! **Left preconditioning** (`--side left`, Jacobi or a factored M; classical variant) runs
//! the cycles on M⁻¹A: the restart residual is r = M⁻¹(b − Ax) (`gmres_residual`, the apply
//! in place on r, then ‖r‖² by `gmres_basis_dots`), each step forms w = M⁻¹(A v_{i−1})
//! (`gmres_basis_diag` in place, or the factored apply with its two copies), and the update
//! is x += V η without M. The monitored residual is ‖M⁻¹(b − Ax)‖ against
//! τ_L = max(rtol·‖M⁻¹b‖, atol) (one submit and readback at set-up for ‖M⁻¹b‖, written into the
//! cycle buffer's threshold); a claim stands only when the true ‖b − Ax‖ (f64) confirms it,
//! otherwise τ_L is tightened as the CPU reference does ([`crate::cpu::side::tighten`]) and
//! the cycles resume from x, at most [`MAX_GUARD_RESTARTS`](crate::cpu::side::MAX_GUARD_RESTARTS)
//! times (counted in `restarts`).
//!
//! # Common to both
//!
//! `loop_counts` hold everything from the first cycle to the last update (cycle overheads
//! included); `counts` add the setup, the final true residual and the Gram matrix. The
//! history holds ρ0 and then the Walker–Zhou estimate of every step
//! ([`SolveReport::history`](crate::solvers::SolveReport::history)); `max_iter` counts steps over all cycles. A cycle ends at m
//! steps, when the estimate meets the threshold, when it falls below ε^(1/3)·ρ0 (truncation,
//! see [`crate::cpu::gmres`]) or at a breakdown (R_{i,i} ≤ ε‖A v_{i−1}‖: reported as
//! `breakdown` of `R_ii` unless the true residual then meets the threshold). A cycle whose
//! estimate converged but whose true residual did not restarts from x (at most
//! [`MAX_GAP_RESTARTS`] unproductive times, then `residual_gap`); the reported residual is
//! always the true ‖b − Ax‖/‖b‖ recomputed in f64. One difference from the CPU reference: a
//! restart whose true residual already meets the threshold ends the solve there (the CPU runs
//! one more step first).
//!
//! `orthogonality_loss` is ‖I − VᵀV‖_F (Frobenius norm) over the orthonormalised vectors
//! v_1 … v_k of the last cycle run, from a Gram matrix computed once at the end on the GPU
//! (k `gmres_basis_dots` launches, one readback; outside the per-iteration counts).
//!
//! [`KrylovError::BufferTooLarge`]: crate::KrylovError::BufferTooLarge

mod basis;
mod classical;
mod cycles;
mod fused;
mod least_squares;
mod p1;
mod pipelined;
pub mod workgroup;

use std::time::Instant;

use basis::GmresSystem;
use classical::Classical;
use cycles::{Fin, Gmres, GmresVariant};
use fused::Fused;
use least_squares::Breakdown;
use p1::P1;
use pipelined::Pipelined;
use workgroup::Workgroup;

use super::driver::{LeftTarget, Run, kernel_times_since};
use super::system::{Start, start_gpu_solve, zero_rhs};
use crate::base::error::Result;
use crate::base::scalar::{Precision, Scalar};
use crate::gpu::Engine;
use crate::matrix::Csr;
use crate::solvers::{Method, Monitor, Solution, SolveOptions, StopReason, Variant};

pub use crate::cpu::gmres::MAX_GAP_RESTARTS;
pub use basis::P1_MAX_RESTART;

/// Solves A x = b by restarted GMRES(m) on the GPU (m = `opts.restart`, default 30):
/// `opts.variant` picks classical (Alg. 5, Gram–Schmidt `opts.gs`: MGS, CGS or CGS2),
/// pipelined GMRES (Alg. 6, CGS or — with `opts.gs == Cgs2` — CGS2), fused (Alg. 6 in two
/// launches per step) or p(1)-GMRES (one launch per step), `opts.check_mode` the
/// convergence checking, `opts.precond` Jacobi right preconditioning or none. See the module
/// docs for the kernels and transfers per step and per cycle.
///
/// Errors: the input checks of [`validate_system`](crate::solvers::validate_system) (a zero
/// diagonal with Jacobi is [`KrylovError::ZeroDiagonal`](crate::KrylovError::ZeroDiagonal)),
/// f64 on a device without SHADER_F64, a basis larger than one storage binding
/// ([`KrylovError::BufferTooLarge`](crate::KrylovError::BufferTooLarge)). A breakdown, a
/// residual gap or the iteration limit are results (`report.reason`), never errors.
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::{ConvectionField, convection_diffusion_3d};
/// use krylov_wgpu::solvers::{gmres, CheckMode, Method, SolveOptions, Variant};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = convection_diffusion_3d::<f64>(12, 0.1, ConvectionField::Circular);
/// let b = vec![1.0; a.nrows()];
/// let opts = SolveOptions {
///     method: Method::Gmres,
///     variant: Variant::Pipelined,
///     check_mode: CheckMode::Device,
///     restart: 30,
///     rtol: 1e-10,
///     ..Default::default()
/// };
/// let sol = gmres::solve(&engine, &a, &b, None, &opts, &mut ())?;
/// assert!(sol.report.converged && sol.report.relative_residual <= 1e-10);
/// println!("{} steps, |I - V'V|_F = {:?}", sol.report.iterations, sol.report.orthogonality_loss);
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
    let Start {
        counts0,
        mut report,
        threshold,
    } = start_gpu_solve(engine, Method::Gmres, a, b, x0, opts)?;
    let b_norm = report.b_norm;
    if b_norm == 0.0 {
        // A x = 0 is solved by x = 0 exactly (as the CPU reference does).
        return Ok(zero_rhs(report, a.nrows()));
    }
    if opts.variant == Variant::Workgroup && report.reduction == crate::base::Reduction::Compensated
    {
        // Its sums run over at most a few thousand terms in one workgroup, plain.
        let plain = SolveOptions {
            reduction: crate::base::Reduction::Plain,
            ..opts.clone()
        };
        let mut sol = solve(engine, a, b, x0, &plain, monitor)?;
        sol.report.notes.insert(
            0,
            "reduction: the workgroup variant sums in one workgroup in plain arithmetic \
             (--reduction compensated applies to the global reductions of the other variants)"
                .into(),
        );
        return Ok(sol);
    }
    let sys = GmresSystem::upload(engine, a, b, x0, opts, threshold, &mut report)?;
    let variant: Box<dyn GmresVariant<T> + '_> = match opts.variant {
        Variant::Classical => Box::new(Classical::new(&sys)?),
        Variant::Pipelined => Box::new(Pipelined::new(&sys)?),
        Variant::Fused => Box::new(Fused::new(&sys)?),
        Variant::P1 => {
            if opts.gs == crate::solvers::GramSchmidt::Cgs2 {
                report.notes.push(
                    "p(1)-GMRES orthogonalises each step once (classical Gram-Schmidt): \
                     --gs cgs2 runs one pass"
                        .into(),
                );
            }
            Box::new(P1::new(&sys)?)
        }
        Variant::Workgroup => Box::new(Workgroup::new(&sys)?),
        v @ Variant::Cooperative => {
            return Err(crate::base::options::variant_refused(Method::Gmres, v));
        }
    };
    let gm = Gmres::new(&sys, variant)?;
    // Left preconditioning: τ_L = max(rtol·‖M⁻¹b‖, atol) (one submit and readback).
    let mut left = LeftTarget {
        tau: threshold,
        scale: b_norm,
    };
    if sys.left() {
        left = LeftTarget::new(sys.left_norm_b()?.sqrt(), opts);
        sys.set_threshold(left.tau);
    }
    monitor.on_loop_start();
    let start = Instant::now();
    let times0 = engine.kernel_times();
    let mut run = Run::new(monitor);
    run.cycles = Some(0);
    let before = engine.counters().snapshot();
    // The true-residual guard and the final residual: ‖b − Ax‖ on the GPU without a download
    // of x: in f64 by `gmres_residual` for f64 solves, in double-single by `true_residual_ds`
    // from the pool's x and b for f32 solves (`gpu::ds::TrueResidualDs`: every product exact,
    // as close to the f64 value as an f64 host loop; no O(nnz) host pass per solve).
    let ds = std::cell::OnceCell::new();
    let true_abs = || -> Result<f64> {
        Ok(match T::PRECISION {
            Precision::F32 => {
                let ds = match ds.get() {
                    Some(ds) => ds,
                    None => {
                        let made = sys.true_residual_ds()?;
                        ds.get_or_init(|| made)
                    }
                };
                ds.norm2::<T>(engine)?.sqrt()
            }
            Precision::F64 => gm.true_rr()?.sqrt(),
        })
    };
    let (mut guards, mut steps_before) = (0, 0);
    let out = match sys.left() {
        false => gm.cycles(&mut run, opts, threshold, 0)?,
        // Left: the cycles monitor ‖M⁻¹(b − Ax)‖ against τ_L; a claim stands only when the
        // true residual confirms it, else τ_L is tightened and the cycles resume from x
        // (the CPU reference's rule, `cpu::side::on_side`).
        true => loop {
            let out = gm.cycles(&mut run, opts, left.tau, steps_before)?;
            if !matches!(out.fin, Fin::Converged | Fin::EstimateConverged)
                || guards >= crate::cpu::side::MAX_GUARD_RESTARTS
                || run.iterations() >= opts.max_iter
            {
                break out;
            }
            let abs = true_abs()?;
            if crate::cpu::confirms_convergence(abs, threshold) {
                break out;
            }
            guards += 1;
            left.tau = crate::cpu::side::tighten(left.tau, threshold, abs);
            sys.set_threshold(left.tau);
            // The resumed run's restart residual replaces the last entry.
            steps_before = run.iterations();
            run.history.pop();
        },
    };
    run.loop_counts = engine.counters().snapshot().since(&before);
    report.loop_seconds = start.elapsed().as_secs_f64();
    // The loop's kernels, as `loop_counts` counts its launches: not the final residual nor
    // the Gram matrix of `orthogonality_loss` (calibration divides these times by the
    // loop's launches).
    report.kernel_times = kernel_times_since(&times0, &engine.kernel_times());

    let x = sys.read_x()?;
    let true_abs = true_abs()?;
    let true_rel = true_abs / b_norm;
    let confirmed = crate::cpu::confirms_convergence(true_abs, threshold);
    let iterations = run.iterations();
    let (reason, mut detail) = verdict(
        &out.fin, confirmed, iterations, threshold, true_abs, true_rel, sys.m,
    );
    if sys.left() {
        detail = left.detail(&detail);
    }
    report.orthogonality_loss = sys.orthogonality_loss(out.basis_k, out.basis_norms.as_deref())?;
    if out.lost_cycles > 0 {
        report
            .notes
            .push(crate::cpu::gmres::p1_lost_note(out.lost_cycles));
    }
    match out.fell_back {
        Some((step, false)) => report.notes.push(format!(
            "p(1)-GMRES: after {} cycles that ended early it went on as fused GMRES from \
             step {step} (its recurrences kept losing R_ii on this matrix)",
            crate::cpu::gmres::P1_MAX_LOST_CYCLES
        )),
        Some((step, true)) => report.notes.push(format!(
            "p(1)-GMRES: a cycle that ended early left the restart residual where it was; \
             the solve went on as fused GMRES from step {step} (p(1)'s recurrences stalled, \
             not counted as stagnation)"
        )),
        None => {}
    }
    report.seconds = start.elapsed().as_secs_f64();
    run.close(
        &mut report,
        reason,
        detail,
        true_rel,
        out.gap_restarts + guards + out.lost_cycles,
    );
    report.replacements = out.gap_restarts;
    report.counts = engine.counters().snapshot().since(&counts0);
    Ok(Solution { x, report })
}

/// The stop reason and its detail from how the cycles ended and whether the true residual
/// `true_abs` (relative: `true_rel`) confirms the threshold.
fn verdict(
    fin: &Fin,
    confirmed: bool,
    iterations: usize,
    threshold: f64,
    true_abs: f64,
    true_rel: f64,
    m: usize,
) -> (StopReason, String) {
    match *fin {
        Fin::Converged | Fin::EstimateConverged if confirmed => (
            StopReason::Converged,
            format!("converged at iteration {iterations}"),
        ),
        Fin::Converged | Fin::EstimateConverged => (
            StopReason::ResidualGap,
            format!(
                "residual gap at iteration {iterations}: the Walker-Zhou estimate met the \
                 threshold {threshold:.3e} but the true |b - Ax| = {true_abs:.3e} \
                 (|b - Ax|/|b| = {true_rel:.3e}) does not"
            ),
        ),
        Fin::Breakdown(_) if confirmed => (
            StopReason::Converged,
            format!("converged at iteration {iterations} (the Krylov space became invariant)"),
        ),
        Fin::Breakdown(Breakdown { step, rii, w_norm }) => (
            StopReason::Breakdown {
                quantity: "R_ii".into(),
            },
            format!(
                "breakdown at iteration {iterations}: R_ii = {rii:.3e}, numerically zero \
                 (scale {w_norm:.3e}) (step {step} of the cycle: A v_{} lies in the span of \
                 the basis)",
                step - 1
            ),
        ),
        Fin::MaxIterations => (
            StopReason::MaxIterations,
            format!("iteration limit {iterations} reached"),
        ),
        Fin::NonFinite(q) => (
            StopReason::NonFinite { quantity: q.into() },
            format!("non-finite {q} at iteration {iterations}"),
        ),
        Fin::Stagnation { from, to, cycles } => (
            StopReason::Stagnation,
            crate::cpu::gmres::stagnation_detail(iterations, from, to, cycles, m),
        ),
        Fin::Cancelled => (
            StopReason::Cancelled,
            format!("cancelled at iteration {iterations}"),
        ),
    }
}
