//! Pipelined BiCGStab (paper 000, Alg. 4): four fused kernels per iteration, one readback of
//! all partial sums per `paper`-mode iteration (see the module table in [`super`]).

use super::paper::{
    Flow, Partials, alpha, check_rho, halt, last_residual, nrm, omega, paper_iterations,
};
use super::{Common, FLAG_FIRST, FLAG_HALF_STEP, FLAG_PAPER, Launch, SetupEnd};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{Params, solver_kernel};
use crate::gpu::{Batch, Engine};
use crate::solvers::CheckMode;
use crate::solvers::driver::{GpuIterative, LoopEnd, PaperLoop, Run, counted};

/// Pipelined BiCGStab (paper 000, Alg. 4): four fused kernels per iteration.
pub struct PipelinedBicgstab<'a, T> {
    c: &'a Common<'a, T>,
    /// Kernel 1, l.6–7: Ap = A·D⁻¹p + first stage of ⟨Ap,r0*⟩, ⟨Ap,Ap⟩ (+ the second stage
    /// of kernel 4's ⟨r,r0*⟩, ⟨r,r⟩, which it records as the residual in `device` mode).
    kernel_1: Launch,
    /// Kernel 1 of the setup (i = 0): the second stage is bicgstab_init's.
    kernel_1_first: Launch,
    /// Kernel 2, l.8–9: α from the partial sums in every workgroup, s = r − αAp + first
    /// stage of ⟨s,s⟩.
    kernel_2: Launch,
    /// Kernel 3, l.10–12: As = A·D⁻¹s + first stage of ⟨As,s⟩, ⟨As,As⟩, ⟨As,r0*⟩.
    kernel_3: Launch,
    /// Kernel 4, l.13–16 and 19–20: β, ω from the partial sums, x += αD⁻¹p + ωD⁻¹s,
    /// r = s − ωAs, p = r + β(p − ωAp) + first stage of ⟨r,r0*⟩, ⟨r,r⟩.
    kernel_4: Launch,
    /// Kernel 4 as `paper` mode's early exit on the half step: x += αD⁻¹p only.
    half_step: Launch,
}

impl<'a, T: Scalar> PipelinedBicgstab<'a, T> {
    pub(super) fn new(c: &'a Common<'a, T>, mode: CheckMode) -> Result<Self> {
        let (engine, sys) = (c.engine, c.sys);
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
        let (plain, first, half) = (with(0), with(FLAG_FIRST), with(FLAG_HALF_STEP));
        // The fused SpMV kernels: y = A·D⁻¹v and the partial sums of y against r0*.
        let spmv_vecs = |v, av| {
            let mut e = vec![(8, v), (9, av), (10, &sys.rstar), (11, sys.dinv())];
            e.extend(sys.a.bindings(false));
            e
        };
        let p_vecs = spmv_vecs(&sys.p, &sys.ap);
        let update_vecs = [
            (5, &sys.x),
            (6, &sys.r),
            (7, &sys.p),
            (8, &sys.s),
            (9, &sys.ap),
            (10, &sys.as_),
            (11, &sys.rstar),
            (12, sys.dinv()),
        ];
        Ok(PipelinedBicgstab {
            kernel_1: c.launch(&spmv_p, &plain, &p_vecs),
            kernel_1_first: c.launch(&spmv_p, &first, &p_vecs),
            kernel_2: c.launch(&update_s, &plain, &[(5, &sys.r), (6, &sys.ap), (7, &sys.s)]),
            kernel_3: c.launch(&spmv_s, &plain, &spmv_vecs(&sys.s, &sys.as_)),
            kernel_4: c.launch(&update, &plain, &update_vecs),
            // The half step only updates x: no first stage of ⟨r,r0*⟩, ⟨r,r⟩.
            half_step: c.launch(&update.without_reduction(), &half, &update_vecs),
            c,
        })
    }

    /// Submits kernel 4 alone (x, r, p of the iteration whose residual the host accepted).
    fn flush_update(&self) -> Result<()> {
        let mut batch = self.c.engine.begin("bicgstab update");
        self.kernel_4.record(&mut batch);
        batch.submit()
    }

    /// The host's part of a `paper`-mode iteration, after the readback of slots 0–3 that
    /// follows kernel 3: the breakdown tests, the half-step exit, ω and β, the convergence
    /// check on the paper's residual. `Ok(true)`: go on with kernels 4 and 1 pending.
    fn host_step(
        &self,
        parts: &Partials<T>,
        run: &mut Run<'_>,
        rstar_norm: f64,
        threshold: f64,
    ) -> Flow<bool> {
        let engine = self.c.engine;
        // l.5's guard on ρ_i = ⟨r_i,r0*⟩ (l.4, or l.20 of the previous iteration).
        let rho = parts.get(0, 0);
        check_rho(rho, last_residual(run), rstar_norm)?;
        // l.7–8: ⟨Ap_i,r0*⟩ and α_i (kernels 2 and 4 recompute α_i themselves).
        let apr = parts.get(1, 0);
        alpha(rho, apr, parts.f64(1, 1).max(0.0).sqrt(), rstar_norm)?;
        // l.9's ⟨s_i,s_i⟩: the half step already converged, x_{i+1} = x_i + α_i D⁻¹p_i.
        let ss = parts.get(2, 0);
        let s_norm = nrm(ss);
        if s_norm <= threshold {
            let mut batch = engine.begin("bicgstab half step");
            self.half_step.record(&mut batch);
            batch.submit()?;
            run.push(s_norm);
            return halt(LoopEnd::Converged);
        }
        // l.13–14: β_i and ω_i.
        let (as_s, as_as, as_r) = (parts.get(3, 0), parts.get(3, 1), parts.get(3, 2));
        let omega = omega(as_s, as_as, s_norm)?;
        let beta = -as_r / apr;
        if !beta.is_finite() {
            return halt(LoopEnd::NonFinite);
        }
        // The paper's residual: ⟨r_{i+1}, r_{i+1}⟩ = ⟨s,s⟩ − 2ω⟨s,As⟩ + ω²⟨As,As⟩.
        let est = ss - (omega + omega) * as_s + omega * omega * as_as;
        let res = nrm(est);
        if !est.is_finite() {
            self.flush_update()?;
            run.push(res);
            return halt(LoopEnd::NonFinite);
        }
        if res > threshold {
            run.push(res);
            return Ok(true);
        }
        // The estimate claims convergence: confirm it with the directly reduced ⟨r, r⟩ of
        // kernel 4 (finished by kernel 1, which also starts the next iteration).
        let mut batch = engine.begin("bicgstab confirm");
        self.kernel_4.record(&mut batch);
        self.kernel_1.record(&mut batch);
        let res = nrm(self.c.read_slots(batch, 0, 1)?.get(0, 1));
        run.push(res);
        if res <= threshold {
            return halt(LoopEnd::Converged);
        }
        Ok(false)
    }
}

impl<T: Scalar> GpuIterative<T> for PipelinedBicgstab<'_, T> {
    /// l.1–4 (`bicgstab_init`) and kernel 1 of the first iteration.
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        let mut batch = engine.begin("bicgstab setup");
        self.c.init.record(&mut batch);
        self.kernel_1_first.record(&mut batch);
        Ok(match self.c.end_setup(batch, run, mode)? {
            SetupEnd::Device(rr) => rr,
            SetupEnd::Paper { rr, .. } => Some(rr),
        })
    }

    /// Kernels 2, 3, 4, 1: kernel 1 records the residual of the iteration kernel 4 ended.
    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.kernel_2.record(batch);
        self.kernel_3.record(batch);
        self.kernel_4.record(batch);
        self.kernel_1.record(batch);
    }

    /// Paper 000's scheme: one submit of kernels (4, 1 of the previous iteration,) 2, 3 and
    /// one readback of all partial sums, finished on the host.
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        // ‖r0*‖ = ‖r0‖: the residual the setup recorded.
        let rstar_norm = last_residual(run);
        let mut pending = false;
        let end = paper_iterations(engine, run, opts.max_iter, |run| {
            let mut batch = engine.begin("bicgstab iteration");
            if std::mem::take(&mut pending) {
                self.kernel_4.record(&mut batch);
                self.kernel_1.record(&mut batch);
            }
            self.kernel_2.record(&mut batch);
            self.kernel_3.record(&mut batch);
            let parts = self.c.read_slots(batch, 0, 4)?;
            run.recorded += 1;
            run.batch_size = 1;
            pending = self.host_step(&parts, run, rstar_norm, threshold)?;
            Ok(())
        })?;
        if pending {
            // The iteration limit (or a cancel) after an accepted residual: its x.
            counted(engine, run, |_| self.flush_update())?;
        }
        Ok(end)
    }
}
