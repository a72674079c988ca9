//! Biconjugate gradients on the GPU (paper 001 §3.1): [`Pipelined`] and [`Classical`] side by
//! side, f32 and f64, optionally Jacobi-preconditioned (M = D, the preconditioned BiCG of the
//! Templates book that the CPU reference [`crate::cpu::bicg`] runs: z = D⁻¹r, z̃ = D⁻¹r̃,
//! ρ = ⟨z, r̃⟩, p = z + βp, p̃ = z̃ + βp̃).
//!
//! **Aᵀ is stored explicitly.** The matrix is transposed once on the host
//! ([`Csr::transpose`], an O(nnz) counting sort) and uploaded next to A, so both recurrences
//! — q = A·p and q̃ = Aᵀ·p̃ — run the fast non-transposed row-per-thread CSR product (paper
//! 004 §3.1: a transposed SpMV on the non-transposed storage scatters and is 2–7× slower).
//! The memory this costs is reported as `transpose_bytes` in the [`SolveReport`].
//!
//! * **Pipelined**: two fused kernels per iteration, one host transfer per iteration in
//!   `paper` mode (none inside a batch in `device` mode):
//!   1. `bicg_update` — second stage of ⟨p̃,q⟩ (and the norms of its breakdown test),
//!      α = ρ/⟨p̃,q⟩, x += αp, r −= αq, r̃ −= αq̃, first stage of ⟨z,r̃⟩, ‖z‖², ‖r̃‖², ‖r‖²;
//!   2. `bicg_direction_spmv` — second stage of those (ρ, the convergence check on ‖r‖,
//!      the breakdown test of ρ), β = ρ/ρ_old, the new directions p = z + βp, p̃ = z̃ + βp̃
//!      formed on the fly inside both products (every gather recomputes its entry; the
//!      directions ping-pong between two buffers), q = A·p, q̃ = Aᵀ·p̃, and the first stage of
//!      ⟨p̃,q⟩, ‖p̃‖², ‖q‖².
//!
//!   Fewer launches are not possible without changing the algorithm: the products need every
//!   entry of the new directions (a grid-wide dependency) and the update needs the finished
//!   ⟨p̃,q⟩, so there are two global synchronisation points per iteration, hence two launches.
//!   (Three would be the straightforward split: a separate direction update before the
//!   SpMV; fusing it into the gathers saves that launch and one pass over four vectors.)
//!   The paper-mode readback holds both slots of partial sums, the device-mode batch reads
//!   only the residual history.
//! * **Classical**, the way a BLAS-based code (paper 001 §3.3 uses CUBLAS dots and a few
//!   custom kernels) runs it, one inner product per `dot` launch:
//!   `spmv_csr`(A p), `spmv_csr`(Aᵀ p̃), `dot` ×3 (⟨p̃,q⟩, ‖p̃‖², ‖q‖²), `axpy` ×3 (x, r, r̃),
//!   `dot` (‖r‖²), [`diag_scale` ×2 (z, z̃)], `dot` ×2 (⟨z,r̃⟩, ‖r̃‖²) [+ `dot` ‖z‖²],
//!   `xpay` ×2 (p, p̃): **13** launches per iteration (**16** with Jacobi). In `paper` mode the
//!   host finishes every inner product: two readbacks and two uploads (⟨p̃,q⟩; then
//!   [ρ, ρ_old]) per iteration, the xpays of iteration i recorded at the start of i + 1
//!   (13j − 2 launches for j iterations). In `device` mode two `bicg_finish` launches (dot
//!   finish + breakdown test; the second also records ‖r‖) keep the scalars on the GPU:
//!   **15** launches per iteration (**18** with Jacobi).
//!
//! Both variants run the same algorithm as the CPU reference and detect the same failures,
//! with the same thresholds ([`crate::cpu::is_breakdown`]): breakdown of `"<r, r~>"`
//! (ρ ≈ 0 relative to ‖z‖‖r̃‖, the paper's "method fails") and of `"<p~, Ap>"` (α's
//! denominator ≈ 0 relative to ‖p̃‖‖q‖), reported as [`StopReason::Breakdown`] by name; a
//! non-finite ρ, ⟨p̃,q⟩, α or ‖r‖ is [`StopReason::NonFinite`]. In `paper` mode the host
//! tests the finished sums; in `device` mode the kernels test them and stop (status word,
//! quantity code in `state[3]`), so iterations recorded after a stop change nothing.
//!
//! Setup: `bicg_init` (r = b − Ax, r̃ = r and the first stage of ρ0, its norms and ‖r0‖²),
//! then the first direction kernel (pipelined) or p = z, p̃ = z̃ by copies / `diag_scale`
//! (classical). After the loop the true residual ‖b − Ax‖/‖b‖ is recomputed in f64 (with
//! `bicg_init` on the GPU for f64, on the CPU for f32) and guards convergence as for CG
//! (the shared driver: restarts from x when it misses, never a false convergence).
//!
//! [`StopReason::Breakdown`]: crate::solvers::StopReason::Breakdown
//! [`StopReason::NonFinite`]: crate::solvers::StopReason::NonFinite

use std::cell::Cell;

use crate::base::error::Result;
use crate::base::scalar::{Precision, Scalar};
use crate::gpu::kernels::{
    FLAG_MONITOR, FLAG_NEGATE, FLAG_SHIFT, GpuStatus, Params, SolverBuffers, solver_kernel,
};
use crate::gpu::{Batch, Engine, GpuMatrix, Kernel, ShaderConfig, Spmv};
use crate::matrix::Csr;
use crate::solvers::{CheckMode, Method, Monitor, Precond, Solution, SolveOptions, Variant};

use super::driver::{
    GpuIterative, LoopEnd, Run, Start, add, drive, start_gpu_solve, sum_component,
};

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
// Classical partial slots: ⟨p̃,q⟩, ‖p̃‖², ‖q‖², then ⟨z,r̃⟩, ‖z‖², ‖r̃‖², ‖r‖² (the order of
// bicg_init's packed vec4). bicg_init writes its packed sums to slot 0.
const SLOT_PTQ: u32 = 0;
const SLOT_RHO: u32 = 3;
const SLOT_RR: u32 = 6;
const CLASSICAL_SLOTS: u32 = 7;

/// The linear system resident on the GPU, with Aᵀ.
struct System<T> {
    a: GpuMatrix<T>,
    at: GpuMatrix<T>,
    b: wgpu::Buffer,
    x: wgpu::Buffer,
    /// D⁻¹ with Jacobi, a 1-entry dummy otherwise (kernels branch on `params.jacobi`).
    dinv: wgpu::Buffer,
    r: wgpu::Buffer,
    rt: wgpu::Buffer,
    /// Directions: a ping-pong pair (pipelined); the classical variant uses `[0]`.
    p: [wgpu::Buffer; 2],
    pt: [wgpu::Buffer; 2],
    q: wgpu::Buffer,
    qt: wgpu::Buffer,
    n: usize,
    jacobi: bool,
}

impl<T: Scalar> System<T> {
    fn upload(
        engine: &Engine,
        a: &Csr<T>,
        gpu_a: GpuMatrix<T>,
        b: &[T],
        x0: Option<&[T]>,
        jacobi: bool,
        max_padding: f64,
    ) -> Result<Self> {
        let n = a.nrows();
        let (x, dinv) = super::driver::upload_x_and_dinv(engine, a, x0, jacobi)?;
        let vec = |name| engine.storage_zeroed::<T>(name, n);
        Ok(System {
            // The one-time transpose, in A's format: both recurrences then use the
            // non-transposed kernel.
            at: GpuMatrix::upload_with(engine, &a.transpose(), gpu_a.format(), max_padding)?,
            a: gpu_a,
            b: engine.storage_from("b", b)?,
            x,
            dinv,
            r: vec("r")?,
            rt: vec("r~")?,
            p: [vec("p")?, vec("p (ping-pong)")?],
            pt: [vec("p~")?, vec("p~ (ping-pong)")?],
            q: vec("q = Ap")?,
            qt: vec("q~ = A^T p~")?,
            n,
            jacobi,
        })
    }
}

/// What both variants share: the system, `bicg_init`, the true residual and stop reasons.
struct Common<'a, T> {
    engine: &'a Engine,
    a: &'a Csr<T>,
    b: &'a [T],
    sys: &'a System<T>,
    bufs: &'a SolverBuffers,
    init: Kernel,
    bg_init: wgpu::BindGroup,
}

impl<'a, T: Scalar> Common<'a, T> {
    fn new(
        engine: &'a Engine,
        a: &'a Csr<T>,
        b: &'a [T],
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
    ) -> Result<Self> {
        let init = solver_kernel::<T>(engine, "bicg_init", sys.a.shader_config(engine))?;
        let params = engine.uniform_from("bicg init params", &base_params(sys, bufs));
        let mut e = vec![
            (1, &bufs.partials),
            (2, &bufs.scalars),
            (4, &params),
            (8, &sys.x),
            (9, &sys.b),
            (10, &sys.r),
            (11, &sys.rt),
            (12, &sys.dinv),
        ];
        e.extend(sys.a.bindings(false));
        let bg_init = engine.bind_group_at(&init, &e);
        Ok(Common {
            engine,
            a,
            b,
            sys,
            bufs,
            init,
            bg_init,
        })
    }

    fn groups(&self) -> u32 {
        self.bufs.groups
    }

    fn record_init(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.init, &self.bg_init, self.groups());
    }

    /// ‖b − Ax‖₂/‖b‖₂ in f64: on the GPU with `bicg_init` for f64 (it overwrites r, r̃ and
    /// slot 0, which a restart recomputes anyway), on the CPU from x for f32.
    fn true_relative(&self) -> Result<f64> {
        let b_norm = crate::cpu::norm2_f64(self.b);
        let scale = if b_norm > 0.0 { b_norm } else { 1.0 };
        match T::PRECISION {
            Precision::F64 => {
                let g = self.groups() as usize;
                let mut batch = self.engine.begin("true residual");
                self.record_init(&mut batch);
                let parts: Vec<T> = batch.submit_and_read(&self.bufs.partials, 0, 4 * g)?;
                Ok(sum_component(&parts, g, 0, 3).sqrt() / scale)
            }
            Precision::F32 => {
                let x: Vec<T> = self.engine.read(&self.sys.x, 0, self.sys.n)?;
                Ok(crate::cpu::true_relative_residual(self.a, self.b, &x))
            }
        }
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

    /// Reads back `slots` slots of partial sums from slot `first` (one readback).
    fn read_slots(&self, batch: Batch<'_>, first: u32, slots: u32) -> Result<Vec<T>> {
        let g = self.groups() as usize;
        batch.submit_and_read(
            &self.bufs.partials,
            4 * g * first as usize,
            4 * g * slots as usize,
        )
    }
}

fn base_params<T>(sys: &System<T>, bufs: &SolverBuffers) -> Params {
    Params {
        n: sys.n as u32,
        groups: bufs.groups,
        jacobi: sys.jacobi as u32,
        ..Default::default()
    }
}

/// The host's version of the kernels' test of ρ: non-finite, or numerically zero relative to
/// ‖z‖‖r̃‖ (as [`crate::cpu::bicg`]).
fn check_rho<T: Scalar>(rho: f64, zz: f64, rtrt: f64) -> Option<LoopEnd> {
    if !rho.is_finite() {
        Some(LoopEnd::NonFinite)
    } else if crate::cpu::is_breakdown::<T>(rho, zz.sqrt() * rtrt.sqrt()) {
        Some(LoopEnd::Breakdown(BREAKDOWN_RHO.into()))
    } else {
        None
    }
}

/// The host's test of ⟨p̃,q⟩ and of α = ρ/⟨p̃,q⟩ (evaluated in `T`, as the device does).
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

/// Pipelined BiCG: `bicg_update` + `bicg_direction_spmv`, 2 launches per iteration.
pub struct Pipelined<'a, T> {
    c: &'a Common<'a, T>,
    update: Kernel,
    direction: Kernel,
    /// `[k]`: reads the directions in buffer k, writes them to buffer 1 − k.
    bg_direction: [wgpu::BindGroup; 2],
    /// `[k]`: uses the directions in buffer k.
    bg_update: [wgpu::BindGroup; 2],
    /// Which direction buffer holds the current p, p̃.
    current: Cell<usize>,
    /// A stop the host found while finishing the setup's sums (`paper` mode).
    pending: Cell<Option<LoopEnd>>,
}

impl<'a, T: Scalar> Pipelined<'a, T> {
    fn new(engine: &Engine, c: &'a Common<'a, T>, mode: CheckMode) -> Result<Self> {
        let (sys, bufs) = (c.sys, c.bufs);
        let cfg = sys.a.shader_config(engine);
        let update = solver_kernel::<T>(engine, "bicg_update", cfg)?;
        let direction = solver_kernel::<T>(engine, "bicg_direction_spmv", cfg)?;
        let flags = if mode == CheckMode::Device {
            FLAG_CHECKS
        } else {
            0
        };
        let params = engine.uniform_from(
            "bicg params",
            &Params {
                flags,
                ..base_params(sys, bufs)
            },
        );
        let bg_direction = [0, 1].map(|k| {
            let mut e = bufs.common(&params);
            e.extend(sys.a.bindings(false));
            e.extend(sys.at.bindings(true));
            e.extend([
                (11, &sys.r),
                (12, &sys.rt),
                (13, &sys.p[k]),
                (14, &sys.pt[k]),
                (15, &sys.p[1 - k]),
                (16, &sys.pt[1 - k]),
                (17, &sys.q),
                (18, &sys.qt),
                (19, &sys.dinv),
            ]);
            engine.bind_group_at(&direction, &e)
        });
        let bg_update = [0, 1].map(|k| {
            let mut e = bufs.common(&params);
            e.extend([
                (5, &sys.x),
                (6, &sys.r),
                (7, &sys.rt),
                (8, &sys.p[k]),
                (9, &sys.q),
                (10, &sys.qt),
                (11, &sys.dinv),
            ]);
            engine.bind_group_at(&update, &e)
        });
        Ok(Pipelined {
            c,
            update,
            direction,
            bg_direction,
            bg_update,
            current: Cell::new(0),
            pending: Cell::new(None),
        })
    }

    fn record_direction(&self, batch: &mut Batch<'_>) {
        let k = self.current.get();
        batch.dispatch(&self.direction, &self.bg_direction[k], self.c.groups());
        self.current.set(1 - k);
    }

    /// Host-side tests on slots 0 (ρ, ‖z‖², ‖r̃‖², ‖r‖²) and 1 (⟨p̃,q⟩, ‖p̃‖², ‖q‖²).
    fn check(&self, parts: &[T]) -> Option<LoopEnd> {
        let g = self.c.groups() as usize;
        let s = |slot, comp| sum_component(parts, g, slot, comp);
        let rho = s(0, 0);
        check_rho::<T>(rho, s(0, 1), s(0, 2))
            .or_else(|| check_ptq::<T>(s(1, 0), s(1, 1), s(1, 2), rho))
    }
}

impl<T: Scalar> GpuIterative<T> for Pipelined<'_, T> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        self.pending.set(None);
        let mut batch = engine.begin("bicg setup");
        self.c.record_init(&mut batch);
        self.record_direction(&mut batch);
        match mode {
            CheckMode::Device => {
                let v: Vec<T> =
                    batch.submit_and_read(&self.c.bufs.history, run.history.len(), 1)?;
                Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
            }
            CheckMode::Paper => {
                let parts = self.c.read_slots(batch, 0, 2)?;
                self.pending.set(self.check(&parts));
                Ok(Some(sum_component(&parts, self.c.groups() as usize, 0, 3)))
            }
        }
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        let k = self.current.get();
        batch.dispatch(&self.update, &self.bg_update[k], self.c.groups());
        self.record_direction(batch);
    }

    /// One submit of the two kernels and one readback of both partial slots per iteration;
    /// the host finishes ‖r‖ (convergence), ρ and ⟨p̃,q⟩ (breakdowns) before the next submit
    /// would use them.
    fn paper_loop(
        &self,
        engine: &Engine,
        run: &mut Run<'_>,
        opts: &SolveOptions,
        threshold: f64,
    ) -> Result<LoopEnd> {
        let g = self.c.groups() as usize;
        loop {
            if let Some(end) = self.pending.take() {
                return Ok(end);
            }
            if run.monitor.cancelled() {
                return Ok(LoopEnd::Cancelled);
            }
            if run.iterations() >= opts.max_iter {
                return Ok(LoopEnd::MaxIterations);
            }
            let before = engine.counters().snapshot();
            let mut batch = engine.begin("bicg iteration");
            self.record_iteration(&mut batch);
            let parts = self.c.read_slots(batch, 0, 2)?;
            run.loop_counts = add(
                &run.loop_counts,
                &engine.counters().snapshot().since(&before),
            );
            run.recorded += 1;
            run.batch_size = 1;
            let rr = sum_component(&parts, g, 0, 3);
            run.push(rr.sqrt());
            if !rr.is_finite() {
                return Ok(LoopEnd::NonFinite);
            }
            if rr.sqrt() <= threshold {
                return Ok(LoopEnd::Converged);
            }
            self.pending.set(self.check(&parts));
        }
    }

    fn true_relative(&self, _engine: &Engine) -> Result<f64> {
        self.c.true_relative()
    }

    fn stop_reason(&self, status: GpuStatus) -> LoopEnd {
        self.c.stop_reason(status)
    }
}

/// Classical BiCG as a BLAS-based code runs it (see the module docs for the launch list).
pub struct Classical<'a, T> {
    c: &'a Common<'a, T>,
    /// z = D⁻¹r, z̃ = D⁻¹r̃ (Jacobi only; otherwise r, r̃ are used).
    z: Option<(wgpu::Buffer, wgpu::Buffer)>,
    spmv: Spmv<T>,
    dot: Kernel,
    axpy: Kernel,
    xpay: Kernel,
    diag: Kernel,
    finish: Kernel,
    bg_spmv_a: wgpu::BindGroup,
    bg_spmv_at: wgpu::BindGroup,
    /// ⟨p̃,q⟩, ‖p̃‖², ‖q‖².
    bg_dots_ptq: [wgpu::BindGroup; 3],
    bg_finish_ptq: wgpu::BindGroup,
    bg_axpy: [wgpu::BindGroup; 3],
    /// z ← D⁻¹r, z̃ ← D⁻¹r̃; and at setup p ← D⁻¹r, p̃ ← D⁻¹r̃.
    bg_diag: Option<[wgpu::BindGroup; 4]>,
    bg_dot_rr: wgpu::BindGroup,
    /// ⟨z,r̃⟩, ‖r̃‖², and ‖z‖² with Jacobi.
    bg_dots_rho: Vec<wgpu::BindGroup>,
    bg_finish_rho: wgpu::BindGroup,
    bg_finish_init: wgpu::BindGroup,
    bg_xpay: [wgpu::BindGroup; 2],
    /// `paper` mode: the next iteration is the first (no xpay before its products).
    first: Cell<bool>,
    /// `paper` mode: ρ last sent to the device (β's next denominator).
    rho: Cell<f64>,
    pending: Cell<Option<LoopEnd>>,
}

impl<'a, T: Scalar> Classical<'a, T> {
    fn new(engine: &Engine, c: &'a Common<'a, T>) -> Result<Self> {
        let (sys, bufs) = (c.sys, c.bufs);
        let cfg = sys.a.shader_config(engine);
        let k = |name| solver_kernel::<T>(engine, name, cfg);
        let (dot, axpy, xpay, diag, finish) = (
            k("dot")?,
            k("axpy")?,
            k("xpay")?,
            k("diag_scale")?,
            k("bicg_finish")?,
        );
        let spmv = Spmv::<T>::with_config(
            engine,
            &sys.a,
            ShaderConfig {
                subgroups: false,
                ..cfg
            },
        )?;
        let base = base_params(sys, bufs);
        let params = |p: Params| engine.uniform_from("bicg params", &p);
        let bind = |kernel: &Kernel, p: &Params, vecs: &[(u32, &wgpu::Buffer)]| {
            let pb = params(*p);
            let mut e = bufs.common(&pb);
            e.extend_from_slice(vecs);
            engine.bind_group_at(kernel, &e)
        };
        let z = if sys.jacobi {
            Some((
                engine.storage_zeroed::<T>("z", sys.n)?,
                engine.storage_zeroed::<T>("z~", sys.n)?,
            ))
        } else {
            None
        };
        let (zr, zrt) = match &z {
            Some((z, zt)) => (z, zt),
            None => (&sys.r, &sys.rt),
        };
        let (p, pt) = (&sys.p[0], &sys.pt[0]);
        let dot_at = |slot, x: &wgpu::Buffer, y: &wgpu::Buffer| {
            bind(&dot, &Params { slot, ..base }, &[(5, x), (6, y)])
        };
        let bg_dots_ptq = [
            dot_at(SLOT_PTQ, pt, &sys.q),
            dot_at(SLOT_PTQ + 1, pt, pt),
            dot_at(SLOT_PTQ + 2, &sys.q, &sys.q),
        ];
        let mut bg_dots_rho = vec![
            dot_at(SLOT_RHO, zr, &sys.rt),
            dot_at(SLOT_RHO + 2, &sys.rt, &sys.rt),
        ];
        if sys.jacobi {
            bg_dots_rho.push(dot_at(SLOT_RHO + 1, zr, zr));
        }
        let bg_dot_rr = dot_at(SLOT_RR, &sys.r, &sys.r);
        let finish_params = |slot, dst, flags, comp| Params {
            slot,
            dst,
            flags,
            comp,
            num: S_RHO,
            ..base
        };
        let bg_finish_ptq = bind(
            &finish,
            &finish_params(SLOT_PTQ, S_PTQ, FLAG_ALPHA, CODE_PTQ),
            &[],
        );
        let bg_finish_rho = bind(
            &finish,
            &finish_params(SLOT_RHO, S_RHO, FLAG_MONITOR | FLAG_SHIFT, CODE_RHO),
            &[],
        );
        let bg_finish_init = bind(
            &finish,
            &finish_params(0, S_RHO, FLAG_MONITOR | FLAG_PACKED, CODE_RHO),
            &[],
        );
        // α = ρ/⟨p̃,q⟩ from the device scalars.
        let alpha = |flags| Params {
            num: S_RHO,
            den: S_PTQ,
            flags,
            ..base
        };
        let bg_axpy = [
            bind(&axpy, &alpha(0), &[(5, p), (6, &sys.x)]),
            bind(&axpy, &alpha(FLAG_NEGATE), &[(5, &sys.q), (6, &sys.r)]),
            bind(&axpy, &alpha(FLAG_NEGATE), &[(5, &sys.qt), (6, &sys.rt)]),
        ];
        let bg_diag = z.as_ref().map(|(z, zt)| {
            let d = |src: &wgpu::Buffer, dst: &wgpu::Buffer| {
                bind(&diag, &base, &[(5, &sys.dinv), (6, src), (7, dst)])
            };
            [d(&sys.r, z), d(&sys.rt, zt), d(&sys.r, p), d(&sys.rt, pt)]
        });
        // β = ρ/ρ_old.
        let beta = Params {
            num: S_RHO,
            den: S_RHO_OLD,
            ..base
        };
        let bg_xpay = [
            bind(&xpay, &beta, &[(5, zr), (6, p)]),
            bind(&xpay, &beta, &[(5, zrt), (6, pt)]),
        ];
        let bg_spmv_a = spmv.bind(engine, &sys.a, p, &sys.q);
        let bg_spmv_at = spmv.bind(engine, &sys.at, pt, &sys.qt);
        Ok(Classical {
            c,
            z,
            spmv,
            dot,
            axpy,
            xpay,
            diag,
            finish,
            bg_spmv_a,
            bg_spmv_at,
            bg_dots_ptq,
            bg_finish_ptq,
            bg_axpy,
            bg_diag,
            bg_dot_rr,
            bg_dots_rho,
            bg_finish_rho,
            bg_finish_init,
            bg_xpay,
            first: Cell::new(true),
            rho: Cell::new(0.0),
            pending: Cell::new(None),
        })
    }

    /// q = A·p, q̃ = Aᵀ·p̃ and the first stages of ⟨p̃,q⟩, ‖p̃‖², ‖q‖².
    fn record_products(&self, batch: &mut Batch<'_>) {
        let sys = self.c.sys;
        self.spmv.record(batch, &sys.a, &self.bg_spmv_a);
        self.spmv.record(batch, &sys.at, &self.bg_spmv_at);
        for bg in &self.bg_dots_ptq {
            batch.dispatch(&self.dot, bg, self.c.groups());
        }
    }

    /// x, r, r̃ updates, ‖r‖², z = D⁻¹r, z̃ = D⁻¹r̃ and the first stages of ρ and its norms.
    fn record_updates(&self, batch: &mut Batch<'_>) {
        let g = self.c.groups();
        for bg in &self.bg_axpy {
            batch.dispatch(&self.axpy, bg, g);
        }
        batch.dispatch(&self.dot, &self.bg_dot_rr, g);
        if let Some(bg) = &self.bg_diag {
            batch.dispatch(&self.diag, &bg[0], g);
            batch.dispatch(&self.diag, &bg[1], g);
        }
        for bg in &self.bg_dots_rho {
            batch.dispatch(&self.dot, bg, g);
        }
    }

    fn record_xpays(&self, batch: &mut Batch<'_>) {
        for bg in &self.bg_xpay {
            batch.dispatch(&self.xpay, bg, self.c.groups());
        }
    }

    /// p = z, p̃ = z̃ (the first iteration's directions): `diag_scale` with Jacobi, copies
    /// otherwise.
    fn record_first_directions(&self, batch: &mut Batch<'_>) {
        let sys = self.c.sys;
        match &self.bg_diag {
            Some(bg) => {
                batch.dispatch(&self.diag, &bg[2], self.c.groups());
                batch.dispatch(&self.diag, &bg[3], self.c.groups());
            }
            None => {
                let bytes = (sys.n * std::mem::size_of::<T>()) as u64;
                batch.copy(&sys.r, 0, &sys.p[0], 0, bytes);
                batch.copy(&sys.rt, 0, &sys.pt[0], 0, bytes);
            }
        }
    }
}

impl<T: Scalar> GpuIterative<T> for Classical<'_, T> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        self.pending.set(None);
        self.first.set(true);
        let mut batch = engine.begin("bicg setup");
        self.c.record_init(&mut batch);
        self.record_first_directions(&mut batch);
        match mode {
            CheckMode::Device => {
                batch.dispatch(&self.finish, &self.bg_finish_init, 1);
                let v: Vec<T> =
                    batch.submit_and_read(&self.c.bufs.history, run.history.len(), 1)?;
                Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
            }
            CheckMode::Paper => {
                let parts = self.c.read_slots(batch, 0, 1)?;
                let g = self.c.groups() as usize;
                let s = |comp| sum_component(&parts, g, 0, comp);
                let rho = s(0);
                engine.write(&self.c.bufs.scalars, S_RHO as usize, &[T::from_f64(rho)]);
                self.rho.set(rho);
                self.pending.set(check_rho::<T>(rho, s(1), s(2)));
                Ok(Some(s(3)))
            }
        }
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.record_products(batch);
        batch.dispatch(&self.finish, &self.bg_finish_ptq, 1);
        self.record_updates(batch);
        batch.dispatch(&self.finish, &self.bg_finish_rho, 1);
        self.record_xpays(batch);
    }

    /// The host drives every scalar: ⟨p̃,q⟩ (with its norms) is read back and sent up before
    /// the updates; ρ, its norms and ‖r‖² are read back and [ρ, ρ_old] sent up before the
    /// next directions.
    fn paper_loop(
        &self,
        engine: &Engine,
        run: &mut Run<'_>,
        opts: &SolveOptions,
        threshold: f64,
    ) -> Result<LoopEnd> {
        let g = self.c.groups() as usize;
        let scalars = &self.c.bufs.scalars;
        loop {
            if let Some(end) = self.pending.take() {
                return Ok(end);
            }
            if run.monitor.cancelled() {
                return Ok(LoopEnd::Cancelled);
            }
            if run.iterations() >= opts.max_iter {
                return Ok(LoopEnd::MaxIterations);
            }
            let before = engine.counters().snapshot();
            let mut batch = engine.begin("bicg products");
            if !self.first.replace(false) {
                // The previous iteration's p = z + βp, p̃ = z̃ + βp̃, now that β is on the device.
                self.record_xpays(&mut batch);
            }
            self.record_products(&mut batch);
            let parts = self.c.read_slots(batch, SLOT_PTQ, 3)?;
            run.recorded += 1;
            run.batch_size = 1;
            let s = |slot| sum_component(&parts, g, slot, 0);
            let ptq = s(0);
            if let Some(end) = check_ptq::<T>(ptq, s(1), s(2), self.rho.get()) {
                run.loop_counts = add(
                    &run.loop_counts,
                    &engine.counters().snapshot().since(&before),
                );
                return Ok(end);
            }
            engine.write(scalars, S_PTQ as usize, &[T::from_f64(ptq)]);
            let mut batch = engine.begin("bicg updates");
            self.record_updates(&mut batch);
            let parts = self.c.read_slots(batch, SLOT_RHO, 4)?;
            let s = |slot| sum_component(&parts, g, slot, 0);
            let (rho, rtrt, rr) = (s(0), s(2), s(3));
            let zz = if self.z.is_some() { s(1) } else { rr };
            // β's numerator and denominator: [ρ, ρ_old] in one write.
            engine.write(
                scalars,
                S_RHO as usize,
                &[T::from_f64(rho), T::from_f64(self.rho.get())],
            );
            self.rho.set(rho);
            run.loop_counts = add(
                &run.loop_counts,
                &engine.counters().snapshot().since(&before),
            );
            run.push(rr.sqrt());
            if !rr.is_finite() {
                return Ok(LoopEnd::NonFinite);
            }
            if rr.sqrt() <= threshold {
                return Ok(LoopEnd::Converged);
            }
            self.pending.set(check_rho::<T>(rho, zz, rtrt));
        }
    }

    fn true_relative(&self, _engine: &Engine) -> Result<f64> {
        self.c.true_relative()
    }

    fn stop_reason(&self, status: GpuStatus) -> LoopEnd {
        self.c.stop_reason(status)
    }
}

/// Solves A x = b by BiCG on the GPU (`opts.variant` picks [`Classical`] or [`Pipelined`],
/// `opts.check_mode` the convergence checking, `opts.precond` Jacobi or none).
///
/// Errors: the input checks of [`validate_system`] (a zero diagonal with Jacobi is
/// [`KrylovError::ZeroDiagonal`]), f64 on a device without SHADER_F64
/// ([`KrylovError::MissingFeature`]), buffers over the device limits. A breakdown is a
/// result (`reason: breakdown`, the quantity named), never a convergence.
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
    let n = a.nrows();
    let _b_norm = report.b_norm;

    let jacobi = opts.precond == Precond::Jacobi;
    let gpu_a = super::driver::upload_matrix(engine, a, opts, &mut report)?;
    let sys = System::upload(engine, a, gpu_a, b, x0, jacobi, opts.max_padding)?;
    report.transpose_bytes = Some(sys.at.bytes());
    let groups = engine.reduction_groups(n);
    let history_len = opts.max_iter.min(1 << 24) + 2;
    let slots = match opts.variant {
        Variant::Pipelined => 2,
        Variant::Classical => CLASSICAL_SLOTS,
    };
    let bufs = SolverBuffers::new::<T>(engine, groups, slots, history_len)?;
    let eps = crate::cpu::BREAKDOWN_FACTOR * T::PRECISION.epsilon();
    engine.write(&bufs.scalars, S_EPS, &[T::from_f64(eps)]);
    let common = Common::new(engine, a, b, &sys, &bufs)?;
    let solver: Box<dyn GpuIterative<T> + '_> = match opts.variant {
        Variant::Pipelined => Box::new(Pipelined::new(engine, &common, opts.check_mode)?),
        Variant::Classical => Box::new(Classical::new(engine, &common)?),
    };
    drive(
        engine,
        solver.as_ref(),
        &bufs,
        opts,
        threshold,
        monitor,
        &mut report,
        &counts0,
    )?;
    let x: Vec<T> = engine.read(&sys.x, 0, n)?;
    report.counts = engine.counters().snapshot().since(&counts0);
    Ok(Solution { x, report })
}
