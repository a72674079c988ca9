//! Restarted GMRES(m) on the GPU — the "simpler GMRES" of Walker & Zhou as in paper 000
//! §3.3 — classical ([`Variant::Classical`], Alg. 5) and pipelined ([`Variant::Pipelined`],
//! Alg. 6), in f32 and f64, with or without Jacobi right preconditioning. It mirrors the CPU
//! reference [`crate::cpu::gmres`] step by step (same basis, same R and ξ, same Walker–Zhou
//! estimate, same cycle truncation, breakdown rule and restarts).
//!
//! # Storage
//!
//! The Krylov basis v_0 … v_m lives in ONE storage buffer, the *pool*, followed by the
//! vectors r (the residual), z (D⁻¹v with Jacobi), x, b and, for the classical variant, w:
//! vector k at offset k·n, (m + 5)·n entries (pipelined) or (m + 6)·n (classical). (With x and
//! b in the pool no GMRES kernel binds more than 8 storage buffers, WebGPU's default limit.)
//! The pool is never split: if it exceeds the adapter's `max_storage_buffer_binding_size` the
//! solve is refused with [`KrylovError::BufferTooLarge`] (choose a smaller restart length). R (upper triangular,
//! m×m), ξ, the per-step estimates and the update coefficients η live in a small *cycle
//! buffer* on the GPU (bound where solver kernels bind their scalars); it is what the host reads
//! back, once per cycle.
//!
//! # Pipelined GMRES (Alg. 6, classical Gram–Schmidt): kernels per step i of a cycle
//!
//! 1. `gmres_spmv_dot`: v_i = A·v_{i−1} (A·D⁻¹v_{i−1}) + first stage of ⟨v_{i−1}, v_i⟩ and
//!    ‖A v_{i−1}‖²; in step 1 it also finishes ρ0 = ‖r‖ and writes v_0 = r/ρ0;
//! 2. `gmres_basis_dots`: first stage of ⟨v_j, v_i⟩ for all j = 1 … i−2 at once (from step 2
//!    on; in step 2 the range is empty and the launch does nothing but keep the paper's count);
//! 3. `gmres_gs_update`: second stage of all R_{j,i}, fused with v_i −= Σ R_{j,i}v_j and the
//!    first stage of ‖v_i‖ (from step 2 on);
//! 4. `gmres_normalize`: second stage of ‖v_i‖ = R_{i,i} (+ the breakdown test), v_i /= R_{i,i},
//!    z = D⁻¹v_i, first stage of ξ_i = ⟨r, v_i⟩.
//!
//! Launches per step: **2 in step 1, 4 from step 2 on**, as paper 000 states — 4k − 2 for a
//! cycle of k ≥ 2 steps (the step-2 launch of kernel 2 has the empty range j = 1 … 0; it costs
//! one idle dispatch per cycle and keeps the structure the paper describes). No host transfer
//! inside the Gram–Schmidt process. With [`GramSchmidt::Cgs2`] every step from the second
//! re-orthogonalises once: `gmres_basis_dots` over j = 1 … i−1 and a second `gmres_gs_update`
//! (adding to R), so 2, 6, 6, … launches (6k − 4).
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
//! # Classical GMRES (Alg. 5) as a conventional GPU library runs it
//!
//! One BLAS-like launch per operation on pool vectors, the inner products as a first stage
//! (`gmres_basis_dots`) plus a one-workgroup second stage (`gmres_finish`, device-side scalars)
//! in `device` mode, or a readback finished on the host (and, where the device needs the value,
//! an upload) in `paper` mode. Step i:
//!
//! | | launches (`device`) | launches / readbacks / uploads (`paper`) |
//! |---|---|---|
//! | w = A v_{i−1} (+ `gmres_basis_diag` with Jacobi) | 1 (+1) | 1 (+1) / 0 / 0 |
//! | ‖w‖² (for the breakdown test): dot + finish | 2 | 1 / 1 / 0 |
//! | MGS, per j < i: dot + finish + axpy | 3 | 2 / 1 / 1 |
//! | CGS (i ≥ 2): all dots + finish + update (GEMV) | 3 | 2 / 1 / 1 |
//! | CGS2 (i ≥ 2): twice that | 6 | 4 / 2 / 2 |
//! | R_{i,i}: dot + finish, v_i = w/R_{i,i} | 3 | 2 / 1 / 1 |
//! | r −= ξ_{i−1} v_{i−1} (i ≥ 2, Alg. 5 l.16, applied lazily) | 1 | 1 / 0 / 1 |
//! | ξ_i = ⟨r, v_i⟩: dot + finish (`paper`: ξ_i sent up in step i + 1, for l.16) | 2 | 1 / 1 / 0 |
//!
//! so `device`: 8 launches in step 1, then 3i + 6 (MGS), 12 (CGS), 15 (CGS2) — at least the
//! seven of paper 000; `paper`: 5 launches / 3 readbacks / 1 upload in step 1, then
//! 2i + 4 / i + 2 / i + 1 (MGS), 8 / 4 / 3 (CGS), 10 / 5 / 4 (CGS2). Per cycle: residual +
//! (device) finish of ρ0 + v_0 = r/ρ0 (paper: 1 readback + 1 upload of ρ0 instead of the
//! finish) + the update of the previous cycle. In `device` mode R and ξ are read back once per
//! cycle with the same fused submit as above; in `paper` mode the host already has them.
//!
//! # Common to both
//!
//! `loop_counts` hold everything from the first cycle to the last update (cycle overheads
//! included); `counts` add the setup, the final true residual and the Gram matrix. The
//! history holds ρ0 and then the Walker–Zhou estimate of every step
//! ([`SolveReport::history`]); `max_iter` counts steps over all cycles. A cycle ends at m
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

use std::time::Instant;

use super::driver::{Run, Start, add, start_gpu_solve};
use crate::base::error::Result;
use crate::base::scalar::{Precision, Scalar};
use crate::gpu::kernels::{Params, solver_kernel};
use crate::gpu::{Batch, Engine, GpuMatrix, Kernel};
use crate::matrix::Csr;
use crate::solvers::{
    CheckMode, GramSchmidt, Method, Monitor, Precond, Solution, SolveOptions, StopReason, Variant,
    WorkCounts,
};

pub use crate::cpu::gmres::MAX_GAP_RESTARTS;

// Cycle-buffer header (mirrors the `GM_H_*` constants of the shaders).
const H_STOP: usize = 0;
const H_STEP: usize = 1;
const H_RR: usize = 2;
const H_RHO: usize = 3;
const H_THR: usize = 4;
const H_TRUNC: usize = 5;
const H_EPS: usize = 6;
const HEADER: usize = 8;

// Stop codes written to `H_STOP` (`GM_STOP_*`).
const STOP_NONE: u32 = 0;
const STOP_CONVERGED: u32 = 1;
const STOP_ESTIMATE: u32 = 2;
const STOP_BREAKDOWN: u32 = 3;
const STOP_NONFINITE_AV: u32 = 4;
const STOP_NONFINITE_XI: u32 = 5;
const STOP_NONFINITE_RR: u32 = 6;

// Partials slots (`GM_SLOT_*`): 0 ‖r‖², 1 gmres_spmv_dot / single classical dots, 2 ‖w‖² after
// Gram–Schmidt, 3… gmres_basis_dots (four inner products per slot).
const SLOT_RESIDUAL: u32 = 0;
const SLOT_DOT: u32 = 1;
const SLOT_DOTS: u32 = 3;

// Kernel flags.
const RESIDUAL_WRITE_Z: u32 = 1;
const SPMV_FIRST: u32 = 1;
const SPMV_MONITOR: u32 = 2;
const GS_PASS2: u32 = 1;
const GS_NORM: u32 = 2;
const NORMALIZE_FIRST: u32 = 1;
const FINISH_RHO: u32 = 1;
const FINISH_NORM_W: u32 = 2;
const FINISH_COLUMN: u32 = 3;
const FINISH_RII: u32 = 4;
const FINISH_XI: u32 = 5;
const FINISH_PASS2: u32 = 16;

/// Where things are in the cycle buffer (`scalars` of the GMRES kernels), for restart length
/// m and g reduction workgroups:
///
/// `[header (8) | step record ×2 (g + 4 each) | η: k, η_r, η_1…η_m | per step j = 0…m: ξ_j,
/// estimate_j, ‖A v_{j−1}‖², – | R (m+1)², R_{j,i} at j + (m+1)i | coefficients (m+1) |
/// R column being accumulated (m+1)]`.
///
/// The step records (`[‖A v_{i−1}‖², R_{i,i}, –, –, ξ_i partials…]`, step i in record i mod 2)
/// come right after the header, so that `paper` mode reads header + record in one readback.
#[derive(Debug, Clone, Copy)]
struct Layout {
    m: usize,
    g: usize,
    stride: usize,
    eta: usize,
    steps: usize,
    r: usize,
    tmp: usize,
    acc: usize,
    len: usize,
}

impl Layout {
    fn new(m: usize, g: usize) -> Self {
        let stride = g + 4;
        let eta = HEADER + 2 * stride;
        let steps = eta + m + 2;
        let r = steps + 4 * (m + 1);
        let tmp = r + (m + 1) * (m + 1);
        let acc = tmp + m + 1;
        Layout {
            m,
            g,
            stride,
            eta,
            steps,
            r,
            tmp,
            acc,
            len: acc + m + 1,
        }
    }
    /// Step i's record (ring of two).
    fn rec(&self, i: usize) -> usize {
        HEADER + (i % 2) * self.stride
    }
    /// Step i's scalars: ξ_i, estimate_i, ‖A v_{i−1}‖².
    fn step(&self, i: usize) -> usize {
        self.steps + 4 * i
    }
    /// R_{j,i}.
    fn r_at(&self, j: usize, i: usize) -> usize {
        self.r + j + (self.m + 1) * i
    }
}

/// Pool vector indices: v_0 … v_m are 0 … m, then r, z, x, b and (classical) w.
fn r_vec(m: usize) -> u32 {
    (m + 1) as u32
}
fn z_vec(m: usize) -> u32 {
    (m + 2) as u32
}
fn x_vec(m: usize) -> u32 {
    (m + 3) as u32
}
fn b_vec(m: usize) -> u32 {
    (m + 4) as u32
}
fn w_vec(m: usize) -> u32 {
    (m + 5) as u32
}

/// The Walker–Zhou estimate ‖r_i‖ from ‖r_{i−1}‖ and ξ_i, in `T` exactly as the CPU reference
/// (and the kernels) evaluate it.
fn wz<T: Scalar>(prev: T, xi: T) -> T {
    let a = xi.abs();
    if a < prev {
        ((prev - a) * (prev + a)).sqrt()
    } else {
        T::zero()
    }
}

/// How a cycle's steps ended.
#[derive(Debug, Clone, PartialEq)]
enum StepEnd {
    /// All steps recorded for the cycle ran (m, or what max_iter left).
    Full,
    /// The estimate met the threshold or the truncation.
    Estimate,
    /// R_{s,s} ≈ 0 at step s.
    Breakdown {
        step: usize,
        rii: f64,
        w_norm: f64,
    },
    /// A NaN/∞ in the named quantity.
    NonFinite(&'static str),
    Cancelled,
}

/// What the host learns from one cycle.
struct CycleData<T> {
    /// Steps used (columns of R).
    k: usize,
    /// Steps counted as iterations (k, or k + 1 when ξ_{k+1} was not finite).
    counted: usize,
    /// Estimates of steps 1…counted.
    est: Vec<T>,
    /// ξ_1…ξ_k (index 0 unused).
    xi: Vec<f64>,
    /// R_{j,i} at r[i][j], 1 ≤ j ≤ i ≤ k.
    r: Vec<Vec<f64>>,
    end: StepEnd,
}

/// How the solve ended, before the final true-residual check.
#[derive(Debug, Clone, PartialEq)]
enum Fin {
    /// The residual at a restart met the threshold.
    Converged,
    /// The last cycle's estimate met the threshold (the true residual decides).
    EstimateConverged,
    MaxIterations,
    Breakdown {
        step: usize,
        rii: f64,
        w_norm: f64,
    },
    NonFinite(&'static str),
    Cancelled,
}

/// Everything resident on the GPU for one solve, with the kernels every variant uses.
struct Core<'e, T> {
    engine: &'e Engine,
    n: usize,
    m: usize,
    g: u32,
    lay: Layout,
    jacobi: bool,
    mode: CheckMode,
    gs: GramSchmidt,
    a: GpuMatrix<T>,
    dinv: wgpu::Buffer,
    pool: wgpu::Buffer,
    state: wgpu::Buffer,
    partials: wgpu::Buffer,
    cyc: wgpu::Buffer,
    residual: Kernel,
    update: Kernel,
    dots: Kernel,
}

/// A solve: the [`Core`] plus the bind groups of every call site (created once per solve).
struct Gmres<'e, T> {
    core: Core<'e, T>,
    bg_residual: wgpu::BindGroup,
    bg_update: wgpu::BindGroup,
    steps: Steps,
}

impl<'e, T> std::ops::Deref for Gmres<'e, T> {
    type Target = Core<'e, T>;
    fn deref(&self) -> &Core<'e, T> {
        &self.core
    }
}

/// The per-variant kernels and their bind groups; vectors are indexed by step i − 1
/// (or basis vector j − 1).
enum Steps {
    Pipelined(Box<PipelinedSteps>),
    Classical(Box<ClassicalSteps>),
}

struct PipelinedSteps {
    spmv_dot: Kernel,
    gs_update: Kernel,
    normalize: Kernel,
    bg_spmv_dot: Vec<wgpu::BindGroup>,
    bg_dots: Vec<Option<wgpu::BindGroup>>,
    bg_gs: Vec<Option<wgpu::BindGroup>>,
    /// CGS2: the re-orthogonalisation pass.
    bg_dots2: Vec<Option<wgpu::BindGroup>>,
    bg_gs2: Vec<Option<wgpu::BindGroup>>,
    bg_normalize: Vec<wgpu::BindGroup>,
}

/// Per step i of classical GMRES.
struct ClassicalStep {
    diag: wgpu::BindGroup,
    spmv: wgpu::BindGroup,
    /// CGS: all ⟨v_j, w⟩ at once, and w −= Σ c_j v_j (i ≥ 2).
    dots: Option<wgpu::BindGroup>,
    gemv: Option<wgpu::BindGroup>,
    scale: wgpu::BindGroup,
    /// r −= ξ_{i−1} v_{i−1} (i ≥ 2).
    r_update: Option<wgpu::BindGroup>,
    dot_xi: wgpu::BindGroup,
    /// The device-side finishes (`device` mode only).
    finish: Option<ClassicalFinish>,
}

struct ClassicalFinish {
    norm_w: wgpu::BindGroup,
    column: Option<wgpu::BindGroup>,
    column2: Option<wgpu::BindGroup>,
    rii: wgpu::BindGroup,
    xi: wgpu::BindGroup,
}

/// Per basis vector j of classical GMRES with MGS.
struct ClassicalMgs {
    dot: wgpu::BindGroup,
    finish: Option<wgpu::BindGroup>,
    axpy: wgpu::BindGroup,
}

struct ClassicalSteps {
    spmv: Kernel,
    diag: Kernel,
    finish: Kernel,
    axpy: Kernel,
    scale: Kernel,
    bg_finish_rho: Option<wgpu::BindGroup>,
    bg_scale0: wgpu::BindGroup,
    bg_dot_ww: wgpu::BindGroup,
    step: Vec<ClassicalStep>,
    mgs: Vec<ClassicalMgs>,
}

impl<'e, T: Scalar> Core<'e, T> {
    fn upload(
        engine: &'e Engine,
        a: &Csr<T>,
        gpu_a: GpuMatrix<T>,
        b: &[T],
        x0: Option<&[T]>,
        opts: &SolveOptions,
        threshold: f64,
    ) -> Result<Self> {
        let n = a.nrows();
        let m = opts.restart.min(n).max(1);
        let classical = opts.variant == Variant::Classical;
        let jacobi = opts.precond == Precond::Jacobi;
        let vectors = m + if classical { 6 } else { 5 };
        let elem = std::mem::size_of::<T>() as u64;
        let pool_what = format!(
            "GMRES({m}) Krylov basis and work vectors ({vectors} vectors of {n} entries in one \
             buffer; use a smaller restart length)"
        );
        engine
            .context()
            .check_binding(&pool_what, vectors as u64 * n as u64 * elem)?;
        let g = engine.reduction_groups(n);
        let lay = Layout::new(m, g as usize);
        let mut init = vec![T::zero(); lay.len];
        init[H_THR] = T::from_f64(threshold);
        init[H_TRUNC] = T::from_f64(T::PRECISION.epsilon().cbrt());
        init[H_EPS] = T::from_f64(T::PRECISION.epsilon());
        let slots = SLOT_DOTS as usize + m.div_ceil(4) + 1;
        let dinv = if jacobi {
            let d: Vec<T> = a.diagonal().iter().map(|&d| T::one() / d).collect();
            engine.storage_from("dinv", &d)?
        } else {
            engine.storage_zeroed::<T>("dinv (unused)", 1)?
        };
        let cfg = gpu_a.shader_config(engine);
        let k = |name| solver_kernel::<T>(engine, name, cfg);
        let core = Core {
            engine,
            n,
            m,
            g,
            lay,
            jacobi,
            mode: opts.check_mode,
            gs: opts.gs,
            a: gpu_a,
            dinv,
            pool: engine.storage_zeroed::<T>(&pool_what, vectors * n)?,
            state: engine.storage_zeroed::<u32>("gmres state", 4)?,
            partials: engine.storage_zeroed::<[T; 4]>("gmres partials", slots * g as usize)?,
            cyc: engine.storage_from("gmres cycle buffer", &init)?,
            residual: k("gmres_residual")?,
            update: k("gmres_update_x")?,
            dots: k("gmres_basis_dots")?,
        };
        // b and x0 into the pool (one upload each; x0 = 0 is already there).
        engine.write(&core.pool, b_vec(m) as usize * n, b);
        if let Some(x0) = x0 {
            engine.write(&core.pool, x_vec(m) as usize * n, x0);
        }
        Ok(core)
    }

    fn base_params(&self) -> Params {
        Params {
            n: self.n as u32,
            groups: self.g,
            jacobi: self.jacobi as u32,
            ..Default::default()
        }
    }

    /// A bind group of `kernel` with launch parameters `p` (every GMRES kernel binds from the
    /// same list and keeps what it uses).
    fn bind(&self, kernel: &Kernel, p: Params) -> wgpu::BindGroup {
        self.bind_with(kernel, p, &self.partials)
    }

    fn bind_with(&self, kernel: &Kernel, p: Params, partials: &wgpu::Buffer) -> wgpu::BindGroup {
        let params = self.engine.uniform_from("gmres params", &p);
        let mut e = vec![
            (0, &self.state),
            (1, partials),
            (2, &self.cyc),
            (4, &params),
            (5, &self.pool),
            (11, &self.dinv),
        ];
        e.extend(self.a.bindings(false));
        self.engine.bind_group_at(kernel, &e)
    }

    /// `gmres_basis_dots` over j in [j0, j1) against pool vector `target`, into `slot`….
    fn bind_dots(&self, target: u32, j0: usize, j1: usize, slot: u32) -> wgpu::BindGroup {
        self.bind(&self.dots, self.dots_params(target, j0, j1, slot))
    }

    fn dots_params(&self, target: u32, j0: usize, j1: usize, slot: u32) -> Params {
        Params {
            dst: target,
            num: j0 as u32,
            den: j1 as u32,
            slot,
            ..self.base_params()
        }
    }

    fn pipelined_steps(&self) -> Result<PipelinedSteps> {
        let cfg = self.a.shader_config(self.engine);
        let k = |name| solver_kernel::<T>(self.engine, name, cfg);
        let (spmv_dot, gs_update, normalize) = (
            k("gmres_spmv_dot")?,
            k("gmres_gs_update")?,
            k("gmres_normalize")?,
        );
        let (m, lay, base) = (self.m, self.lay, self.base_params());
        let monitor = if self.mode == CheckMode::Device {
            SPMV_MONITOR
        } else {
            0
        };
        let cgs2 = self.gs == GramSchmidt::Cgs2;
        let mut s = PipelinedSteps {
            bg_spmv_dot: Vec::with_capacity(m),
            bg_dots: Vec::with_capacity(m),
            bg_gs: Vec::with_capacity(m),
            bg_dots2: Vec::with_capacity(m),
            bg_gs2: Vec::with_capacity(m),
            bg_normalize: Vec::with_capacity(m),
            spmv_dot,
            gs_update,
            normalize,
        };
        for i in 1..=m {
            let src = if self.jacobi {
                z_vec(m)
            } else if i == 1 {
                r_vec(m)
            } else {
                (i - 1) as u32
            };
            s.bg_spmv_dot.push(self.bind(
                &s.spmv_dot,
                Params {
                    comp_monitor: i as u32,
                    num: src,
                    den: r_vec(m),
                    slot: lay.rec(i.saturating_sub(1)) as u32,
                    comp: lay.steps as u32,
                    flags: monitor | if i == 1 { SPMV_FIRST } else { 0 },
                    ..base
                },
            ));
            s.bg_dots
                .push((i >= 2).then(|| self.bind_dots(i as u32, 1, i - 1, SLOT_DOTS)));
            let gs = |flags| {
                self.bind(
                    &s.gs_update,
                    Params {
                        comp_monitor: i as u32,
                        comp: lay.r_at(0, i) as u32,
                        den: lay.step(i) as u32,
                        flags,
                        ..base
                    },
                )
            };
            s.bg_gs
                .push((i >= 2).then(|| gs(if cgs2 { 0 } else { GS_NORM })));
            s.bg_gs2
                .push((i >= 2 && cgs2).then(|| gs(GS_PASS2 | GS_NORM)));
            s.bg_dots2
                .push((i >= 2 && cgs2).then(|| self.bind_dots(i as u32, 1, i, SLOT_DOTS)));
            s.bg_normalize.push(self.bind(
                &s.normalize,
                Params {
                    comp_monitor: i as u32,
                    comp: lay.r_at(i, i) as u32,
                    den: lay.step(i) as u32,
                    slot: lay.rec(i) as u32,
                    num: r_vec(m),
                    dst: z_vec(m),
                    flags: if i == 1 { NORMALIZE_FIRST } else { 0 },
                    ..base
                },
            ));
        }
        Ok(s)
    }

    fn classical_steps(&self) -> Result<ClassicalSteps> {
        let cfg = self.a.shader_config(self.engine);
        let k = |name| solver_kernel::<T>(self.engine, name, cfg);
        let (spmv, diag, finish, axpy, scale) = (
            k("gmres_basis_spmv")?,
            k("gmres_basis_diag")?,
            k("gmres_finish")?,
            k("gmres_basis_axpy")?,
            k("gmres_basis_scale")?,
        );
        let (m, lay, base) = (self.m, self.lay, self.base_params());
        let (rv, zv, wv) = (r_vec(m), z_vec(m), w_vec(m));
        let device = self.mode == CheckMode::Device;
        let fin = |flags: u32, i: usize, slot: u32, den: usize, comp: usize, dst: usize| {
            self.bind(
                &finish,
                Params {
                    flags,
                    comp_monitor: i as u32,
                    slot,
                    den: den as u32,
                    comp: comp as u32,
                    dst: dst as u32,
                    ..base
                },
            )
        };
        let ax = |target: u32, j0: usize, j1: usize, coef: usize| {
            self.bind(
                &axpy,
                Params {
                    dst: target,
                    num: j0 as u32,
                    den: j1 as u32,
                    comp: coef as u32,
                    ..base
                },
            )
        };
        let sc = |dst: u32, src: u32, den: usize| {
            self.bind(
                &scale,
                Params {
                    dst,
                    num: src,
                    den: den as u32,
                    ..base
                },
            )
        };
        let mut step = Vec::with_capacity(m);
        let mut mgs = Vec::with_capacity(m);
        for i in 1..=m {
            let prev = (i - 1) as u32;
            let cgs = self.gs != GramSchmidt::Mgs && i >= 2;
            let finish = device.then(|| {
                let column = |flags| {
                    fin(
                        FINISH_COLUMN | flags,
                        i,
                        SLOT_DOTS,
                        i - 1,
                        lay.tmp + 1,
                        lay.acc + 1,
                    )
                };
                ClassicalFinish {
                    norm_w: fin(FINISH_NORM_W, i, SLOT_DOT, lay.step(i), 0, 0),
                    column: cgs.then(|| column(0)),
                    column2: (cgs && self.gs == GramSchmidt::Cgs2).then(|| column(FINISH_PASS2)),
                    rii: fin(
                        FINISH_RII,
                        i,
                        SLOT_DOT,
                        lay.step(i),
                        lay.r_at(0, i),
                        lay.acc,
                    ),
                    xi: fin(FINISH_XI, i, SLOT_DOT, lay.step(i), 0, 0),
                }
            });
            step.push(ClassicalStep {
                diag: self.bind(
                    &diag,
                    Params {
                        dst: zv,
                        num: prev,
                        ..base
                    },
                ),
                spmv: self.bind(
                    &spmv,
                    Params {
                        dst: wv,
                        num: if self.jacobi { zv } else { prev },
                        ..base
                    },
                ),
                dots: cgs.then(|| self.bind_dots(wv, 1, i, SLOT_DOTS)),
                gemv: cgs.then(|| ax(wv, 1, i, lay.tmp)),
                scale: sc(i as u32, wv, lay.r_at(i, i)),
                // r −= ξ_{i−1} v_{i−1}: the coefficient of vector j = i−1 is at comp + j.
                r_update: (i >= 2).then(|| ax(rv, i - 1, i, lay.step(i - 1) - (i - 1))),
                dot_xi: self.bind_dots(rv, i, i + 1, SLOT_DOT),
                finish,
            });
            if self.gs == GramSchmidt::Mgs && i < m {
                mgs.push(ClassicalMgs {
                    dot: self.bind_dots(wv, i, i + 1, SLOT_DOT),
                    finish: device
                        .then(|| fin(FINISH_COLUMN, i, SLOT_DOT, 1, lay.tmp + i, lay.acc + i)),
                    axpy: ax(wv, i, i + 1, lay.tmp),
                });
            }
        }
        Ok(ClassicalSteps {
            bg_finish_rho: device.then(|| fin(FINISH_RHO, 0, SLOT_RESIDUAL, lay.step(0), 0, 0)),
            bg_scale0: sc(0, rv, H_RHO),
            bg_dot_ww: self.bind_dots(wv, wv as usize, wv as usize + 1, SLOT_DOT),
            step,
            mgs,
            spmv,
            diag,
            finish,
            axpy,
            scale,
        })
    }

    fn dispatch(&self, batch: &mut Batch<'_>, kernel: &Kernel, bg: &wgpu::BindGroup) {
        batch.dispatch(kernel, bg, self.g);
    }

    /// Sum of component `comp` of partials slot `slot` (f64).
    fn slot_sum(&self, parts: &[T], slot: usize, comp: usize) -> f64 {
        let g = self.g as usize;
        (0..g)
            .map(|w| parts[4 * (slot * g + w) + comp].as_f64())
            .sum()
    }

    /// Submits `batch` and reads partials slots `slot … slot + count − 1`.
    fn read_slots(&self, batch: Batch<'_>, slot: u32, count: usize) -> Result<Vec<T>> {
        let g = self.g as usize;
        batch.submit_and_read(&self.partials, 4 * slot as usize * g, 4 * count * g)
    }
}

impl<'e, T: Scalar> Gmres<'e, T> {
    fn new(core: Core<'e, T>, classical: bool) -> Result<Self> {
        let base = core.base_params();
        let m = core.m;
        let bg_residual = core.bind(
            &core.residual,
            Params {
                dst: r_vec(m),
                num: z_vec(m),
                comp: x_vec(m),
                den: b_vec(m),
                flags: if classical { 0 } else { RESIDUAL_WRITE_Z },
                ..base
            },
        );
        let bg_update = core.bind(
            &core.update,
            Params {
                comp: core.lay.eta as u32,
                num: r_vec(m),
                dst: x_vec(m),
                ..base
            },
        );
        let steps = if classical {
            Steps::Classical(Box::new(core.classical_steps()?))
        } else {
            Steps::Pipelined(Box::new(core.pipelined_steps()?))
        };
        Ok(Gmres {
            core,
            bg_residual,
            bg_update,
            steps,
        })
    }

    /// x += D⁻¹(…) with the coefficients just uploaded.
    fn record_update(&self, batch: &mut Batch<'_>, eta: &[T]) {
        self.engine.write(&self.cyc, self.lay.eta, eta);
        self.dispatch(batch, &self.update, &self.bg_update);
    }

    /// Applies a pending update on its own (the last one of a solve): 1 upload, 1 launch.
    fn flush(&self, pending: &mut Option<Vec<T>>) -> Result<()> {
        if let Some(eta) = pending.take() {
            let mut batch = self.engine.begin("gmres update");
            self.record_update(&mut batch, &eta);
            batch.submit()?;
        }
        Ok(())
    }

    fn classical(&self) -> &ClassicalSteps {
        match &self.steps {
            Steps::Classical(c) => c,
            Steps::Pipelined(_) => unreachable!("classical steps of pipelined GMRES"),
        }
    }

    /// `device` mode: the restart (with the finish of ρ0 and v_0 = r/ρ0 for the classical
    /// variant; the pipelined one does both in its first step).
    fn record_restart(&self, batch: &mut Batch<'_>) {
        self.dispatch(batch, &self.residual, &self.bg_residual);
        if let Steps::Classical(c) = &self.steps {
            let rho = c.bg_finish_rho.as_ref().expect("device-mode finish");
            batch.dispatch(&c.finish, rho, 1);
            self.dispatch(batch, &c.scale, &c.bg_scale0);
        }
    }

    /// `device` mode: every launch of step i.
    fn record_step(&self, batch: &mut Batch<'_>, i: usize) {
        match &self.steps {
            Steps::Pipelined(p) => {
                let at = i - 1;
                self.dispatch(batch, &p.spmv_dot, &p.bg_spmv_dot[at]);
                if let Some(bg) = &p.bg_dots[at] {
                    self.dispatch(batch, &self.dots, bg);
                }
                if let Some(bg) = &p.bg_gs[at] {
                    self.dispatch(batch, &p.gs_update, bg);
                }
                if let (Some(d), Some(u)) = (&p.bg_dots2[at], &p.bg_gs2[at]) {
                    self.dispatch(batch, &self.dots, d);
                    self.dispatch(batch, &p.gs_update, u);
                }
                self.dispatch(batch, &p.normalize, &p.bg_normalize[at]);
            }
            Steps::Classical(c) => {
                let st = &c.step[i - 1];
                let f = st.finish.as_ref().expect("device-mode finish");
                let fin = |batch: &mut Batch<'_>, bg: &wgpu::BindGroup| {
                    batch.dispatch(&c.finish, bg, 1);
                };
                if self.jacobi {
                    self.dispatch(batch, &c.diag, &st.diag);
                }
                self.dispatch(batch, &c.spmv, &st.spmv);
                self.dispatch(batch, &self.dots, &c.bg_dot_ww);
                fin(batch, &f.norm_w);
                if self.gs == GramSchmidt::Mgs {
                    for mg in &c.mgs[..i - 1] {
                        self.dispatch(batch, &self.dots, &mg.dot);
                        fin(batch, mg.finish.as_ref().expect("device-mode finish"));
                        self.dispatch(batch, &c.axpy, &mg.axpy);
                    }
                } else if let (Some(dots), Some(gemv)) = (&st.dots, &st.gemv) {
                    for col in [&f.column, &f.column2].into_iter().flatten() {
                        self.dispatch(batch, &self.dots, dots);
                        fin(batch, col);
                        self.dispatch(batch, &c.axpy, gemv);
                    }
                }
                self.dispatch(batch, &self.dots, &c.bg_dot_ww);
                fin(batch, &f.rii);
                self.dispatch(batch, &c.scale, &st.scale);
                if let Some(bg) = &st.r_update {
                    self.dispatch(batch, &c.axpy, bg);
                }
                self.dispatch(batch, &self.dots, &st.dot_xi);
                fin(batch, &f.xi);
            }
        }
    }

    /// `device` mode: one submit of [previous update] + restart + `mc` steps, one readback of
    /// the cycle buffer up to R.
    fn device_cycle(&self, pending: Option<Vec<T>>, mc: usize) -> Result<Vec<T>> {
        let mut batch = self.engine.begin("gmres cycle");
        if let Some(eta) = pending {
            self.record_update(&mut batch, &eta);
        }
        self.record_restart(&mut batch);
        for i in 1..=mc {
            self.record_step(&mut batch, i);
        }
        batch.submit_and_read(&self.cyc, 0, self.lay.tmp)
    }

    /// `paper` mode: [previous update] + r = b − Ax, and ‖r‖² finished on the host.
    fn paper_restart(&self, pending: Option<Vec<T>>) -> Result<f64> {
        let mut batch = self.engine.begin("gmres restart");
        if let Some(eta) = pending {
            self.record_update(&mut batch, &eta);
        }
        self.dispatch(&mut batch, &self.residual, &self.bg_residual);
        let parts = self.read_slots(batch, SLOT_RESIDUAL, 1)?;
        Ok(self.slot_sum(&parts, 0, 0))
    }

    /// Parses a `device`-mode cycle readback: the steps used, their ξ, estimates and R.
    /// `rho` is the cycle's ρ0 (as the kernels computed it).
    fn parse_device_cycle(&self, c: &[T], mc: usize, rho: T, threshold: f64) -> CycleData<T> {
        let lay = &self.lay;
        let code = c[H_STOP].as_f64() as u32;
        let s = c[H_STEP].as_f64() as usize;
        let (mut k, counted, mut end) = match code {
            STOP_ESTIMATE => (s, s, StepEnd::Estimate),
            STOP_BREAKDOWN => (
                s - 1,
                s - 1,
                StepEnd::Breakdown {
                    step: s,
                    rii: c[lay.r_at(s, s)].as_f64(),
                    w_norm: c[lay.step(s) + 2].as_f64().sqrt(),
                },
            ),
            STOP_NONFINITE_AV => (s - 1, s - 1, StepEnd::NonFinite("A v")),
            STOP_NONFINITE_XI => (s - 1, s, StepEnd::NonFinite("xi")),
            _ => (mc, mc, StepEnd::Full),
        };
        let mut xi = vec![0.0; counted + 1];
        let mut est = Vec::with_capacity(counted);
        for (i, x) in xi.iter_mut().enumerate().skip(1) {
            *x = c[lay.step(i)].as_f64();
            est.push(c[lay.step(i) + 1]);
        }
        // Pipelined: the kernels finish ξ_i in step i + 1, so the last step's ξ is finished
        // here from its record (as paper 000 does for every ξ).
        if code == STOP_NONE && matches!(self.steps, Steps::Pipelined(_)) {
            let rec = lay.rec(mc);
            let x = T::from_f64((0..lay.g).map(|w| c[rec + 4 + w].as_f64()).sum());
            let prev = if mc >= 2 { est[mc - 2] } else { rho };
            let e = wz(prev, x);
            xi[mc] = x.as_f64();
            est[mc - 1] = e;
            let truncate = T::PRECISION.epsilon().cbrt() * rho.as_f64();
            if !e.is_finite() {
                k = mc - 1;
                end = StepEnd::NonFinite("xi");
            } else if e.as_f64() <= threshold || e.as_f64() <= truncate {
                end = StepEnd::Estimate;
            }
        }
        let mut r = vec![vec![0.0; k + 1]; k + 1];
        for (i, col) in r.iter_mut().enumerate().skip(1) {
            for (j, v) in col.iter_mut().enumerate().skip(1).take(i) {
                *v = c[lay.r_at(j, i)].as_f64();
            }
        }
        xi.truncate(k + 1);
        CycleData {
            k,
            counted,
            est,
            xi,
            r,
            end,
        }
    }

    /// `paper` mode, pipelined: the steps one submit each, ξ_i finished on the host from the
    /// step record read back after it (paper 000's monitoring transfer), then R once.
    fn paper_steps_pipelined(
        &self,
        run: &mut Run<'_>,
        mc: usize,
        rho: T,
        threshold: f64,
    ) -> Result<CycleData<T>> {
        let lay = &self.lay;
        let truncate = T::PRECISION.epsilon().cbrt() * rho.as_f64();
        let mut data = CycleData {
            k: 0,
            counted: 0,
            est: Vec::new(),
            xi: vec![0.0],
            r: Vec::new(),
            end: StepEnd::Full,
        };
        let mut e = rho;
        for i in 1..=mc {
            if run.monitor.cancelled() {
                data.end = StepEnd::Cancelled;
                break;
            }
            let mut batch = self.engine.begin("gmres step");
            self.record_step(&mut batch, i);
            let rec = lay.rec(i);
            let c: Vec<T> = batch.submit_and_read(&self.cyc, 0, rec + lay.stride)?;
            run.recorded += 1;
            match c[H_STOP].as_f64() as u32 {
                STOP_NONE => {}
                STOP_BREAKDOWN => {
                    data.end = StepEnd::Breakdown {
                        step: i,
                        rii: c[rec + 1].as_f64(),
                        w_norm: c[rec].as_f64().sqrt(),
                    };
                    break;
                }
                _ => {
                    data.end = StepEnd::NonFinite("A v");
                    break;
                }
            }
            let x: f64 = (0..lay.g).map(|w| c[rec + 4 + w].as_f64()).sum();
            e = wz(e, T::from_f64(x));
            data.counted = i;
            data.est.push(e);
            run.push(e.as_f64());
            if !e.is_finite() {
                data.end = StepEnd::NonFinite("xi");
                break;
            }
            data.k = i;
            data.xi.push(x);
            if e.as_f64() <= threshold || e.as_f64() <= truncate {
                data.end = StepEnd::Estimate;
                break;
            }
        }
        let k = data.k;
        data.r = vec![vec![0.0; k + 1]; k + 1];
        if k >= 1 {
            let c: Vec<T> = self
                .engine
                .read(&self.cyc, lay.r, lay.r_at(k, k) + 1 - lay.r)?;
            for (i, col) in data.r.iter_mut().enumerate().skip(1) {
                for (j, v) in col.iter_mut().enumerate().skip(1).take(i) {
                    *v = c[lay.r_at(j, i) - lay.r].as_f64();
                }
            }
        }
        Ok(data)
    }

    /// `paper` mode, classical: every inner product read back and finished on the host, the
    /// values later launches need sent back up.
    fn paper_steps_classical(
        &self,
        run: &mut Run<'_>,
        mc: usize,
        rho: T,
        threshold: f64,
    ) -> Result<CycleData<T>> {
        let c = self.classical();
        let lay = &self.lay;
        let eps = T::PRECISION.epsilon();
        let truncate = eps.cbrt() * rho.as_f64();
        let mut data = CycleData {
            k: 0,
            counted: 0,
            est: Vec::new(),
            xi: vec![0.0],
            r: vec![vec![0.0; mc + 1]; mc + 1],
            end: StepEnd::Full,
        };
        // v_0 = r/ρ0 with the ρ0 the host sends up.
        self.engine.write(&self.cyc, H_RHO, &[rho]);
        let mut batch = self.engine.begin("gmres step");
        self.dispatch(&mut batch, &c.scale, &c.bg_scale0);
        let mut e = rho;
        for i in 1..=mc {
            if run.monitor.cancelled() {
                data.end = StepEnd::Cancelled;
                break;
            }
            run.recorded += 1;
            let st = &c.step[i - 1];
            if self.jacobi {
                self.dispatch(&mut batch, &c.diag, &st.diag);
            }
            self.dispatch(&mut batch, &c.spmv, &st.spmv);
            self.dispatch(&mut batch, &self.dots, &c.bg_dot_ww);
            let w2 = self.slot_sum(&self.read_slots(batch, SLOT_DOT, 1)?, 0, 0);
            if !w2.is_finite() {
                data.end = StepEnd::NonFinite("A v");
                break;
            }
            batch = self.engine.begin("gmres step");
            if self.gs == GramSchmidt::Mgs {
                for (j, mg) in c.mgs[..i - 1].iter().enumerate().map(|(q, mg)| (q + 1, mg)) {
                    self.dispatch(&mut batch, &self.dots, &mg.dot);
                    let h = self.slot_sum(&self.read_slots(batch, SLOT_DOT, 1)?, 0, 0);
                    data.r[i][j] += h;
                    self.engine.write(&self.cyc, lay.tmp + j, &[T::from_f64(h)]);
                    batch = self.engine.begin("gmres step");
                    self.dispatch(&mut batch, &c.axpy, &mg.axpy);
                }
            } else if let (Some(dots), Some(gemv)) = (&st.dots, &st.gemv) {
                let passes = if self.gs == GramSchmidt::Cgs2 { 2 } else { 1 };
                for _ in 0..passes {
                    self.dispatch(&mut batch, &self.dots, dots);
                    let parts = self.read_slots(batch, SLOT_DOTS, (i - 1).div_ceil(4))?;
                    let h: Vec<T> = (0..i - 1)
                        .map(|q| {
                            let v = self.slot_sum(&parts, q / 4, q % 4);
                            data.r[i][q + 1] += v;
                            T::from_f64(v)
                        })
                        .collect();
                    self.engine.write(&self.cyc, lay.tmp + 1, &h);
                    batch = self.engine.begin("gmres step");
                    self.dispatch(&mut batch, &c.axpy, gemv);
                }
            }
            self.dispatch(&mut batch, &self.dots, &c.bg_dot_ww);
            let rii = self
                .slot_sum(&self.read_slots(batch, SLOT_DOT, 1)?, 0, 0)
                .sqrt();
            let w_norm = w2.sqrt();
            if !rii.is_finite() {
                data.end = StepEnd::NonFinite("A v");
                break;
            }
            if w_norm == 0.0 || rii <= eps * w_norm {
                data.end = StepEnd::Breakdown {
                    step: i,
                    rii,
                    w_norm,
                };
                break;
            }
            data.r[i][i] = rii;
            self.engine
                .write(&self.cyc, lay.r_at(i, i), &[T::from_f64(rii)]);
            batch = self.engine.begin("gmres step");
            self.dispatch(&mut batch, &c.scale, &st.scale);
            if let Some(bg) = &st.r_update {
                // ξ_{i−1}, sent up now that the device needs it (Alg. 5 l.16).
                let prev = T::from_f64(data.xi[i - 1]);
                self.engine.write(&self.cyc, lay.step(i - 1), &[prev]);
                self.dispatch(&mut batch, &c.axpy, bg);
            }
            self.dispatch(&mut batch, &self.dots, &st.dot_xi);
            let x = self.slot_sum(&self.read_slots(batch, SLOT_DOT, 1)?, 0, 0);
            batch = self.engine.begin("gmres step");
            e = wz(e, T::from_f64(x));
            data.counted = i;
            data.est.push(e);
            run.push(e.as_f64());
            if !e.is_finite() {
                data.end = StepEnd::NonFinite("xi");
                break;
            }
            data.k = i;
            data.xi.push(x);
            if e.as_f64() <= threshold || e.as_f64() <= truncate {
                data.end = StepEnd::Estimate;
                break;
            }
        }
        data.r.truncate(data.k + 1);
        Ok(data)
    }

    /// ‖b − Ax‖₂ in f64 for f64 solves (on the GPU, `gmres_residual`), `None` in f32 (the
    /// caller computes it on the CPU from the downloaded x).
    fn true_residual_gpu(&self) -> Result<Option<f64>> {
        if T::PRECISION != Precision::F64 {
            return Ok(None);
        }
        Ok(Some(self.paper_restart(None)?.sqrt()))
    }
}

impl<T: Scalar> Core<'_, T> {
    /// ‖I − VᵀV‖_F over v_1 … v_k (Gram matrix on the GPU, one readback).
    fn orthogonality_loss(&self, k: usize) -> Result<Option<f64>> {
        if k == 0 {
            return Ok(None);
        }
        let g = self.g as usize;
        let bases: Vec<usize> = (1..=k)
            .scan(0, |acc, j| {
                let b = *acc;
                *acc += j.div_ceil(4);
                Some(b)
            })
            .collect();
        let slots = bases[k - 1] + k.div_ceil(4);
        let gram = self
            .engine
            .storage_zeroed::<[T; 4]>("gmres Gram partials", slots * g)?;
        let bgs: Vec<wgpu::BindGroup> = (1..=k)
            .map(|j| {
                self.bind_with(
                    &self.dots,
                    self.dots_params(j as u32, 1, j + 1, bases[j - 1] as u32),
                    &gram,
                )
            })
            .collect();
        // The kernels test the status word: reopen it.
        self.engine.write(&self.state, 0, &[0u32]);
        let mut batch = self.engine.begin("gmres gram");
        for bg in &bgs {
            self.dispatch(&mut batch, &self.dots, bg);
        }
        let parts: Vec<T> = batch.submit_and_read(&gram, 0, 4 * slots * g)?;
        let mut sum = 0.0;
        for j in 1..=k {
            for l in 1..=j {
                let q = l - 1;
                let v = self.slot_sum(&parts, bases[j - 1] + q / 4, q % 4);
                let d = if l == j { 1.0 - v } else { v };
                sum += if l == j { d * d } else { 2.0 * d * d };
            }
        }
        Ok(Some(sum.sqrt()))
    }
}

/// Back substitution R η = ξ (k×k upper triangular, R_{j,i} at r[i][j]), in f64.
fn solve_upper(r: &[Vec<f64>], xi: &[f64], k: usize) -> Vec<f64> {
    let mut eta = vec![0.0; k + 1];
    for i in (1..=k).rev() {
        let mut s = xi[i];
        for l in i + 1..=k {
            s -= r[l][i] * eta[l];
        }
        eta[i] = s / r[i][i];
    }
    eta
}

/// Solves A x = b by restarted GMRES(m) on the GPU (m = `opts.restart`, default 30):
/// `opts.variant` picks classical (Alg. 5, Gram–Schmidt `opts.gs`: MGS, CGS or CGS2) or
/// pipelined GMRES (Alg. 6, CGS or — with `opts.gs == Cgs2` — CGS2), `opts.check_mode` the
/// convergence checking, `opts.precond` Jacobi right preconditioning or none. See the module
/// docs for the kernels and transfers per step and per cycle.
///
/// Errors: the input checks of [`validate_system`] (a zero diagonal with Jacobi is
/// [`KrylovError::ZeroDiagonal`]), f64 on a device without SHADER_F64, a basis larger than one
/// storage binding ([`KrylovError::BufferTooLarge`]). A breakdown, a residual gap or the
/// iteration limit are results (`report.reason`), never errors.
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
        threshold: _,
    } = start_gpu_solve(engine, Method::Gmres, a, b, x0, opts)?;
    let n = a.nrows();
    let b_norm = report.b_norm;
    if b_norm == 0.0 {
        // A x = 0 is solved by x = 0 exactly (as the CPU reference does).
        report.converged = true;
        report.reason = StopReason::Converged;
        report.reason_detail = "converged at iteration 0: b = 0, so x = 0".into();
        report.relative_residual = 0.0;
        report.history = vec![0.0];
        return Ok(Solution {
            x: vec![T::zero(); n],
            report,
        });
    }
    let threshold = opts.threshold(b_norm);
    let gpu_a = super::driver::upload_matrix(engine, a, opts, &mut report)?;
    let core = Core::upload(engine, a, gpu_a, b, x0, opts, threshold)?;
    let gm = Gmres::new(core, opts.variant == Variant::Classical)?;
    monitor.on_loop_start();
    let start = Instant::now();
    let times0 = engine.kernel_times();
    let mut run = Run {
        history: Vec::new(),
        recorded: 0,
        loop_counts: WorkCounts::default(),
        batch_size: 0,
        last_rz: 0.0,
        monitor,
    };
    let before = engine.counters().snapshot();
    let (fin, restarts, basis_k) = cycles(&gm, &mut run, opts, threshold)?;
    run.loop_counts = add(
        &run.loop_counts,
        &engine.counters().snapshot().since(&before),
    );
    report.loop_seconds = start.elapsed().as_secs_f64();

    let x: Vec<T> = engine.read(&gm.pool, x_vec(gm.m) as usize * n, n)?;
    let true_abs = match gm.true_residual_gpu()? {
        Some(r) => r,
        None => crate::cpu::true_relative_residual(a, b, &x) * b_norm,
    };
    let true_rel = true_abs / b_norm;
    let confirmed = crate::cpu::confirms_convergence(true_abs, threshold);
    let iterations = run.iterations();
    let (reason, detail) = match fin {
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
        Fin::Breakdown { .. } if confirmed => (
            StopReason::Converged,
            format!("converged at iteration {iterations} (the Krylov space became invariant)"),
        ),
        Fin::Breakdown { step, rii, w_norm } => (
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
        Fin::Cancelled => (
            StopReason::Cancelled,
            format!("cancelled at iteration {iterations}"),
        ),
    };
    report.orthogonality_loss = gm.orthogonality_loss(basis_k)?;
    report.seconds = start.elapsed().as_secs_f64();
    report.kernel_times = super::kernel_times_since(&times0, &engine.kernel_times());
    report.iterations = iterations;
    report.converged = reason == StopReason::Converged;
    report.reason = reason;
    report.reason_detail = detail;
    report.relative_residual = true_rel;
    report.history = run.history;
    report.iterations_recorded = run.recorded;
    report.batch_size = run.batch_size;
    report.restarts = restarts;
    report.loop_counts = run.loop_counts.clone();
    if run.recorded > 0 {
        report.dispatches_per_iteration = run.loop_counts.dispatches as f64 / run.recorded as f64;
        report.transfers_per_iteration = run.loop_counts.transfers() as f64 / run.recorded as f64;
    }
    report.counts = engine.counters().snapshot().since(&counts0);
    Ok(Solution { x, report })
}

/// The restart cycles until a stop: returns how they ended, the restarts after a residual
/// gap, and the number of orthonormal vectors v_1 … v_k the pool holds at the end.
fn cycles<T: Scalar>(
    gm: &Gmres<'_, T>,
    run: &mut Run<'_>,
    opts: &SolveOptions,
    threshold: f64,
) -> Result<(Fin, usize, usize)> {
    let max_iter = opts.max_iter;
    let m = gm.m;
    let device = gm.mode == CheckMode::Device;
    let done = |v: f64| v <= threshold;
    let mut pending: Option<Vec<T>> = None;
    let mut first = true;
    let mut prev_est_done = false;
    let mut cycle_start = 0.0f64;
    let mut gap_cycles = 0usize;
    let mut gap_restarts = 0usize;
    let mut basis_k = 0usize;
    let mut total = 0usize;
    loop {
        if run.monitor.cancelled() {
            gm.flush(&mut pending)?;
            return Ok((Fin::Cancelled, gap_restarts, basis_k));
        }
        let mc = m.min(max_iter.saturating_sub(total));
        // The restart, on its own when the host must see the true residual before deciding
        // (`paper` mode; after a cycle whose estimate met the threshold; at the iteration
        // limit): [update] + r = b − Ax, ‖r‖² read back and finished on the host.
        let mut rho = None;
        if !device || prev_est_done || mc == 0 {
            let rr = gm.paper_restart(pending.take())?;
            if !rr.is_finite() {
                if first {
                    run.push(rr.sqrt());
                }
                return Ok((Fin::NonFinite("<r, r>"), gap_restarts, basis_k));
            }
            let r = T::from_f64(rr.sqrt());
            if first {
                run.push(r.as_f64());
                first = false;
            }
            if done(r.as_f64()) {
                return Ok((Fin::Converged, gap_restarts, basis_k));
            }
            if prev_est_done {
                // The last cycle's estimate converged but the true residual does not:
                // restart, unless that keeps failing (as the CPU reference decides).
                if r.as_f64() > 0.5 * cycle_start {
                    gap_cycles += 1;
                }
                if gap_cycles >= MAX_GAP_RESTARTS {
                    return Ok((Fin::EstimateConverged, gap_restarts, basis_k));
                }
                gap_restarts += 1;
            }
            if mc == 0 {
                return Ok((Fin::MaxIterations, gap_restarts, basis_k));
            }
            rho = Some(r);
        }
        // `device` mode: one submit of [update] + restart + the whole cycle, one readback.
        let cycle = if device {
            let c = gm.device_cycle(pending.take(), mc)?;
            run.recorded += mc;
            run.batch_size = mc;
            let code = c[H_STOP].as_f64() as u32;
            if !c[H_RR].is_finite() || code == STOP_NONFINITE_RR {
                if first {
                    run.push(c[H_RHO].as_f64());
                }
                return Ok((Fin::NonFinite("<r, r>"), gap_restarts, basis_k));
            }
            if first {
                run.push(c[H_RHO].as_f64());
                first = false;
            }
            if code == STOP_CONVERGED {
                // The restart residual met the threshold on the device.
                return Ok((Fin::Converged, gap_restarts, basis_k));
            }
            rho = Some(c[H_RHO]);
            Some(c)
        } else {
            None
        };
        let rho = rho.expect("restart residual");
        cycle_start = rho.as_f64();
        let data = match (&cycle, &gm.steps) {
            (Some(c), _) => {
                basis_k = built_vectors(c, mc);
                let d = gm.parse_device_cycle(c, mc, rho, threshold);
                for e in &d.est {
                    run.push(e.as_f64());
                }
                d
            }
            (None, Steps::Pipelined(_)) => {
                run.batch_size = 1;
                let d = gm.paper_steps_pipelined(run, mc, rho, threshold)?;
                basis_k = d.k;
                d
            }
            (None, Steps::Classical(_)) => {
                run.batch_size = 1;
                let d = gm.paper_steps_classical(run, mc, rho, threshold)?;
                basis_k = d.k;
                d
            }
        };
        total += data.counted;
        let k = data.k;
        if let StepEnd::NonFinite(q) = data.end {
            return Ok((Fin::NonFinite(q), gap_restarts, basis_k));
        }
        if k >= 1 {
            let eta = solve_upper(&data.r, &data.xi, k);
            let mut up = vec![T::zero(); k + 2];
            up[0] = T::from_f64(k as f64);
            if matches!(gm.steps, Steps::Classical(_)) {
                // x_k = x0 + (η1/ρ0) r_{k−1} + Σ_{i=2..k} (η_i + (η1/ρ0) ξ_{i−1}) v_{i−1}.
                let c = eta[1] / rho.as_f64();
                up[1] = T::from_f64(c);
                for i in 2..=k {
                    up[1 + i] = T::from_f64(eta[i] + c * data.xi[i - 1]);
                }
            } else {
                for i in 1..=k {
                    up[1 + i] = T::from_f64(eta[i]);
                }
            }
            pending = Some(up);
        }
        let est_last = data.est.last().map_or(rho.as_f64(), |e| e.as_f64());
        match data.end {
            StepEnd::Breakdown { step, rii, w_norm } => {
                gm.flush(&mut pending)?;
                return Ok((Fin::Breakdown { step, rii, w_norm }, gap_restarts, basis_k));
            }
            StepEnd::Cancelled => {
                gm.flush(&mut pending)?;
                return Ok((Fin::Cancelled, gap_restarts, basis_k));
            }
            _ => {}
        }
        prev_est_done = done(est_last);
        if total >= max_iter {
            gm.flush(&mut pending)?;
            let fin = if prev_est_done {
                Fin::EstimateConverged
            } else {
                Fin::MaxIterations
            };
            return Ok((fin, gap_restarts, basis_k));
        }
    }
}

/// Orthonormal vectors v_1 … v_k a `device`-mode cycle left in the pool.
fn built_vectors<T: Scalar>(c: &[T], mc: usize) -> usize {
    let s = c[H_STEP].as_f64() as usize;
    match c[H_STOP].as_f64() as u32 {
        STOP_NONE => mc,
        STOP_CONVERGED | STOP_NONFINITE_RR => 0,
        STOP_ESTIMATE => s,
        _ => s.saturating_sub(1),
    }
}
