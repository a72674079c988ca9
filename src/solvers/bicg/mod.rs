//! Biconjugate gradients on the GPU (paper 001 §3.1): [`Pipelined`] and [`Classical`] side by
//! side, f32 and f64, optionally preconditioned (the preconditioned BiCG of the Templates book
//! that the CPU reference [`crate::cpu::bicg`] runs): Jacobi (M = D) in both variants, and a
//! factored M (ILU(0), IC(0)) in the classical variant and in the **concurrent** variant that
//! pipelined BiCG becomes with one (paper 004; see [below](#with-a-factored-m-classical-vs-concurrent)).
//!
//! # The algorithm
//!
//! Both variants run the CPU reference's recurrence; the comments of `bicg/classical.rs` and
//! `bicg/pipelined.rs` name these lines:
//!
//! ```text
//!  0  r₀ = b − A x₀,  r̃₀ = r₀
//!     for i = 1, 2, …
//!  1      z = M⁻¹ r_{i−1},  z̃ = M⁻ᵀ r̃_{i−1}            (M = D: z̃ = D⁻¹ r̃)
//!  2      ρ_{i−1} = ⟨z, r̃_{i−1}⟩                       breakdown "<r, r~>" if ρ ≈ 0
//!  3      if i = 1:  p₁ = z,  p̃₁ = z̃
//!  4      else:      β = ρ_{i−1}/ρ_{i−2},  p_i = z + β p_{i−1},  p̃_i = z̃ + β p̃_{i−1}
//!  5      q_i = A p_i,  q̃_i = Aᵀ p̃_i
//!  6      α = ρ_{i−1}/⟨p̃_i, q_i⟩                        breakdown "<p~, Ap>" if ⟨p̃,q⟩ ≈ 0
//!  7      x_i = x_{i−1} + α p_i
//!  8      r_i = r_{i−1} − α q_i,  r̃_i = r̃_{i−1} − α q̃_i
//!  9      stop if ‖r_i‖₂ ≤ threshold
//! ```
//!
//! **Aᵀ is stored explicitly.** The matrix is transposed once on the host
//! ([`Csr::transpose`], an O(nnz) counting sort) and uploaded next to A, so both products of
//! line 5 run the fast non-transposed row-per-thread kernel (paper 004 §3.1: a transposed SpMV
//! on the non-transposed storage scatters and is 2–7× slower). The memory this costs is
//! reported as `transpose_bytes` in the [`SolveReport`](crate::solvers::SolveReport).
//!
//! # The launches
//!
//! Setup: `bicg_init` (line 0 and the first stage of ρ₀ = ⟨D⁻¹r₀, r̃₀⟩, its norms and ‖r₀‖²),
//! then the first direction kernel (pipelined) or lines 1 and 3 as copies / two `diag_scale`
//! (classical; + a `bicg_finish` in `device` mode).
//!
//! | lines         | pipelined                                  | classical                                        |
//! |---------------|--------------------------------------------|--------------------------------------------------|
//! | 5, 6a         | step 1, `bicg_direction_spmv`              | `spmv_csr` ×2, `dot` ×3 (⟨p̃,q⟩, ‖p̃‖², ‖q‖²)       |
//! | 6b            | step 2, `bicg_update`                      | `bicg_finish` (`device` only)                    |
//! | 7–8, 9a       | step 2                                     | `axpy` ×3 (x, r, r̃), `dot` (‖r‖²)                |
//! | 1, 2a         | step 2 (z = D⁻¹r formed inside its sums)   | [`diag_scale` ×2], `dot` ×2 (⟨z,r̃⟩, ‖r̃‖²) [+ `dot` ‖z‖²] |
//! | 2b, 9b        | step 1                                     | `bicg_finish` (`device` only)                    |
//! | 3–4           | step 1 (inside the products' gathers)      | `xpay` ×2 (p, p̃)                                 |
//! | per iteration | **2**                                      | `paper` **13** (**16** with Jacobi), `device` **15** (**18**) |
//!
//! (a: first reduction stage, per workgroup; b: second stage and the tests.)
//!
//! * **Pipelined**: two fused kernels per iteration, one host transfer per iteration in
//!   `paper` mode (none inside a batch in `device` mode). Step 1 forms the new directions
//!   p = z + βp, p̃ = z̃ + βp̃ on the fly inside both products (every gather recomputes its
//!   entry; the directions ping-pong between two buffers). Fewer launches are not possible
//!   without changing the algorithm: the products need every entry of the new directions (a
//!   grid-wide dependency) and the update needs the finished ⟨p̃,q⟩, so there are two global
//!   synchronisation points per iteration, hence two launches. (Three would be the
//!   straightforward split: a separate direction update before the SpMV; fusing it into the
//!   gathers saves that launch and one pass over four vectors.) The paper-mode readback holds
//!   both slots of partial sums, the device-mode batch reads only the residual history.
//! * **Classical**, the way a BLAS-based code (paper 001 §3.3 uses CUBLAS dots and a few
//!   custom kernels) runs it, one inner product per `dot` launch. In `paper` mode the host
//!   finishes every inner product: two readbacks and two uploads (⟨p̃,q⟩; then [ρ, ρ_old]) per
//!   iteration, the xpays of iteration i recorded at the start of i + 1 (13j − 2 launches for
//!   j iterations). In `device` mode two `bicg_finish` launches (dot finish + breakdown test;
//!   the second also records ‖r‖) keep the scalars on the GPU.
//!
//! # With a factored M: classical vs concurrent
//!
//! With ILU(0) or IC(0), M⁻¹ is two sparse triangular solves (L then U) and M⁻ᵀ two more (Uᵀ
//! then Lᵀ, uploaded transposed so every solve reads rows; IC(0): M⁻ᵀ = M⁻¹). The classical
//! variant records them one after the other, as it records everything. But the two
//! recurrences of BiCG are independent within an iteration (paper 004 §3: the A-recurrence
//! r, z, p, q and the Aᵀ-recurrence r̃, z̃, p̃, q̃ meet only in ρ and ⟨p̃,q⟩), so the
//! **concurrent** variant (what `Variant::Pipelined` runs with a factored M,
//! `bicg/concurrent.rs`) gives both the same launches: the residuals are kept stacked,
//! [r; r̃] (2n entries), one solve with diag(L, Uᵀ) and one with diag(U, Lᵀ)
//! ([`StackedIlu`]) form [z; z̃] = [M⁻¹r; M⁻ᵀr̃] — level ℓ of a stacked solve is level ℓ of
//! both, a sweep covers both — and `bicg_direction_spmv` forms p, p̃ from [z; z̃] inside
//! q = A·p and q̃ = Aᵀ·p̃ as in the pipelined variant. One iteration pays for one apply.
//!
//! With D the launches of the M⁻¹ apply (stages of the L and U solves, or 2K for
//! `sweeps:K`), Dᵀ those of M⁻ᵀ (Uᵀ and Lᵀ; = D for IC(0) and for sweeps) and D_s those of
//! the stacked pair (merged stages; max(D, Dᵀ) ≤ D_s ≤ D + Dᵀ, = 2K for sweeps):
//!
//! | lines         | classical + ILU                                  | concurrent + ILU                          |
//! |---------------|--------------------------------------------------|-------------------------------------------|
//! | 5, 6a         | `spmv_csr` ×2, `dot` ×3                           | `bicg_direction_spmv` (with 2b, 9b, 3–4)  |
//! | 6b            | `bicg_finish` (`device` only)                    | `bicg_update` (with 7–8)                  |
//! | 7–8, 9a       | `axpy` ×3, `dot` (‖r‖²)                           | `bicg_update`; 9a in `bicg_rho`           |
//! | 1             | M⁻¹ apply (**D**), then M⁻ᵀ apply (**Dᵀ**)        | stacked apply (**D_s**)                   |
//! | 2a            | `dot` ×3 (⟨z,r̃⟩, ‖r̃‖², ‖z‖²)                      | `bicg_rho`                                |
//! | 2b, 9b        | `bicg_finish` (`device` only)                    | `bicg_direction_spmv`                     |
//! | 3–4           | `xpay` ×2                                        | `bicg_direction_spmv`                     |
//! | per iteration | `paper` **14 + D + Dᵀ**, `device` **16 + D + Dᵀ** | **3 + D_s** (both modes)                  |
//! | transfers     | `paper`: 2 readbacks + 2 uploads                 | `paper`: 1 readback                       |
//!
//! (`device` mode: one readback per batch in both; `paper` classical: the last iteration's
//! xpays are never recorded, (14 + D + Dᵀ)·j − 2 launches for j iterations.) Measured on
//! sherman4 (levels: 22 narrow levels per factor, one stage each, D = Dᵀ = D_s = 2):
//! classical 18 (`paper`) / 20 (`device`) launches per iteration, concurrent 5; with
//! `sweeps:3` (D = Dᵀ = D_s = 6) 26 / 28 vs 9. Setup of the concurrent variant: `bicg_init`,
//! two buffer copies r → [r; r] (not launches, not counted as transfers), the stacked apply,
//! `bicg_rho`, `bicg_direction_spmv`. The report says which ran: the concurrent variant
//! reports `variant: pipelined` with a first note "concurrent BiCG: …" naming D_s, D, Dᵀ and
//! its launches per iteration; `preconditioner` describes M as for any solve.
//!
//! Fewer launches would need the apply fused into the kernels around it: a level schedule's
//! stages are grid-wide dependencies (and the narrow ones single-workgroup sweeps), and ρ
//! needs every entry of z before β (hence `bicg_rho`, the one launch more than the pipelined
//! variant's 2 + apply).
//!
//! # Stops
//!
//! Both variants detect the CPU reference's failures with the same thresholds
//! ([`crate::cpu::is_breakdown`]): breakdown of [`BREAKDOWN_RHO`] (ρ ≈ 0 relative to ‖z‖‖r̃‖,
//! the paper's "method fails") and of [`BREAKDOWN_PTQ`] (α's denominator ≈ 0 relative to
//! ‖p̃‖‖q‖), reported as [`StopReason::Breakdown`] by name; a non-finite ρ, ⟨p̃,q⟩, α or ‖r‖
//! is [`StopReason::NonFinite`]. In `paper` mode the host tests the finished sums; in `device`
//! mode the kernels test them and stop (status word, quantity code in `state[3]`), so
//! iterations recorded after a stop change nothing. After the loop the true residual
//! ‖b − Ax‖/‖b‖ is recomputed in f64 (with `bicg_init` on the GPU for f64, on the CPU for f32)
//! and guards convergence as for CG (the shared driver: restarts from x when it misses, never
//! a false convergence).
//!
//! [`StopReason::Breakdown`]: crate::solvers::StopReason::Breakdown
//! [`StopReason::NonFinite`]: crate::solvers::StopReason::NonFinite

mod classical;
mod concurrent;
mod pipelined;

pub use classical::Classical;
pub use pipelined::Pipelined;

use std::cell::Cell;

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{GpuStatus, Params, SolverBuffers, solver_kernel};
use crate::gpu::{Batch, Engine, GpuMatrix, Kernel};
use crate::matrix::Csr;
use crate::precond::ilu::StackedIlu;
use crate::solvers::{Method, Monitor, Precond, Solution, SolveOptions, Variant, WorkCounts};

use super::driver::{GpuIterative, LoopEnd, Run, StopCheck, TrueResidual, add, drive};
use super::system::{GpuSystem, Start, finish, solver_buffers_for, start_gpu_solve};

/// Name of the breakdown of ρ = ⟨r, r̃⟩ (⟨z, r̃⟩ preconditioned), as the CPU reference says it.
pub const BREAKDOWN_RHO: &str = "<r, r~>";
/// Name of the breakdown of α's denominator ⟨p̃, A p⟩.
pub const BREAKDOWN_PTQ: &str = "<p~, Ap>";

// Scalars (SolverBuffers::scalars): ρ, ρ_old (adjacent: FLAG_SHIFT), tol² (2, the driver's),
// ⟨p̃,q⟩, the breakdown factor ε_T·BREAKDOWN_FACTOR.
const S_RHO: u32 = 0;
const S_RHO_OLD: u32 = 1;
const S_PTQ: u32 = 3;
const S_EPS: usize = 4;
// Quantity codes in state[3] (BICG_CODE_* in the shaders).
const CODE_RHO: u32 = 1;
const CODE_PTQ: u32 = 2;
// Kernel flags beyond the shared FLAG_* (BICG_* in the shaders).
const FLAG_CHECKS: u32 = 16;
const FLAG_PACKED: u32 = 32;
const FLAG_ALPHA: u32 = 64;
/// The concurrent variant: `bicg_update` and `bicg_direction_spmv` use the stacked [r; r̃]
/// and [z; z̃] (BICG_STACKED in the shaders).
const FLAG_STACKED: u32 = 128;
// Partial slots of the pipelined kernels: (ρ, ‖z‖², ‖r̃‖², ‖r‖²) and (⟨p̃,q⟩, ‖p̃‖², ‖q‖²).
const PIPELINED_SLOTS: u32 = 2;
// Classical partial slots: ⟨p̃,q⟩, ‖p̃‖², ‖q‖², then ⟨z,r̃⟩, ‖z‖², ‖r̃‖², ‖r‖² (the order of
// bicg_init's packed vec4). bicg_init writes its packed sums to slot 0.
const SLOT_PTQ: u32 = 0;
const SLOT_RHO: u32 = 3;
const SLOT_RR: u32 = 6;
const CLASSICAL_SLOTS: u32 = 7;

/// BiCG's vectors beside the shared system (A, b, x, M): Aᵀ and the shadow recurrence.
struct System<T> {
    core: GpuSystem<T>,
    at: GpuMatrix<T>,
    r: wgpu::Buffer,
    rt: wgpu::Buffer,
    /// Directions: a ping-pong pair (pipelined); the classical variant uses `[0]`.
    p: [wgpu::Buffer; 2],
    pt: [wgpu::Buffer; 2],
    q: wgpu::Buffer,
    qt: wgpu::Buffer,
}

impl<T: Scalar> System<T> {
    /// Uploads Aᵀ (the one-time transpose, in A's format: both products then use the
    /// non-transposed kernel) and allocates the work vectors.
    fn new(engine: &Engine, core: GpuSystem<T>, a: &Csr<T>, max_padding: f64) -> Result<Self> {
        let v = |label| core.vector(engine, label);
        Ok(System {
            at: GpuMatrix::upload_with(engine, &a.transpose(), core.a.format(), max_padding)?,
            r: v("r")?,
            rt: v("r~")?,
            p: [v("p")?, v("p (ping-pong)")?],
            pt: [v("p~")?, v("p~ (ping-pong)")?],
            q: v("q = Ap")?,
            qt: v("q~ = A^T p~")?,
            core,
        })
    }

    /// The launch parameters every BiCG kernel starts from.
    fn params(&self, bufs: &SolverBuffers) -> Params {
        Params {
            n: self.n as u32,
            groups: bufs.groups,
            jacobi: self.jacobi() as u32,
            ..Default::default()
        }
    }
}

super::system::derefs_to_gpu_system!(System);

/// What both variants share: the system, line 0 (`bicg_init`), and the stop checks (the
/// true-residual guard re-runs `bicg_init`, ‖r‖² in component 3 of slot 0).
struct Common<'a, T> {
    engine: &'a Engine,
    sys: &'a System<T>,
    bufs: &'a SolverBuffers,
    init: Kernel,
    bg_init: wgpu::BindGroup,
    guard: TrueResidual<'a, T>,
}

impl<'a, T: Scalar> Common<'a, T> {
    fn new(
        engine: &'a Engine,
        b: &'a [T],
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
    ) -> Result<Self> {
        let init = solver_kernel::<T>(engine, "bicg_init", sys.a.shader_config(engine))?;
        let params = engine.uniform_from("bicg init params", &sys.params(bufs));
        let mut vecs = vec![
            (8, &sys.x),
            (9, &sys.b),
            (10, &sys.r),
            (11, &sys.rt),
            (12, sys.dinv()),
        ];
        vecs.extend(sys.a.bindings(false));
        let bg_init = bufs.bind(engine, &init, &params, &vecs);
        let guard = TrueResidual {
            b,
            x: &sys.x,
            bufs,
            op: &sys.a,
            b_gpu: &sys.b,
            ds: Default::default(),
            comp: 3,
        };
        Ok(Common {
            engine,
            sys,
            bufs,
            init,
            bg_init,
            guard,
        })
    }

    fn groups(&self) -> u32 {
        self.bufs.groups
    }

    /// Line 0: r = b − Ax, r̃ = r and the first stage of ρ₀, ‖z‖², ‖r̃‖², ‖r‖² (packed, slot 0).
    fn record_init(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.init, &self.bg_init, self.groups());
    }

    /// A setup batch: line 0, then the variant's first directions (`record_first`).
    fn begin_setup<'e>(
        &self,
        engine: &'e Engine,
        record_first: impl FnOnce(&mut Batch<'e>),
    ) -> Batch<'e> {
        let mut batch = engine.begin("bicg setup");
        self.record_init(&mut batch);
        record_first(&mut batch);
        batch
    }

    /// Reads back `slots` slots of partial sums from slot `first` (one readback).
    fn read_slots(&self, batch: Batch<'_>, first: u32, slots: u32) -> Result<Vec<T>> {
        let g = self.groups() as usize;
        batch.submit_and_read(
            &self.bufs.partials,
            4 * g * first as usize,
            4 * g * slots as usize,
        )
    }

    /// The end of a `device`-mode setup: submits and reads the residual the GPU recorded,
    /// `None` when it stopped instead (a negative entry, never written).
    fn read_first_residual(&self, batch: Batch<'_>, run: &Run<'_>) -> Result<Option<f64>> {
        let v: Vec<T> = batch.submit_and_read(&self.bufs.history, run.history.len(), 1)?;
        Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
    }
}

impl<T: Scalar> StopCheck for Common<'_, T> {
    /// A near-breakdown restarts from x with r₀* := r (the driver bounds the restarts).
    fn restarts_on_breakdown(&self) -> bool {
        true
    }

    fn true_relative(&self, engine: &Engine) -> Result<f64> {
        self.guard
            .relative(engine, &|batch| self.record_init(batch))
    }

    /// A device-mode stop: the breakdown's quantity comes from the code in `state[3]`.
    fn stop_reason(&self, status: GpuStatus) -> LoopEnd {
        match status {
            GpuStatus::Converged => LoopEnd::Converged,
            GpuStatus::Breakdown => {
                let code = self
                    .engine
                    .read::<u32>(&self.bufs.state, 3, 1)
                    .map(|v| v[0])
                    .unwrap_or(0);
                LoopEnd::Breakdown(
                    match code {
                        CODE_RHO => BREAKDOWN_RHO,
                        CODE_PTQ => BREAKDOWN_PTQ,
                        _ => "unknown quantity",
                    }
                    .into(),
                )
            }
            _ => LoopEnd::NonFinite,
        }
    }
}

/// Line 2's test on the host, as the kernels make it: ρ non-finite, or numerically zero
/// relative to ‖z‖‖r̃‖ (as [`crate::cpu::bicg`]).
fn check_rho<T: Scalar>(rho: f64, zz: f64, rtrt: f64) -> Option<LoopEnd> {
    if !rho.is_finite() {
        Some(LoopEnd::NonFinite)
    } else if crate::cpu::is_breakdown::<T>(rho, zz.sqrt() * rtrt.sqrt()) {
        Some(LoopEnd::Breakdown(BREAKDOWN_RHO.into()))
    } else {
        None
    }
}

/// Line 6's tests on the host: ⟨p̃,q⟩ and α = ρ/⟨p̃,q⟩ (evaluated in `T`, as the device does).
fn check_ptq<T: Scalar>(ptq: f64, ptpt: f64, qq: f64, rho: f64) -> Option<LoopEnd> {
    if !ptq.is_finite() {
        Some(LoopEnd::NonFinite)
    } else if crate::cpu::is_breakdown::<T>(ptq, ptpt.sqrt() * qq.sqrt()) {
        Some(LoopEnd::Breakdown(BREAKDOWN_PTQ.into()))
    } else if !(T::from_f64(rho) / T::from_f64(ptq)).is_finite() {
        Some(LoopEnd::NonFinite)
    } else {
        None
    }
}

/// Why the next `paper` iteration must not start: a stop the host found in the sums of the
/// previous one (or of the setup), a cancel, or the iteration cap.
fn paper_stop(
    pending: &Cell<Option<LoopEnd>>,
    run: &Run<'_>,
    opts: &SolveOptions,
) -> Option<LoopEnd> {
    pending.take().or_else(|| run.paper_stop(opts.max_iter))
}

/// Line 9 on the host: records ‖r‖ = √rr in the history and tests it.
fn residual_stop(run: &mut Run<'_>, rr: f64, threshold: f64) -> Option<LoopEnd> {
    run.push(rr.sqrt());
    if !rr.is_finite() {
        Some(LoopEnd::NonFinite)
    } else if rr.sqrt() <= threshold {
        Some(LoopEnd::Converged)
    } else {
        None
    }
}

/// Adds the launches and transfers since `before` to the loop's counts.
fn count_loop(engine: &Engine, run: &mut Run<'_>, before: &WorkCounts) {
    run.loop_counts = add(
        &run.loop_counts,
        &engine.counters().snapshot().since(before),
    );
}

/// Solves A x = b by BiCG on the GPU (`opts.variant` picks [`Classical`] or [`Pipelined`],
/// `opts.check_mode` the convergence checking, `opts.precond` none, Jacobi, ILU(0) or IC(0);
/// `Pipelined` with ILU(0)/IC(0) runs the concurrent variant of the module docs).
///
/// Errors: the input checks of [`validate_system`](crate::solvers::validate_system) (a zero
/// diagonal with Jacobi is [`KrylovError::ZeroDiagonal`](crate::KrylovError::ZeroDiagonal)),
/// f64 on a device without SHADER_F64
/// ([`KrylovError::MissingFeature`](crate::KrylovError::MissingFeature)), buffers over the
/// device limits. A breakdown is a result (`reason: breakdown`, the quantity named), never a
/// convergence.
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::{ConvectionField, convection_diffusion_3d};
/// use krylov_wgpu::solvers::{bicg, Method, Precond, SolveOptions, Variant};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = convection_diffusion_3d::<f32>(10, 1.0, ConvectionField::Circular);
/// let b = vec![1.0f32; a.nrows()];
/// let opts = SolveOptions {
///     method: Method::Bicg,
///     variant: Variant::Pipelined,
///     precond: Precond::Jacobi,
///     rtol: 1e-5,
///     ..Default::default()
/// };
/// let sol = bicg::solve(&engine, &a, &b, None, &opts, &mut ())?;
/// assert!(sol.report.converged);
/// assert_eq!(sol.report.dispatches_per_iteration, 2.0);
/// assert!(sol.report.transpose_bytes.is_some());
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
    } = start_gpu_solve(engine, Method::Bicg, a, b, x0, opts)?;
    // A factored M in the pipelined variant runs the concurrent variant, which applies M
    // itself (stacked: M⁻¹ and M⁻ᵀ in one apply); the shared system then carries M = I.
    let concurrent = opts.variant == Variant::Pipelined
        && matches!(opts.precond, Precond::Ilu0 | Precond::Ic0 | Precond::Ilut);
    let core = if concurrent {
        let plain = SolveOptions {
            precond: Precond::None,
            ..opts.clone()
        };
        GpuSystem::upload(engine, a, b, x0, &plain, &mut report)?
    } else {
        GpuSystem::upload(engine, a, b, x0, opts, &mut report)?
    };
    let m = match concurrent {
        true => Some(StackedIlu::new(engine, a, opts.precond, opts.trisolve)?),
        false => None,
    };
    let sys = System::new(engine, core, a, opts.max_padding)?;
    report.transpose_bytes = Some(sys.at.bytes());
    let slots = match opts.variant {
        Variant::Pipelined => PIPELINED_SLOTS,
        Variant::Classical => CLASSICAL_SLOTS,
        v @ (Variant::Fused | Variant::Workgroup | Variant::Cooperative | Variant::P1) => {
            return Err(crate::base::options::variant_refused(Method::Bicg, v));
        }
    };
    let bufs = solver_buffers_for::<T>(
        engine,
        sys.n,
        sys.a.passes().max(sys.at.passes()),
        slots,
        opts,
        &mut report,
    )?;
    let eps = crate::cpu::BREAKDOWN_FACTOR * T::PRECISION.epsilon();
    engine.write(&bufs.scalars, S_EPS, &[T::from_f64(eps)]);
    let stacked = match &m {
        Some(m) => {
            let stacked = concurrent::Stacked::new(engine, &sys, &bufs, m)?;
            record_concurrent(&mut report, m, opts, stacked.apply_launches());
            Some(stacked)
        }
        None => None,
    };
    let common = Common::new(engine, b, &sys, &bufs)?;
    let solver: Box<dyn GpuIterative<T> + '_> = match opts.variant {
        Variant::Pipelined => Box::new(Pipelined::new(
            engine,
            &common,
            opts.check_mode,
            stacked.as_ref(),
        )?),
        // (Fused and workgroup were refused with the slots above.)
        Variant::Classical
        | Variant::Fused
        | Variant::Workgroup
        | Variant::Cooperative
        | Variant::P1 => Box::new(Classical::new(engine, &common)?),
    };
    drive(
        engine,
        solver.as_ref(),
        &common,
        &bufs,
        opts,
        threshold,
        None,
        monitor,
        &mut report,
        &counts0,
    )?;
    finish(engine, &sys.x, sys.n, report, &counts0)
}

/// The concurrent variant's report: M (its info and shift notice, as `GpuSystem` records a
/// preconditioner it applies) and, first among the notes, that it ran and what it launches.
fn record_concurrent<T: Scalar>(
    report: &mut crate::solvers::SolveReport,
    m: &StackedIlu<T>,
    opts: &SolveOptions,
    apply_launches: usize,
) {
    let info = m.info();
    report.notes.insert(
        0,
        format!(
            "concurrent BiCG: the A- and A^T-recurrences share every launch (paper 004): \
             M^-1 r and M^-T r~ of {} by one stacked apply ({} launches of trisolve {}, where \
             the two applies one after the other take {} + {}), A p and A^T p~ by one \
             bicg_direction_spmv: {} launches per iteration",
            opts.precond,
            apply_launches,
            m.trisolve(),
            m.separate_dispatches()[0],
            m.separate_dispatches()[1],
            3 + apply_launches
        ),
    );
    if let Some(notice) = info.shift_notice.clone() {
        report.notes.push(notice);
    }
    report.preconditioner = Some(info);
}
