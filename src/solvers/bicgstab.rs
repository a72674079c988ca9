//! BiCGStab on the GPU: [`ClassicalBicgstab`] and [`PipelinedBicgstab`] side by side, both
//! mirroring the CPU reference [`crate::cpu::bicgstab`] step by step (same shadow residual
//! r0* = r0, same breakdown tests, same early exit on the half step, same Jacobi right
//! preconditioning A D⁻¹ y = b with x updated along D⁻¹p and D⁻¹s).
//!
//! * **Pipelined** (paper 000 §3.2, Alg. 4 with β = −⟨As,r0*⟩/⟨Ap,r0*⟩): exactly four fused
//!   kernels per iteration —
//!   1. `spmv_dot_bicgstab_p`: Ap = A·D⁻¹p + first stage of ⟨Ap,r0*⟩, ⟨Ap,Ap⟩ (and the second
//!      stage of ⟨r,r0*⟩, ⟨r,r⟩ left by kernel 4, done redundantly by every workgroup);
//!   2. `update_s_bicgstab`: α recomputed in every workgroup from the partial sums,
//!      s = r − αAp + first stage of ⟨s,s⟩;
//!   3. `spmv_dot_bicgstab_s`: As = A·D⁻¹s + first stage of ⟨As,s⟩, ⟨As,As⟩, ⟨As,r0*⟩;
//!   4. `update_xrp_bicgstab`: x += αD⁻¹p + ωD⁻¹s, r = s − ωAs, p = r + β(p − ωAp) +
//!      first stage of ⟨r,r0*⟩, ⟨r,r⟩.
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
//! * **Classical** (paper 000 Alg. 3) the way a BLAS-based code runs it: 2 `spmv_csr`, 7 `dot`
//!   (⟨Ap,r0*⟩, ⟨Ap,Ap⟩ for the breakdown scale, ⟨s,s⟩ for the early exit, ⟨As,s⟩, ⟨As,As⟩,
//!   ⟨r,r⟩, ⟨r,r0*⟩), 5 `axpy` (s = r − αAp in place of r, x += αp̂, x += ωŝ, r = s − ωAs,
//!   p −= ωAp) and 1 `xpay` (p = r + βp), + 2 `diag_scale` (p̂ = D⁻¹p, ŝ = D⁻¹s) with Jacobi:
//!   15 launches per iteration (17 with Jacobi). `paper` mode: the host finishes every inner
//!   product — 4 readbacks per iteration (⟨Ap,r0*⟩ & ⟨Ap,Ap⟩; ⟨s,s⟩; ⟨As,s⟩ & ⟨As,As⟩;
//!   ⟨r,r⟩ & ⟨r,r0*⟩) and 3 uploads of the scalars it derives (⟨Ap,r0*⟩; ⟨As,s⟩ & ⟨As,As⟩;
//!   ρ & β). `device` mode: 3 `bicgstab_finish` launches more (18, or 20 with Jacobi) do
//!   the second reduction stages, the scalars and the breakdown tests on the GPU.
//!
//! Loop counts (`report.loop_counts`) of a solve that converges after j iterations (J = 1
//! with Jacobi, else 0; `device` mode: per iteration recorded, batches included):
//!
//! | variant, mode | launches | readbacks | uploads |
//! |---|---|---|---|
//! | pipelined, paper | 4j (4j − 1 when it ends on the half step) | j, + 1 per convergence claim of the estimate | 0 |
//! | pipelined, device | 4 per iteration | 1 per batch | 0 |
//! | classical, paper | (15 + 2J)j − 2 ((15 + 2J)j − 9 − J on the half step) | 4j (4j − 2) | 3j − 1 (3j − 2) |
//! | classical, device | 18 + 2J per iteration | 1 per batch | 0 |
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

use crate::base::error::Result;
use crate::base::scalar::{Precision, Scalar};
use crate::gpu::kernels::{FLAG_NEGATE, GpuStatus, Params, SolverBuffers, solver_kernel};
use crate::gpu::{Batch, Engine, GpuMatrix, Kernel, ShaderConfig, Spmv};
use crate::matrix::Csr;
use crate::solvers::{CheckMode, Method, Monitor, Precond, Solution, SolveOptions, Variant};

pub use super::driver::MAX_RESTARTS;
use super::driver::{
    GpuIterative, LoopEnd, Run, Start, add, drive, start_gpu_solve, sum_component,
};

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

/// The quantity a `STATUS_BREAKDOWN` names, by the code the kernels store in `state[3]`.
fn breakdown_quantity(code: u32) -> &'static str {
    match code {
        1 => "<r, r0*>",
        2 => "<Ap, r0*>",
        3 => "omega",
        _ => "unknown",
    }
}

/// The linear system resident on the GPU.
struct System<T> {
    a: GpuMatrix<T>,
    b: wgpu::Buffer,
    x: wgpu::Buffer,
    /// D⁻¹ with Jacobi, a 1-entry dummy otherwise (kernels branch on `params.jacobi`).
    dinv: wgpu::Buffer,
    r: wgpu::Buffer,
    rstar: wgpu::Buffer,
    p: wgpu::Buffer,
    ap: wgpu::Buffer,
    /// s (pipelined); ŝ = D⁻¹s with Jacobi (classical, whose s lives in r).
    s: wgpu::Buffer,
    as_: wgpu::Buffer,
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
    ) -> Result<Self> {
        let n = a.nrows();
        let (x, dinv) = super::driver::upload_x_and_dinv(engine, a, x0, jacobi)?;
        let v = |label| engine.storage_zeroed::<T>(label, n);
        Ok(System {
            a: gpu_a,
            b: engine.storage_from("b", b)?,
            x,
            dinv,
            r: v("r")?,
            rstar: v("r0*")?,
            p: v("p")?,
            ap: v("ap")?,
            s: v("s")?,
            as_: v("as")?,
            n,
            jacobi,
        })
    }
}

/// What both variants share: the system, the buffers, the init kernel (setup and the f64
/// true residual) and the reading of a GPU stop.
struct Common<'a, T> {
    engine: &'a Engine,
    a: &'a Csr<T>,
    b: &'a [T],
    sys: &'a System<T>,
    bufs: &'a SolverBuffers,
    init: Kernel,
    bg_init: wgpu::BindGroup,
    base: Params,
}

impl<'a, T: Scalar> Common<'a, T> {
    fn new(
        engine: &'a Engine,
        a: &'a Csr<T>,
        b: &'a [T],
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
    ) -> Result<Self> {
        let init = solver_kernel::<T>(engine, "bicgstab_init", sys.a.shader_config(engine))?;
        let base = Params {
            n: sys.n as u32,
            groups: bufs.groups,
            jacobi: sys.jacobi as u32,
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
        let bg_init = engine.bind_group_at(&init, &e);
        Ok(Common {
            engine,
            a,
            b,
            sys,
            bufs,
            init,
            bg_init,
            base,
        })
    }

    fn params(&self, p: Params) -> wgpu::Buffer {
        self.engine.uniform_from("bicgstab params", &p)
    }

    /// A bind group of a solver kernel: the common bindings 0–4 and `vecs`.
    fn bind(
        &self,
        kernel: &Kernel,
        params: &wgpu::Buffer,
        vecs: &[(u32, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let mut e = self.bufs.common(params);
        e.extend_from_slice(vecs);
        self.engine.bind_group_at(kernel, &e)
    }

    fn groups(&self) -> u32 {
        self.bufs.groups
    }

    /// Reads `slots` partial slots from slot `first` (one readback) of a recorded batch.
    fn read_slots(&self, batch: Batch<'_>, first: usize, slots: usize) -> Result<Vec<T>> {
        let g = self.groups() as usize;
        batch.submit_and_read(&self.bufs.partials, 4 * g * first, 4 * g * slots)
    }

    /// `device`-mode end of a setup batch: the history entry it recorded (`None`: stopped).
    fn read_setup_history(&self, batch: Batch<'_>, run: &Run<'_>) -> Result<Option<f64>> {
        let v: Vec<T> = batch.submit_and_read(&self.bufs.history, run.history.len(), 1)?;
        Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
    }

    /// ‖b − Ax‖₂/‖b‖₂ in f64: on the GPU for f64 solves (`bicgstab_init` recomputes r and
    /// its partial sums), on the CPU from the downloaded x for f32 solves.
    fn true_relative(&self) -> Result<f64> {
        let b_norm = crate::cpu::norm2_f64(self.b);
        let scale = if b_norm > 0.0 { b_norm } else { 1.0 };
        match T::PRECISION {
            Precision::F64 => {
                let g = self.groups() as usize;
                let mut batch = self.engine.begin("true residual");
                batch.dispatch(&self.init, &self.bg_init, self.groups());
                let parts: Vec<T> = batch.submit_and_read(&self.bufs.partials, 0, 4 * g)?;
                Ok(sum_component(&parts, g, 0, 1).sqrt() / scale)
            }
            Precision::F32 => {
                let x: Vec<T> = self.engine.read(&self.sys.x, 0, self.sys.n)?;
                Ok(crate::cpu::true_relative_residual(self.a, self.b, &x))
            }
        }
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

/// Adds what the engine counted since `before` to the loop counts.
fn count_since(engine: &Engine, run: &mut Run<'_>, before: &crate::solvers::WorkCounts) {
    run.loop_counts = add(
        &run.loop_counts,
        &engine.counters().snapshot().since(before),
    );
}

/// `cpu::bicgstab`'s `nrm`: √max(v, 0) of a value in T.
fn nrm<T: Scalar>(v: T) -> f64 {
    v.as_f64().max(0.0).sqrt()
}

/// Pipelined BiCGStab (paper 000, Alg. 4): four fused kernels per iteration.
pub struct PipelinedBicgstab<'a, T> {
    c: Common<'a, T>,
    spmv_p: Kernel,
    update_s: Kernel,
    spmv_s: Kernel,
    update: Kernel,
    bg_spmv_p_first: wgpu::BindGroup,
    bg_spmv_p: wgpu::BindGroup,
    bg_update_s: wgpu::BindGroup,
    bg_spmv_s: wgpu::BindGroup,
    bg_update: wgpu::BindGroup,
    /// `paper` mode's early exit: x += α·D⁻¹p only.
    bg_half_step: wgpu::BindGroup,
}

impl<'a, T: Scalar> PipelinedBicgstab<'a, T> {
    fn new(c: Common<'a, T>, mode: CheckMode) -> Result<Self> {
        let engine = c.engine;
        let sys = c.sys;
        let cfg = sys.a.shader_config(engine);
        let k = |name| solver_kernel::<T>(engine, name, cfg);
        let (spmv_p, update_s, spmv_s, update) = (
            k("spmv_dot_bicgstab_p")?,
            k("update_s_bicgstab")?,
            k("spmv_dot_bicgstab_s")?,
            k("update_xrp_bicgstab")?,
        );
        let paper = if mode == CheckMode::Paper {
            FLAG_PAPER
        } else {
            0
        };
        let with = |flags| {
            c.params(Params {
                flags: flags | paper,
                ..c.base
            })
        };
        let (p_plain, p_first, p_half) = (with(0), with(FLAG_FIRST), with(FLAG_HALF_STEP));
        let mut spmv_p_vecs = vec![(8, &sys.p), (9, &sys.ap), (10, &sys.rstar), (11, &sys.dinv)];
        spmv_p_vecs.extend(sys.a.bindings(false));
        let bg_spmv_p_first = c.bind(&spmv_p, &p_first, &spmv_p_vecs);
        let bg_spmv_p = c.bind(&spmv_p, &p_plain, &spmv_p_vecs);
        let bg_update_s = c.bind(
            &update_s,
            &p_plain,
            &[(5, &sys.r), (6, &sys.ap), (7, &sys.s)],
        );
        let mut spmv_s_vecs = vec![
            (8, &sys.s),
            (9, &sys.as_),
            (10, &sys.rstar),
            (11, &sys.dinv),
        ];
        spmv_s_vecs.extend(sys.a.bindings(false));
        let bg_spmv_s = c.bind(&spmv_s, &p_plain, &spmv_s_vecs);
        let update_vecs = [
            (5, &sys.x),
            (6, &sys.r),
            (7, &sys.p),
            (8, &sys.s),
            (9, &sys.ap),
            (10, &sys.as_),
            (11, &sys.rstar),
            (12, &sys.dinv),
        ];
        let bg_update = c.bind(&update, &p_plain, &update_vecs);
        let bg_half_step = c.bind(&update, &p_half, &update_vecs);
        Ok(PipelinedBicgstab {
            c,
            spmv_p,
            update_s,
            spmv_s,
            update,
            bg_spmv_p_first,
            bg_spmv_p,
            bg_update_s,
            bg_spmv_s,
            bg_update,
            bg_half_step,
        })
    }

    fn record_k1(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.spmv_p, &self.bg_spmv_p, self.c.groups());
    }
    fn record_k2_k3(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.update_s, &self.bg_update_s, self.c.groups());
        batch.dispatch(&self.spmv_s, &self.bg_spmv_s, self.c.groups());
    }
    fn record_k4(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.update, &self.bg_update, self.c.groups());
    }

    /// Submits kernel 4 alone (x, r, p of the iteration whose residual the host accepted).
    fn flush_update(&self, run: &mut Run<'_>) -> Result<()> {
        let engine = self.c.engine;
        let before = engine.counters().snapshot();
        let mut batch = engine.begin("bicgstab update");
        self.record_k4(&mut batch);
        batch.submit()?;
        count_since(engine, run, &before);
        Ok(())
    }

    /// The host side of one `paper`-mode iteration, after the readback of slots 0–3. Returns
    /// `Some(end)` to stop, `None` to go on with kernels 4 and 1 pending.
    fn paper_step(
        &self,
        parts: &[T],
        run: &mut Run<'_>,
        rstar_norm: f64,
        threshold: f64,
        pending: &mut bool,
    ) -> Result<Option<LoopEnd>> {
        let engine = self.c.engine;
        let g = self.c.groups() as usize;
        let sum = |slot, comp| T::from_f64(sum_component(parts, g, slot, comp));
        let res = *run.history.last().expect("the setup residual");
        // Alg. 4 l.5: ρ_i = ⟨r_i, r0*⟩, finite and not numerically zero.
        let rho = sum(0, 0);
        if !rho.is_finite() {
            return Ok(Some(LoopEnd::NonFinite));
        }
        if crate::cpu::is_breakdown::<T>(rho.as_f64(), res * rstar_norm) {
            return Ok(Some(LoopEnd::Breakdown("<r, r0*>".into())));
        }
        // l.7–8: ⟨Ap_i, r0*⟩ and α_i.
        let apr = sum(1, 0);
        let ap_norm = sum_component(parts, g, 1, 1).max(0.0).sqrt();
        if !apr.is_finite() {
            return Ok(Some(LoopEnd::NonFinite));
        }
        if crate::cpu::is_breakdown::<T>(apr.as_f64(), ap_norm * rstar_norm) {
            return Ok(Some(LoopEnd::Breakdown("<Ap, r0*>".into())));
        }
        let alpha = rho / apr;
        if !alpha.is_finite() {
            return Ok(Some(LoopEnd::NonFinite));
        }
        // The half step already converged: x_{i+1} = x_i + α_i D⁻¹p_i.
        let ss = sum(2, 0);
        let s_norm = nrm(ss);
        if s_norm <= threshold {
            let before = engine.counters().snapshot();
            let mut batch = engine.begin("bicgstab half step");
            batch.dispatch(&self.update, &self.bg_half_step, self.c.groups());
            batch.submit()?;
            count_since(engine, run, &before);
            run.push(s_norm);
            return Ok(Some(LoopEnd::Converged));
        }
        // l.11–14: ω_i and β_i.
        let (as_s, as_as, as_r) = (sum(3, 0), sum(3, 1), sum(3, 2));
        if !as_as.is_finite() {
            return Ok(Some(LoopEnd::NonFinite));
        }
        if as_as <= T::zero() || crate::cpu::is_breakdown::<T>(as_s.as_f64(), nrm(as_as) * s_norm) {
            return Ok(Some(LoopEnd::Breakdown("omega".into())));
        }
        let beta = -as_r / apr;
        let omega = as_s / as_as;
        if !beta.is_finite() {
            return Ok(Some(LoopEnd::NonFinite));
        }
        // The paper's residual: ⟨r_{i+1}, r_{i+1}⟩ = ⟨s,s⟩ − 2ω⟨s,As⟩ + ω²⟨As,As⟩.
        let est = ss - (omega + omega) * as_s + omega * omega * as_as;
        let res = nrm(est);
        if !est.is_finite() {
            self.flush_update(run)?;
            run.push(res);
            return Ok(Some(LoopEnd::NonFinite));
        }
        if res > threshold {
            run.push(res);
            *pending = true;
            return Ok(None);
        }
        // The estimate claims convergence: confirm it with the directly reduced ⟨r, r⟩ of
        // kernel 4 (finished by kernel 1, which also starts the next iteration).
        let before = engine.counters().snapshot();
        let mut batch = engine.begin("bicgstab confirm");
        self.record_k4(&mut batch);
        self.record_k1(&mut batch);
        let parts = self.c.read_slots(batch, 0, 1)?;
        count_since(engine, run, &before);
        let rr = T::from_f64(sum_component(&parts, g, 0, 1));
        let res = nrm(rr);
        run.push(res);
        Ok((res <= threshold).then_some(LoopEnd::Converged))
    }
}

impl<T: Scalar> GpuIterative<T> for PipelinedBicgstab<'_, T> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        let g = self.c.groups();
        let mut batch = engine.begin("bicgstab setup");
        batch.dispatch(&self.c.init, &self.c.bg_init, g);
        batch.dispatch(&self.spmv_p, &self.bg_spmv_p_first, g);
        match mode {
            CheckMode::Device => self.c.read_setup_history(batch, run),
            CheckMode::Paper => {
                let parts = self.c.read_slots(batch, 0, 1)?;
                Ok(Some(sum_component(&parts, g as usize, 0, 1)))
            }
        }
    }

    /// Kernels 2, 3, 4, 1: kernel 1 records the residual of the iteration kernel 4 ended.
    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.record_k2_k3(batch);
        self.record_k4(batch);
        self.record_k1(batch);
    }

    /// Paper 000's scheme: one submit of kernels (4, 1 of the previous iteration,) 2, 3 and
    /// one readback of all partial sums, finished on the host.
    fn paper_loop(
        &self,
        engine: &Engine,
        run: &mut Run<'_>,
        opts: &SolveOptions,
        threshold: f64,
    ) -> Result<LoopEnd> {
        // ‖r0*‖ = ‖r0‖: the residual the setup recorded.
        let rstar_norm = *run.history.last().expect("the setup residual");
        let mut pending = false;
        let end = loop {
            if run.monitor.cancelled() {
                break LoopEnd::Cancelled;
            }
            if run.iterations() >= opts.max_iter {
                break LoopEnd::MaxIterations;
            }
            let before = engine.counters().snapshot();
            let mut batch = engine.begin("bicgstab iteration");
            if pending {
                self.record_k4(&mut batch);
                self.record_k1(&mut batch);
            }
            pending = false;
            self.record_k2_k3(&mut batch);
            let parts = self.c.read_slots(batch, 0, 4)?;
            count_since(engine, run, &before);
            run.recorded += 1;
            run.batch_size = 1;
            if let Some(end) = self.paper_step(&parts, run, rstar_norm, threshold, &mut pending)? {
                break end;
            }
        };
        if pending {
            // The iteration limit (or a cancel) after an accepted residual: its x.
            self.flush_update(run)?;
        }
        Ok(end)
    }

    fn true_relative(&self, _engine: &Engine) -> Result<f64> {
        self.c.true_relative()
    }

    fn stop_reason(&self, status: GpuStatus) -> LoopEnd {
        self.c.stop_reason(status)
    }
}

/// Classical BiCGStab (paper 000, Alg. 3) written the way a BLAS-based library runs it.
pub struct ClassicalBicgstab<'a, T> {
    c: Common<'a, T>,
    spmv: Spmv<T>,
    dot: Kernel,
    axpy: Kernel,
    xpay: Kernel,
    diag: Kernel,
    finish: Kernel,
    /// p̂ = D⁻¹p with Jacobi.
    _phat: Option<wgpu::Buffer>,
    bg_finish_setup: wgpu::BindGroup,
    bg_diag_p: Option<wgpu::BindGroup>,
    bg_spmv_p: wgpu::BindGroup,
    bg_dot_apr: wgpu::BindGroup,
    bg_dot_ap2: wgpu::BindGroup,
    bg_finish_ap: wgpu::BindGroup,
    bg_axpy_s: wgpu::BindGroup,
    bg_dot_ss: wgpu::BindGroup,
    bg_diag_s: Option<wgpu::BindGroup>,
    bg_spmv_s: wgpu::BindGroup,
    bg_dot_as_s: wgpu::BindGroup,
    bg_dot_as_as: wgpu::BindGroup,
    bg_finish_as: wgpu::BindGroup,
    bg_axpy_x_p: wgpu::BindGroup,
    bg_axpy_x_s: wgpu::BindGroup,
    bg_axpy_r: wgpu::BindGroup,
    bg_dot_rr: wgpu::BindGroup,
    bg_dot_rho: wgpu::BindGroup,
    bg_finish_r: wgpu::BindGroup,
    bg_axpy_p: wgpu::BindGroup,
    bg_xpay_p: wgpu::BindGroup,
}

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
const PIPELINED_SLOTS: u32 = 4;

impl<'a, T: Scalar> ClassicalBicgstab<'a, T> {
    fn new(c: Common<'a, T>) -> Result<Self> {
        let engine = c.engine;
        let sys = c.sys;
        let cfg = sys.a.shader_config(engine);
        let k = |name| solver_kernel::<T>(engine, name, cfg);
        let (dot, axpy, xpay, diag, finish) = (
            k("dot")?,
            k("axpy")?,
            k("xpay")?,
            k("diag_scale")?,
            k("bicgstab_finish")?,
        );
        let spmv = Spmv::<T>::with_config(
            engine,
            &sys.a,
            ShaderConfig {
                subgroups: false,
                ..cfg
            },
        )?;
        let base = c.base;
        let phat = if sys.jacobi {
            Some(engine.storage_zeroed::<T>("p^", sys.n)?)
        } else {
            None
        };
        // Without Jacobi p̂ = p and ŝ = s, which lives in r (s = r − αAp in place).
        let phat_or_p = phat.as_ref().unwrap_or(&sys.p);
        let shat_or_s = if sys.jacobi { &sys.s } else { &sys.r };
        let finish_at = |step| {
            let p = c.params(Params { dst: step, ..base });
            c.bind(&finish, &p, &[])
        };
        let dot_of = |slot, x: &wgpu::Buffer, y: &wgpu::Buffer| {
            let p = c.params(Params { slot, ..base });
            c.bind(&dot, &p, &[(5, x), (6, y)])
        };
        let coef = |kernel: &Kernel, num, den, flags, x: &wgpu::Buffer, y: &wgpu::Buffer| {
            let p = c.params(Params {
                num,
                den,
                flags,
                ..base
            });
            c.bind(kernel, &p, &[(5, x), (6, y)])
        };
        let diag_into = |v: &wgpu::Buffer, out: &wgpu::Buffer| {
            let p = c.params(base);
            c.bind(&diag, &p, &[(5, &sys.dinv), (6, v), (7, out)])
        };
        let r = ClassicalBicgstab {
            bg_finish_setup: finish_at(STEP_SETUP),
            bg_diag_p: phat.as_ref().map(|ph| diag_into(&sys.p, ph)),
            bg_spmv_p: spmv.bind(engine, &sys.a, phat_or_p, &sys.ap),
            bg_dot_apr: dot_of(SLOT_APR, &sys.ap, &sys.rstar),
            bg_dot_ap2: dot_of(SLOT_AP2, &sys.ap, &sys.ap),
            bg_finish_ap: finish_at(STEP_AP),
            bg_axpy_s: coef(&axpy, S_RHO, S_APR, FLAG_NEGATE, &sys.ap, &sys.r),
            bg_dot_ss: dot_of(SLOT_SS, &sys.r, &sys.r),
            bg_diag_s: sys.jacobi.then(|| diag_into(&sys.r, &sys.s)),
            bg_spmv_s: spmv.bind(engine, &sys.a, shat_or_s, &sys.as_),
            bg_dot_as_s: dot_of(SLOT_AS_S, &sys.as_, &sys.r),
            bg_dot_as_as: dot_of(SLOT_AS_AS, &sys.as_, &sys.as_),
            bg_finish_as: finish_at(STEP_AS),
            bg_axpy_x_p: coef(&axpy, S_RHO, S_APR, 0, phat_or_p, &sys.x),
            bg_axpy_x_s: coef(&axpy, S_AS_S, S_AS_AS, 0, shat_or_s, &sys.x),
            bg_axpy_r: coef(&axpy, S_AS_S, S_AS_AS, FLAG_NEGATE, &sys.as_, &sys.r),
            bg_dot_rr: dot_of(SLOT_RR, &sys.r, &sys.r),
            bg_dot_rho: dot_of(SLOT_RHO, &sys.r, &sys.rstar),
            bg_finish_r: finish_at(STEP_R),
            bg_axpy_p: coef(&axpy, S_AS_S, S_AS_AS, FLAG_NEGATE, &sys.ap, &sys.p),
            bg_xpay_p: coef(&xpay, S_BETA, S_ONE, 0, &sys.r, &sys.p),
            _phat: phat,
            c,
            spmv,
            dot,
            axpy,
            xpay,
            diag,
            finish,
        };
        Ok(r)
    }

    fn g(&self) -> u32 {
        self.c.groups()
    }

    /// Alg. 3 l.6–7: [p̂ = D⁻¹p,] Ap = A p̂, first stages of ⟨Ap,r0*⟩ and ⟨Ap,Ap⟩.
    fn record_ap(&self, batch: &mut Batch<'_>) {
        if let Some(bg) = &self.bg_diag_p {
            batch.dispatch(&self.diag, bg, self.g());
        }
        self.spmv.record(batch, &self.c.sys.a, &self.bg_spmv_p);
        batch.dispatch(&self.dot, &self.bg_dot_apr, self.g());
        batch.dispatch(&self.dot, &self.bg_dot_ap2, self.g());
    }

    /// l.9: s = r − αAp (in r), first stage of ⟨s,s⟩.
    fn record_s(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.axpy, &self.bg_axpy_s, self.g());
        batch.dispatch(&self.dot, &self.bg_dot_ss, self.g());
    }

    /// l.10–11: [ŝ = D⁻¹s,] As = A ŝ, first stages of ⟨As,s⟩ and ⟨As,As⟩.
    fn record_as(&self, batch: &mut Batch<'_>) {
        if let Some(bg) = &self.bg_diag_s {
            batch.dispatch(&self.diag, bg, self.g());
        }
        self.spmv.record(batch, &self.c.sys.a, &self.bg_spmv_s);
        batch.dispatch(&self.dot, &self.bg_dot_as_s, self.g());
        batch.dispatch(&self.dot, &self.bg_dot_as_as, self.g());
    }

    /// l.13–15: x += αp̂, x += ωŝ, r = s − ωAs, first stages of ⟨r,r⟩ and ⟨r,r0*⟩.
    fn record_xr(&self, batch: &mut Batch<'_>) {
        let g = self.g();
        batch.dispatch(&self.axpy, &self.bg_axpy_x_p, g);
        batch.dispatch(&self.axpy, &self.bg_axpy_x_s, g);
        batch.dispatch(&self.axpy, &self.bg_axpy_r, g);
        batch.dispatch(&self.dot, &self.bg_dot_rr, g);
        batch.dispatch(&self.dot, &self.bg_dot_rho, g);
    }

    /// l.17: p = r + β(p − ωAp) as p −= ωAp; p = r + βp.
    fn record_p(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.axpy, &self.bg_axpy_p, self.g());
        batch.dispatch(&self.xpay, &self.bg_xpay_p, self.g());
    }
}

impl<T: Scalar> GpuIterative<T> for ClassicalBicgstab<'_, T> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        let g = self.g();
        let mut batch = engine.begin("bicgstab setup");
        batch.dispatch(&self.c.init, &self.c.bg_init, g);
        match mode {
            CheckMode::Device => {
                batch.dispatch(&self.finish, &self.bg_finish_setup, 1);
                self.c.read_setup_history(batch, run)
            }
            CheckMode::Paper => {
                let parts = self.c.read_slots(batch, 0, 1)?;
                let rho = T::from_f64(sum_component(&parts, g as usize, 0, 0));
                engine.write(&self.c.bufs.scalars, S_RHO as usize, &[rho]);
                run.last_rz = rho.as_f64();
                Ok(Some(sum_component(&parts, g as usize, 0, 1)))
            }
        }
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.record_ap(batch);
        batch.dispatch(&self.finish, &self.bg_finish_ap, 1);
        self.record_s(batch);
        self.record_as(batch);
        batch.dispatch(&self.finish, &self.bg_finish_as, 1);
        self.record_xr(batch);
        batch.dispatch(&self.finish, &self.bg_finish_r, 1);
        self.record_p(batch);
    }

    /// The host drives every scalar: each inner product is read back (4 readbacks per
    /// iteration) and the coefficients it gives are sent up (3 uploads).
    fn paper_loop(
        &self,
        engine: &Engine,
        run: &mut Run<'_>,
        opts: &SolveOptions,
        threshold: f64,
    ) -> Result<LoopEnd> {
        let g = self.g() as usize;
        let scalars = &self.c.bufs.scalars;
        let rstar_norm = *run.history.last().expect("the setup residual");
        // ρ_i as last sent to the device (the setup sent ρ_0).
        let mut rho = T::from_f64(run.last_rz);
        let mut first = true;
        loop {
            if run.monitor.cancelled() {
                return Ok(LoopEnd::Cancelled);
            }
            if run.iterations() >= opts.max_iter {
                return Ok(LoopEnd::MaxIterations);
            }
            let res = *run.history.last().expect("the setup residual");
            if !rho.is_finite() {
                return Ok(LoopEnd::NonFinite);
            }
            if crate::cpu::is_breakdown::<T>(rho.as_f64(), res * rstar_norm) {
                return Ok(LoopEnd::Breakdown("<r, r0*>".into()));
            }
            let before = engine.counters().snapshot();
            run.recorded += 1;
            run.batch_size = 1;
            // l.17 of the previous iteration (β is on the device now), l.6–8.
            let mut batch = engine.begin("bicgstab Ap");
            if !first {
                self.record_p(&mut batch);
            }
            first = false;
            self.record_ap(&mut batch);
            let parts = self.c.read_slots(batch, SLOT_APR as usize, 2)?;
            let apr = T::from_f64(sum_component(&parts, g, 0, 0));
            let ap_norm = sum_component(&parts, g, 1, 0).max(0.0).sqrt();
            let stop = if !apr.is_finite() {
                Some(LoopEnd::NonFinite)
            } else if crate::cpu::is_breakdown::<T>(apr.as_f64(), ap_norm * rstar_norm) {
                Some(LoopEnd::Breakdown("<Ap, r0*>".into()))
            } else if !(rho / apr).is_finite() {
                Some(LoopEnd::NonFinite)
            } else {
                None
            };
            if let Some(end) = stop {
                count_since(engine, run, &before);
                return Ok(end);
            }
            let alpha = rho / apr;
            engine.write(scalars, S_APR as usize, &[apr]);
            // l.9 and the early exit on ‖s‖.
            let mut batch = engine.begin("bicgstab s");
            self.record_s(&mut batch);
            let parts = self.c.read_slots(batch, SLOT_SS as usize, 1)?;
            let ss = T::from_f64(sum_component(&parts, g, 0, 0));
            let s_norm = nrm(ss);
            if s_norm <= threshold {
                let mut batch = engine.begin("bicgstab half step");
                batch.dispatch(&self.axpy, &self.bg_axpy_x_p, g as u32);
                batch.submit()?;
                count_since(engine, run, &before);
                run.push(s_norm);
                return Ok(LoopEnd::Converged);
            }
            // l.10–12: As, ω.
            let mut batch = engine.begin("bicgstab As");
            self.record_as(&mut batch);
            let parts = self.c.read_slots(batch, SLOT_AS_S as usize, 2)?;
            let as_s = T::from_f64(sum_component(&parts, g, 0, 0));
            let as_as = T::from_f64(sum_component(&parts, g, 1, 0));
            let stop = if !as_as.is_finite() {
                Some(LoopEnd::NonFinite)
            } else if as_as <= T::zero()
                || crate::cpu::is_breakdown::<T>(as_s.as_f64(), nrm(as_as) * s_norm)
            {
                Some(LoopEnd::Breakdown("omega".into()))
            } else {
                None
            };
            if let Some(end) = stop {
                count_since(engine, run, &before);
                return Ok(end);
            }
            let omega = as_s / as_as;
            engine.write(scalars, S_AS_S as usize, &[as_s, as_as]);
            // l.13–15: x, r, ⟨r,r⟩ and ⟨r,r0*⟩.
            let mut batch = engine.begin("bicgstab x r");
            self.record_xr(&mut batch);
            let parts = self.c.read_slots(batch, SLOT_RHO as usize, 2)?;
            let rho_new = T::from_f64(sum_component(&parts, g, 0, 0));
            let rr = T::from_f64(sum_component(&parts, g, 1, 0));
            let res = nrm(rr);
            run.push(res);
            if !rr.is_finite() {
                count_since(engine, run, &before);
                return Ok(LoopEnd::NonFinite);
            }
            if res <= threshold {
                count_since(engine, run, &before);
                return Ok(LoopEnd::Converged);
            }
            // l.16: β = (ρ_new/ρ)(α/ω), sent up with ρ_new for the next iteration.
            let beta = (rho_new / rho) * (alpha / omega);
            if !beta.is_finite() {
                count_since(engine, run, &before);
                return Ok(LoopEnd::NonFinite);
            }
            engine.write(scalars, S_RHO as usize, &[rho_new, beta]);
            rho = rho_new;
            run.last_rz = rho.as_f64();
            count_since(engine, run, &before);
        }
    }

    fn true_relative(&self, _engine: &Engine) -> Result<f64> {
        self.c.true_relative()
    }

    fn stop_reason(&self, status: GpuStatus) -> LoopEnd {
        self.c.stop_reason(status)
    }
}

/// Solves A x = b by BiCGStab on the GPU (`opts.variant` picks [`ClassicalBicgstab`] or
/// [`PipelinedBicgstab`], `opts.check_mode` the convergence checking, `opts.precond` Jacobi
/// right preconditioning or none).
///
/// Errors: the input checks of [`validate_system`] (a zero diagonal with Jacobi is
/// [`KrylovError::ZeroDiagonal`]), f64 on a device without SHADER_F64
/// ([`KrylovError::MissingFeature`]), buffers over the device limits. A breakdown is a
/// result (`reason: breakdown`, naming `<r, r0*>`, `<Ap, r0*>` or `omega`).
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
    let n = a.nrows();
    let _b_norm = report.b_norm;

    let jacobi = opts.precond == Precond::Jacobi;
    let gpu_a = super::driver::upload_matrix(engine, a, opts, &mut report)?;
    let sys = System::upload(engine, a, gpu_a, b, x0, jacobi)?;
    let groups = engine.reduction_groups(n);
    // Room for every iteration's residual (+ the initial one); a huge max_iter is capped.
    let history_len = opts.max_iter.min(1 << 24) + 2;
    let slots = match opts.variant {
        Variant::Pipelined => PIPELINED_SLOTS,
        Variant::Classical => CLASSICAL_SLOTS,
    };
    let mut bufs = SolverBuffers::new::<T>(engine, groups, slots, history_len)?;
    // More scalars than the shared default; ε·BREAKDOWN_FACTOR and 1 are constants.
    let mut init_scalars = vec![T::zero(); N_SCALARS];
    init_scalars[S_EPS] = T::from_f64(crate::cpu::BREAKDOWN_FACTOR * T::PRECISION.epsilon());
    init_scalars[S_ONE as usize] = T::one();
    bufs.scalars = engine.storage_from("bicgstab scalars", &init_scalars)?;
    let common = Common::new(engine, a, b, &sys, &bufs)?;
    let solver: Box<dyn GpuIterative<T> + '_> = match opts.variant {
        Variant::Pipelined => Box::new(PipelinedBicgstab::new(common, opts.check_mode)?),
        Variant::Classical => Box::new(ClassicalBicgstab::new(common)?),
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
