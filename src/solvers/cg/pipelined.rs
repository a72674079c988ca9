//! Pipelined CG (paper 000, Alg. 2): two fused launches per iteration.
//!
//! * step 1, `update_cg`: x, r, p updates and the first reduction stage of ⟨r,z⟩, ⟨r,r⟩;
//! * step 2, `spmv_dot_cg`: Ap = A·p and the first stage of ⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩.
//!
//! The second reduction stage runs redundantly in every workgroup of the next launch.

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{SolverBuffers, solver_kernel};
use crate::gpu::{Batch, Engine, Kernel};
use crate::solvers::CheckMode;

use super::super::driver::{GpuIterative, LoopEnd, PaperLoop, Run, counted, sum_component};
use super::{System, cg_init_bind_group};

/// Pipelined CG (paper 000, Alg. 2): `update_cg` + `spmv_dot_cg`, 2 launches per iteration.
pub struct PipelinedCg<'a, T> {
    _t: std::marker::PhantomData<T>,
    bufs: &'a SolverBuffers,
    init: Kernel,
    update: Kernel,
    spmv_dot: Kernel,
    bg_init: wgpu::BindGroup,
    bg_update: wgpu::BindGroup,
    bg_spmv_dot: wgpu::BindGroup,
}

impl<'a, T: Scalar> PipelinedCg<'a, T> {
    pub(crate) fn new(
        engine: &Engine,
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
    ) -> Result<Self> {
        let cfg = sys.a.shader_config(engine);
        let init = solver_kernel::<T>(engine, "cg_init", cfg)?;
        let update = solver_kernel::<T>(engine, "update_cg", cfg)?;
        let spmv_dot = solver_kernel::<T>(engine, "spmv_dot_cg", cfg)?;
        let params = engine.uniform_from("cg params", &sys.params(bufs));
        let bg_init = cg_init_bind_group(engine, &init, sys, bufs, &params);
        let mut e = bufs.common(&params);
        e.extend(sys.iterate_bindings());
        let bg_update = engine.bind_group_at(&update, &e);
        let mut e = bufs.common(&params);
        e.extend([(8, &sys.p), (9, &sys.ap), (10, sys.dinv())]);
        e.extend(sys.a.bindings(false));
        let bg_spmv_dot = engine.bind_group_at(&spmv_dot, &e);
        Ok(PipelinedCg {
            _t: std::marker::PhantomData,
            bufs,
            init,
            update,
            spmv_dot,
            bg_init,
            bg_update,
            bg_spmv_dot,
        })
    }

    /// Step 1 of an iteration: `update_cg`.
    pub(crate) fn record_update(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.update, &self.bg_update, self.bufs.groups);
    }

    /// Step 2 of an iteration: `spmv_dot_cg`.
    pub(crate) fn record_spmv_dot(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.spmv_dot, &self.bg_spmv_dot, self.bufs.groups);
    }

    /// The setup's launches: `cg_init` (r = b − Ax, p = z, ⟨r,z⟩, ⟨r,r⟩) and `spmv_dot_cg`
    /// (‖r‖² recorded and tested, Ap, ⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩).
    pub(super) fn record_setup(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.init, &self.bg_init, self.bufs.groups);
        batch.dispatch(&self.spmv_dot, &self.bg_spmv_dot, self.bufs.groups);
    }

    fn read_partials(&self, batch: Batch<'_>) -> Result<Vec<T>> {
        batch.submit_and_read(&self.bufs.partials, 0, 4 * 2 * self.bufs.groups as usize)
    }
}

impl<T: Scalar> GpuIterative<T> for PipelinedCg<'_, T> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        let g = self.bufs.groups;
        let mut batch = engine.begin("cg setup");
        self.record_setup(&mut batch);
        match mode {
            CheckMode::Device => {
                let v: Vec<T> = batch.submit_and_read(&self.bufs.history, run.history.len(), 1)?;
                Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
            }
            CheckMode::Paper => {
                let parts = self.read_partials(batch)?;
                Ok(Some(sum_component(&parts, g as usize, 0, 1)))
            }
        }
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.record_update(batch);
        self.record_spmv_dot(batch);
    }

    /// Paper 000's scheme: one submit of the two kernels, one readback of all partial sums
    /// (slot 0: ⟨r,z⟩, ⟨r,r⟩ of the new residual; slot 1: ⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩), finished on
    /// the host for the convergence check.
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        let g = self.bufs.groups as usize;
        loop {
            if let Some(end) = run.paper_stop(opts.max_iter) {
                return Ok(end);
            }
            let parts = counted(engine, run, |_| {
                let mut batch = engine.begin("cg iteration");
                self.record_iteration(&mut batch);
                self.read_partials(batch)
            })?;
            run.recorded += 1;
            run.batch_size = 1;
            let rr = sum_component(&parts, g, 0, 1);
            let pap = sum_component(&parts, g, 1, 0);
            if let Some(end) = super::paper_verdict(run, rr, pap, threshold) {
                return Ok(end);
            }
        }
    }
}
