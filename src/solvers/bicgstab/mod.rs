//! BiCGStab on the GPU: [`ClassicalBicgstab`] and [`PipelinedBicgstab`] side by side, both
//! mirroring the CPU reference [`crate::cpu::bicgstab`] step by step (same shadow residual
//! r0* = r0, same breakdown tests, same early exit on the half step, same Jacobi right
//! preconditioning A D⁻¹ y = b with x updated along D⁻¹p and D⁻¹s).
//!
//! The algorithms of paper 000, typeset side by side there, so that a line number means the
//! same step in both (every "A v" is A·M⁻¹v with a preconditioner, and x moves along M⁻¹p,
//! M⁻¹s); the code's comments name these lines:
//!
//! ```text
//!  l.  Alg. 3 (classical)                          Alg. 4 (pipelined)
//!   1  choose x0                                   (the same up to l.11)
//!   2  p0 = r0 = b − Ax0
//!   3  choose r0* (here r0* = r0)
//!   4  compute ⟨r0,r0*⟩
//!   5  for i = 0 to convergence
//!   6    compute and store Ap_i
//!   7    compute ⟨Ap_i,r0*⟩
//!   8    α_i = ⟨r_i,r0*⟩/⟨Ap_i,r0*⟩
//!   9    s_i = r_i − α_i Ap_i
//!  10    compute and store As_i
//!  11    compute ⟨As_i,s_i⟩, ⟨As_i,As_i⟩
//!  12                                                compute ⟨As_i,r0*⟩
//!  13                                                β_i = −⟨As_i,r0*⟩/⟨Ap_i,r0*⟩
//!  14    ω_i = ⟨As_i,s_i⟩/⟨As_i,As_i⟩                (the same)
//!  15    x_{i+1} = x_i + α_i p_i + ω_i s_i           (the same)
//!  16    r_{i+1} = s_i − ω_i As_i                    (the same)
//!  17    compute ⟨r_{i+1},r0*⟩
//!  18    β_i = ⟨r_{i+1},r0*⟩/⟨r_i,r0*⟩ · α_i/ω_i
//!  19    p_{i+1} = r_{i+1} + β_i (p_i − ω_i Ap_i)    (the same)
//!  20                                                compute ⟨r_{i+1},r0*⟩
//!  21  end                                         end
//! ```
//!
//! * **Pipelined** (paper 000 §3.2, Alg. 4 with β = −⟨As,r0*⟩/⟨Ap,r0*⟩, `pipelined.rs`):
//!   exactly four fused kernels per iteration —
//!   1. `spmv_dot_bicgstab_p` (l.6–7): Ap = A·D⁻¹p + first stage of ⟨Ap,r0*⟩, ⟨Ap,Ap⟩ (and
//!      the second stage of ⟨r,r0*⟩, ⟨r,r⟩ left by kernel 4, done redundantly by every
//!      workgroup);
//!   2. `update_s_bicgstab` (l.8–9): α recomputed in every workgroup from the partial sums,
//!      s = r − αAp + first stage of ⟨s,s⟩;
//!   3. `spmv_dot_bicgstab_s` (l.10–12): As = A·D⁻¹s + first stage of ⟨As,s⟩, ⟨As,As⟩,
//!      ⟨As,r0*⟩;
//!   4. `update_xrp_bicgstab` (l.13–16, 19–20): x += αD⁻¹p + ωD⁻¹s, r = s − ωAs,
//!      p = r + β(p − ωAp) + first stage of ⟨r,r0*⟩, ⟨r,r⟩.
//!
//!   `paper` mode: one readback per iteration, right after kernel 3, of the partial sums of
//!   all slots (⟨r,r0*⟩ ⟨r,r⟩ | ⟨Ap,r0*⟩ ⟨Ap,Ap⟩ | ⟨s,s⟩ | ⟨As,s⟩ ⟨As,As⟩ ⟨As,r0*⟩, laid out
//!   contiguously), finished on the host, which checks breakdowns and convergence with the
//!   paper's ‖r‖² = ⟨s,s⟩ − 2ω⟨s,As⟩ + ω²⟨As,As⟩; no uploads (α, β, ω are recomputed on the
//!   device from the partial sums). Kernels 4 and 1 of an iteration are recorded in front of
//!   kernels 2 and 3 of the next one. Like the CPU reference — and unlike the paper — an
//!   estimate that claims convergence is confirmed by the directly reduced ⟨r,r⟩: that costs
//!   one more readback (of ⟨r,r⟩'s partials, after kernels 4 and 1) per claim, normally one
//!   per solve.
//!   `device` mode: an iteration is recorded as kernels 2, 3, 4, 1 (kernel 1 records the
//!   residual of the iteration kernel 4 finished), zero transfers inside a batch.
//! * **Classical** (paper 000 Alg. 3, `classical.rs`) the way a BLAS-based code runs it: 2
//!   `spmv_csr`, 7 `dot` (⟨Ap,r0*⟩, ⟨Ap,Ap⟩ for the breakdown scale, ⟨s,s⟩ for the early
//!   exit, ⟨As,s⟩, ⟨As,As⟩, ⟨r,r⟩, ⟨r,r0*⟩), 5 `axpy` (s = r − αAp in place of r, x += αp̂,
//!   x += ωŝ, r = s − ωAs, p −= ωAp) and 1 `xpay` (p = r + βp), + 2 applies of M (p̂ = D⁻¹p,
//!   ŝ = D⁻¹s: `diag_scale`) with Jacobi: 15 launches per iteration (17 with Jacobi).
//!   `paper` mode: the host finishes every inner product — 4 readbacks per iteration
//!   (⟨Ap,r0*⟩ & ⟨Ap,Ap⟩; ⟨s,s⟩; ⟨As,s⟩ & ⟨As,As⟩; ⟨r,r⟩ & ⟨r,r0*⟩) and 3 uploads of the
//!   scalars it derives (⟨Ap,r0*⟩; ⟨As,s⟩ & ⟨As,As⟩; ρ & β). `device` mode: 3
//!   `bicgstab_finish` launches more (18, or 20 with Jacobi) do the second reduction stages,
//!   the scalars and the breakdown tests on the GPU.
//!
//! **Left preconditioning** (`--side left`, Jacobi or a factored M; classical variant — a
//! pipelined request runs it, the note says so) runs the recurrences on M⁻¹A x = M⁻¹b as the
//! CPU reference does: the setup adds the apply r̂ = M⁻¹(b − Ax) and `bicgstab_left_init`
//! (r̂, r0*, p and the first stage of ⟨r̂,r0*⟩, ⟨r̂,r̂⟩) after `bicgstab_init`; each product
//! is the SpMV into a scratch vector (p̂, or `s`) followed by the apply, and x moves along p
//! and s themselves — the same launches per iteration as on the right. The monitored
//! residual ‖r̂‖ is held to τ_L = max(rtol·‖M⁻¹b‖, atol) (one submit and readback at
//! set-up); the driver's true-residual guard tightens τ_L and restarts from x when ‖b − Ax‖
//! misses the threshold ([`crate::cpu::side::tighten`], at most
//! [`MAX_GUARD_RESTARTS`](crate::cpu::side::MAX_GUARD_RESTARTS) times, each in
//! `restart_log`).
//!
//! Loop counts (`report.loop_counts`) of a solve that converges after j iterations (J = 1
//! with Jacobi, else 0; `device` mode: per iteration recorded, batches included):
//!
//! | variant, mode | launches | global reductions | readbacks | uploads |
//! |---|---|---|---|---|
//! | pipelined, paper | 4j (4j − 1 when it ends on the half step) | 4j (4j − 2) | j, + 1 per convergence claim of the estimate | 0 |
//! | pipelined, device | 4 per iteration | 4 per iteration | 1 per batch | 0 |
//! | classical, paper | (15 + 2J)j − 2 ((15 + 2J)j − 9 − J on the half step) | 7j (7j − 4) | 4j (4j − 2) | 3j − 1 (3j − 2) |
//! | classical, device | 18 + 2J per iteration | 7 per iteration | 1 per batch | 0 |
//!
//! Global reductions (`reductions_per_iteration`, `tests/reduction_counts.rs`): the four
//! reduction phases of Alg. 4 (one per fused kernel) against the seven `dot`s of Alg. 3.
//!
//! A kernel changes the status word only where every workgroup of its dispatch stops anyway
//! (or where what the others still do no longer matters): a workgroup that starts after the
//! leader stored a stop skips its work, so the early exit of kernel 4 (x += αD⁻¹p in every
//! workgroup) hands its residual to kernel 1 to record instead of stopping itself.
//!
//! Breakdowns are reported by name like the CPU reference: `"<r, r0*>"`, `"<Ap, r0*>"`,
//! `"omega"` (on the GPU: `STATUS_BREAKDOWN` with the quantity's code in `state[3]`). After
//! the loop the true residual ‖b − Ax‖/‖b‖ is recomputed in f64 (on the GPU with the
//! `bicgstab_init` kernel for f64 solves, on the CPU for f32 solves); if it misses the
//! tolerance the solve restarts from x (at most [`MAX_RESTARTS`] times) and otherwise reports
//! `residual_gap` — never a false convergence.

mod classical;
mod paper;
mod pipelined;

pub use classical::ClassicalBicgstab;
pub use pipelined::PipelinedBicgstab;

use paper::Partials;

use crate::base::error::KrylovError;
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{GpuStatus, Params, SolverBuffers, solver_kernel};
use crate::gpu::{Batch, Engine, Kernel};
use crate::matrix::Csr;
use crate::solvers::{CheckMode, Method, Monitor, Precond, Side, Solution, SolveOptions, Variant};

pub use super::driver::MAX_RESTARTS;
use super::driver::{GpuIterative, LeftTarget, LoopEnd, Run, StopCheck, TrueResidual, drive};
use super::system::{GpuSystem, Start, finish, solver_buffers_for, start_gpu_solve};

// Scalars (the `scalars` buffer, N_SCALARS entries here; index 2 is tol², set by the driver).
const S_RHO: u32 = 0;
const S_BETA: u32 = 1;
const S_AS_S: u32 = 4;
const S_AS_AS: u32 = 5;
const S_APR: u32 = 6;
const S_EPS: usize = 9;
const S_ONE: u32 = 10;
const N_SCALARS: usize = 12;

// Kernel flags of the bicgstab kernels (above the shared FLAG_* bits).
const FLAG_FIRST: u32 = 16;
const FLAG_HALF_STEP: u32 = 32;
const FLAG_PAPER: u32 = 64;

// `bicgstab_finish` steps (`params.dst`).
const STEP_SETUP: u32 = 0;
const STEP_AP: u32 = 1;
const STEP_AS: u32 = 2;
const STEP_R: u32 = 3;

// Partial slots of classical BiCGStab: one inner product per `dot` launch. bicgstab_init
// writes (⟨r,r0*⟩, ⟨r,r⟩) into slot 0.
const SLOT_RHO: u32 = 0;
const SLOT_RR: u32 = 1;
const SLOT_APR: u32 = 2;
const SLOT_AP2: u32 = 3;
const SLOT_SS: u32 = 4;
const SLOT_AS_S: u32 = 5;
const SLOT_AS_AS: u32 = 6;
const CLASSICAL_SLOTS: u32 = 7;
// Pipelined: ⟨r,r0*⟩ ⟨r,r⟩ | ⟨Ap,r0*⟩ ⟨Ap,Ap⟩ | ⟨s,s⟩ | ⟨As,s⟩ ⟨As,As⟩ ⟨As,r0*⟩.
const PIPELINED_SLOTS: u32 = 4;

/// The quantity a `STATUS_BREAKDOWN` names, by the code the kernels store in `state[3]`.
fn breakdown_quantity(code: u32) -> &'static str {
    match code {
        1 => "<r, r0*>",
        2 => "<Ap, r0*>",
        3 => "omega",
        _ => "unknown",
    }
}

/// BiCGStab's vectors beside the shared system (A, b, x, M).
struct System<T> {
    core: GpuSystem<T>,
    r: wgpu::Buffer,
    rstar: wgpu::Buffer,
    p: wgpu::Buffer,
    ap: wgpu::Buffer,
    /// s (pipelined); ŝ = M⁻¹s with a preconditioner (classical, whose s lives in r).
    s: wgpu::Buffer,
    as_: wgpu::Buffer,
}

impl<T: Scalar> System<T> {
    fn new(engine: &Engine, core: GpuSystem<T>) -> Result<Self> {
        Ok(System {
            r: core.vector(engine, "r")?,
            rstar: core.vector(engine, "r0*")?,
            p: core.vector(engine, "p")?,
            ap: core.vector(engine, "ap")?,
            s: core.vector(engine, "s")?,
            as_: core.vector(engine, "as")?,
            core,
        })
    }
}

super::system::derefs_to_gpu_system!(System);

/// One solver kernel bound to its buffers, launched over `groups` workgroups.
struct Launch {
    kernel: Kernel,
    bind_group: wgpu::BindGroup,
    groups: u32,
}

impl Launch {
    fn record(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.kernel, &self.bind_group, self.groups);
    }
}

/// Records `launches` in order.
fn record_all(batch: &mut Batch<'_>, launches: &[Launch]) {
    for launch in launches {
        launch.record(batch);
    }
}

/// What both variants share: the system, the buffers, the init kernel (Alg. 3/4 l.1–4, also
/// the f64 true residual) and the reading of a stop ([`StopCheck`]).
struct Common<'a, T> {
    engine: &'a Engine,
    sys: &'a System<T>,
    bufs: &'a SolverBuffers,
    /// The launch parameters every kernel starts from (n, workgroups, D⁻¹ fused or not).
    base: Params,
    init: Launch,
    guard: TrueResidual<'a, T>,
    /// Left preconditioning (M ≠ I): the method runs on M⁻¹A x = M⁻¹b.
    left: bool,
}

impl<'a, T: Scalar> Common<'a, T> {
    fn new(
        engine: &'a Engine,
        b: &'a [T],
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
        left: bool,
    ) -> Result<Self> {
        let init = solver_kernel::<T>(engine, "bicgstab_init", sys.a.shader_config(engine))?;
        let base = Params {
            n: sys.n as u32,
            groups: bufs.groups,
            jacobi: sys.jacobi() as u32,
            ..Default::default()
        };
        let params = engine.uniform_from("bicgstab params", &base);
        let mut e = vec![
            (1, &bufs.partials),
            (4, &params),
            (8, &sys.x),
            (9, &sys.b),
            (10, &sys.r),
            (11, &sys.rstar),
            (12, &sys.p),
        ];
        e.extend(sys.a.bindings(false));
        let init = Launch {
            bind_group: engine.bind_group_at(&init, &e),
            kernel: init,
            groups: bufs.groups,
        };
        let guard = TrueResidual {
            b,
            x: &sys.x,
            bufs,
            op: &sys.a,
            b_gpu: &sys.b,
            ds: Default::default(),
            comp: 1,
        };
        Ok(Common {
            engine,
            sys,
            bufs,
            base,
            init,
            guard,
            left,
        })
    }

    /// A uniform holding `p` (one counted upload).
    fn params(&self, p: Params) -> wgpu::Buffer {
        self.engine.uniform_from("bicgstab params", &p)
    }

    /// `kernel` over the solver's workgroups with the common bindings 0–4 and `vecs`.
    fn launch(
        &self,
        kernel: &Kernel,
        params: &wgpu::Buffer,
        vecs: &[(u32, &wgpu::Buffer)],
    ) -> Launch {
        Launch {
            kernel: kernel.clone(),
            bind_group: self.bufs.bind(self.engine, kernel, params, vecs),
            groups: self.bufs.groups,
        }
    }

    /// Reads `slots` partial slots from slot `first` (one readback) of a recorded batch.
    fn read_slots(&self, batch: Batch<'_>, first: u32, slots: usize) -> Result<Partials<T>> {
        let g = self.bufs.groups as usize;
        let parts =
            batch.submit_and_read(&self.bufs.partials, 4 * g * first as usize, 4 * g * slots)?;
        Ok(Partials { parts, groups: g })
    }

    /// Ends a setup batch (l.1–4 recorded): `device` mode reads the history entry it
    /// recorded (`None`: the GPU stopped); `paper` mode reads slot 0 and returns ‖r0‖² with
    /// ρ0 = ⟨r0,r0*⟩.
    fn end_setup(&self, batch: Batch<'_>, run: &Run<'_>, mode: CheckMode) -> Result<SetupEnd<T>> {
        if mode == CheckMode::Device {
            let v: Vec<T> = batch.submit_and_read(&self.bufs.history, run.history.len(), 1)?;
            return Ok(SetupEnd::Device(
                (v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()),
            ));
        }
        let parts = self.read_slots(batch, 0, 1)?;
        Ok(SetupEnd::Paper {
            rho: parts.get(0, 0),
            rr: parts.f64(0, 1),
        })
    }
}

/// How a setup batch ended (see [`Common::end_setup`]).
enum SetupEnd<T> {
    Device(Option<f64>),
    Paper { rho: T, rr: f64 },
}

impl<T: Scalar> StopCheck for Common<'_, T> {
    /// A near-breakdown restarts from x with r₀* := r (the driver bounds the restarts).
    fn restarts_on_breakdown(&self) -> bool {
        true
    }

    /// ‖b − Ax‖₂/‖b‖₂ in f64: `bicgstab_init` recomputes r and ⟨r,r⟩ (f64 solves).
    fn true_relative(&self, engine: &Engine) -> Result<f64> {
        self.guard
            .relative(engine, &|batch| self.init.record(batch))
    }

    /// Why the GPU stopped: a breakdown is named by the code in `state[3]`.
    fn stop_reason(&self, status: GpuStatus) -> LoopEnd {
        match status {
            GpuStatus::Converged => LoopEnd::Converged,
            GpuStatus::Breakdown => match self.engine.read::<u32>(&self.bufs.state, 3, 1) {
                Ok(code) => LoopEnd::Breakdown(breakdown_quantity(code[0]).into()),
                Err(_) => LoopEnd::Breakdown(breakdown_quantity(0).into()),
            },
            _ => LoopEnd::NonFinite,
        }
    }
}

/// Solves A x = b by BiCGStab on the GPU (`opts.variant` picks [`ClassicalBicgstab`] or
/// [`PipelinedBicgstab`], `opts.check_mode` the convergence checking, `opts.precond` Jacobi
/// right preconditioning or none).
///
/// Errors: the input checks of [`validate_system`](crate::solvers::validate_system) (a zero
/// diagonal with Jacobi is [`crate::KrylovError::ZeroDiagonal`]),
/// f64 on a device without SHADER_F64
/// ([`crate::KrylovError::MissingFeature`]), buffers over the
/// device limits. A breakdown is a result (`reason: breakdown`, naming `<r, r0*>`,
/// `<Ap, r0*>` or `omega`).
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::{convection_diffusion_3d, ConvectionField};
/// use krylov_wgpu::solvers::{bicgstab, Method, SolveOptions, Variant};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = convection_diffusion_3d::<f32>(16, 0.1, ConvectionField::Circular);
/// let b = vec![1.0f32; a.nrows()];
/// let opts = SolveOptions {
///     method: Method::Bicgstab,
///     variant: Variant::Pipelined,
///     rtol: 1e-5,
///     ..Default::default()
/// };
/// let sol = bicgstab::solve(&engine, &a, &b, None, &opts, &mut ())?;
/// assert!(sol.report.converged);
/// assert_eq!(sol.report.dispatches_per_iteration, 4.0);
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
    } = start_gpu_solve(engine, Method::Bicgstab, a, b, x0, opts)?;
    let sys = System::new(
        engine,
        GpuSystem::upload(engine, a, b, x0, opts, &mut report)?,
    )?;
    let slots = match opts.variant {
        Variant::Pipelined => PIPELINED_SLOTS,
        Variant::Classical => CLASSICAL_SLOTS,
        v @ (Variant::Fused | Variant::Workgroup | Variant::Cooperative | Variant::P1) => {
            return Err(crate::base::options::variant_refused(Method::Bicgstab, v));
        }
    };
    let mut bufs =
        solver_buffers_for::<T>(engine, sys.n, sys.a.passes(), slots, opts, &mut report)?;
    // More scalars than the shared default; ε·BREAKDOWN_FACTOR and 1 are constants.
    let mut scalars = vec![T::zero(); N_SCALARS];
    scalars[S_EPS] = T::from_f64(crate::cpu::BREAKDOWN_FACTOR * T::PRECISION.epsilon());
    scalars[S_ONE as usize] = T::one();
    bufs.scalars = engine.storage_from("bicgstab scalars", &scalars)?;
    let left = opts.side == Side::Left && sys.m.kind() != Precond::None;
    let common = Common::new(engine, b, &sys, &bufs, left)?;
    let (solver, left): (Box<dyn GpuIterative<T> + '_>, _) = match opts.variant {
        Variant::Pipelined if left => {
            return Err(KrylovError::Unsupported(
                "left-preconditioned BiCGStab runs the classical variant on the GPU (the fused \
                 pipelined kernels apply only a diagonal M on the right)"
                    .into(),
            ));
        }
        Variant::Pipelined => (
            Box::new(PipelinedBicgstab::new(&common, opts.check_mode)?),
            None,
        ),
        // (Fused and workgroup were refused with the slots above.)
        Variant::Classical
        | Variant::Fused
        | Variant::Workgroup
        | Variant::Cooperative
        | Variant::P1 => {
            let classical = ClassicalBicgstab::new(&common)?;
            // Left: τ_L = max(rtol·‖M⁻¹b‖, atol) (one submit and readback).
            let left = classical
                .left_norm_b()?
                .map(|scale| LeftTarget::new(scale, opts));
            (Box::new(classical), left)
        }
    };
    drive(
        engine,
        solver.as_ref(),
        &common,
        &bufs,
        opts,
        threshold,
        left,
        monitor,
        &mut report,
        &counts0,
    )?;
    finish(engine, &sys.x, sys.n, report, &counts0)
}
