//! Classical CG (paper 000, Alg. 1) as a BLAS-based library runs it: `spmv`, `dot`, `axpy`,
//! `axpy`, `dot`, `xpay` (+ M⁻¹ as the preconditioner's apply step and one more `dot` with
//! Jacobi), every scalar finished by `dot_finish` or, in `paper` mode, on the host.

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{
    FLAG_MONITOR, FLAG_NEGATE, FLAG_POSITIVE, FLAG_SHIFT, Params, SolverBuffers, solver_kernel,
};
use crate::gpu::{Batch, Engine, Kernel, ShaderConfig, Spmv};
use crate::precond::{ApplySite, ApplyStep};
use crate::solvers::{CheckMode, Precond};

use super::super::driver::{GpuIterative, LoopEnd, PaperLoop, Run, add, sum_component};
use super::{System, cg_init_bind_group};

/// Classical CG (paper 000, Alg. 1) written the way a BLAS-based library runs it.
pub struct ClassicalCg<'a, T> {
    sys: &'a System<T>,
    bufs: &'a SolverBuffers,
    z: Option<wgpu::Buffer>,
    init: Kernel,
    spmv: Spmv<T>,
    dot: Kernel,
    finish: Kernel,
    axpy: Kernel,
    xpay: Kernel,
    bg_init: wgpu::BindGroup,
    bg_spmv: wgpu::BindGroup,
    bg_dot_pap: wgpu::BindGroup,
    bg_finish_pap: wgpu::BindGroup,
    bg_axpy_x: wgpu::BindGroup,
    bg_axpy_r: wgpu::BindGroup,
    /// z = M⁻¹r (`diag_scale` with Jacobi), absent when M = I.
    apply_m: Option<ApplyStep>,
    bg_dot_rz: wgpu::BindGroup,
    bg_dot_rr: Option<wgpu::BindGroup>,
    bg_finish_rz: wgpu::BindGroup,
    bg_finish_rr: Option<wgpu::BindGroup>,
    bg_finish_init: wgpu::BindGroup,
    bg_xpay: wgpu::BindGroup,
}

// Scalars of classical CG: 0 = ⟨r,z⟩ (new), 1 = ⟨r,z⟩ (old), 2 = tol², 3 = ⟨p,Ap⟩.
const S_RZ: u32 = 0;
const S_RZ_OLD: u32 = 1;
const S_PAP: u32 = 3;
// Partials slots: 0 = ⟨r,z⟩ (cg_init also puts ⟨r,r⟩ in component 1), 1 = ⟨p,Ap⟩, 2 = ⟨r,r⟩.
const SLOT_RZ: u32 = 0;
const SLOT_PAP: u32 = 1;
const SLOT_RR: u32 = 2;

impl<'a, T: Scalar> ClassicalCg<'a, T> {
    pub(super) fn new(
        engine: &Engine,
        sys: &'a System<T>,
        bufs: &'a SolverBuffers,
    ) -> Result<Self> {
        let cfg = sys.a.shader_config(engine);
        let k = |name| solver_kernel::<T>(engine, name, cfg);
        let (init, dot, finish, axpy, xpay) = (
            k("cg_init")?,
            k("dot")?,
            k("dot_finish")?,
            k("axpy")?,
            k("xpay")?,
        );
        let spmv = Spmv::<T>::with_config(
            engine,
            &sys.a,
            ShaderConfig {
                subgroups: false,
                ..cfg
            },
        )?;
        let base = sys.params(bufs);
        let params = |p: Params| engine.uniform_from("cg params", &p);
        let p_init = params(base);
        let bg_init = cg_init_bind_group(engine, &init, sys, bufs, &p_init);
        let bg_spmv = spmv.bind(engine, &sys.a, &sys.p, &sys.ap);
        // Every solver kernel gets the common bindings; it keeps those it uses.
        let bind = |kernel: &Kernel, p: &wgpu::Buffer, vecs: &[(u32, &wgpu::Buffer)]| {
            let mut e = bufs.common(p);
            e.extend_from_slice(vecs);
            engine.bind_group_at(kernel, &e)
        };
        let dot_params = |slot| params(Params { slot, ..base });
        let bg_dot_pap = bind(&dot, &dot_params(SLOT_PAP), &[(5, &sys.p), (6, &sys.ap)]);
        let finish_params = |slot, dst, comp, flags, comp_monitor| {
            params(Params {
                slot,
                dst,
                comp,
                flags,
                comp_monitor,
                ..base
            })
        };
        let bg_finish_pap = bind(
            &finish,
            &finish_params(SLOT_PAP, S_PAP, 0, FLAG_POSITIVE, 0),
            &[],
        );
        let coef = |flags| {
            params(Params {
                num: S_RZ,
                den: S_PAP,
                flags,
                ..base
            })
        };
        let bg_axpy_x = bind(&axpy, &coef(0), &[(5, &sys.p), (6, &sys.x)]);
        let bg_axpy_r = bind(&axpy, &coef(FLAG_NEGATE), &[(5, &sys.ap), (6, &sys.r)]);
        let z = if sys.m.kind() != Precond::None {
            Some(engine.storage_zeroed::<T>("z", sys.n)?)
        } else {
            None
        };
        let zr = z.as_ref().unwrap_or(&sys.r);
        let apply_m = match &z {
            Some(z) => sys.m.bind_apply(
                &ApplySite {
                    engine,
                    config: cfg,
                    bufs,
                    params: &params(base),
                },
                &sys.r,
                z,
            )?,
            None => None,
        };
        let bg_dot_rz = bind(&dot, &dot_params(SLOT_RZ), &[(5, &sys.r), (6, zr)]);
        let bg_dot_rr = z
            .as_ref()
            .map(|_| bind(&dot, &dot_params(SLOT_RR), &[(5, &sys.r), (6, &sys.r)]));
        // Without Jacobi ⟨r,z⟩ = ⟨r,r⟩: one finish stores it and records it.
        let rz_flags = if z.is_some() {
            FLAG_SHIFT
        } else {
            FLAG_SHIFT | FLAG_MONITOR
        };
        let bg_finish_rz = bind(&finish, &finish_params(SLOT_RZ, S_RZ, 0, rz_flags, 0), &[]);
        let bg_finish_rr = z
            .as_ref()
            .map(|_| bind(&finish, &finish_params(SLOT_RR, 7, 0, FLAG_MONITOR, 0), &[]));
        // After cg_init: slot 0 holds (⟨r,z⟩, ⟨r,r⟩).
        let bg_finish_init = bind(
            &finish,
            &finish_params(SLOT_RZ, S_RZ, 0, FLAG_MONITOR, 1),
            &[],
        );
        let xpay_params = params(Params {
            num: S_RZ,
            den: S_RZ_OLD,
            ..base
        });
        let bg_xpay = bind(&xpay, &xpay_params, &[(5, zr), (6, &sys.p)]);
        Ok(ClassicalCg {
            sys,
            bufs,
            z,
            init,
            spmv,
            dot,
            finish,
            axpy,
            xpay,
            bg_init,
            bg_spmv,
            bg_dot_pap,
            bg_finish_pap,
            bg_axpy_x,
            bg_axpy_r,
            apply_m,
            bg_dot_rz,
            bg_dot_rr,
            bg_finish_rz,
            bg_finish_rr,
            bg_finish_init,
            bg_xpay,
        })
    }

    /// Alg. 1 lines 7–8: Ap = A·p and the first stage of ⟨p, Ap⟩.
    fn record_spmv_dot(&self, batch: &mut Batch<'_>) {
        self.spmv.record(batch, &self.sys.a, &self.bg_spmv);
        batch.dispatch(&self.dot, &self.bg_dot_pap, self.bufs.groups);
    }

    /// Alg. 1 lines 10–11 and 15 (+ z = D⁻¹r): updates and the first stage of the new
    /// inner products.
    fn record_updates_dots(&self, batch: &mut Batch<'_>) {
        let g = self.bufs.groups;
        batch.dispatch(&self.axpy, &self.bg_axpy_x, g);
        batch.dispatch(&self.axpy, &self.bg_axpy_r, g);
        if let Some(apply) = &self.apply_m {
            apply.record(batch);
        }
        batch.dispatch(&self.dot, &self.bg_dot_rz, g);
        if let Some(bg) = &self.bg_dot_rr {
            batch.dispatch(&self.dot, bg, g);
        }
    }
}

impl<T: Scalar> GpuIterative<T> for ClassicalCg<'_, T> {
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        let g = self.bufs.groups;
        let mut batch = engine.begin("cg setup");
        batch.dispatch(&self.init, &self.bg_init, g);
        if !self.sys.jacobi()
            && let (Some(apply), Some(z)) = (&self.apply_m, &self.z)
        {
            // M without a diagonal form: cg_init left p = r; z = M⁻¹r, p = z, then ⟨r,z⟩
            // and ⟨r,r⟩ as in an iteration.
            apply.record(&mut batch);
            batch.copy(
                z,
                0,
                &self.sys.p,
                0,
                (self.sys.n * std::mem::size_of::<T>()) as u64,
            );
            batch.dispatch(&self.dot, &self.bg_dot_rz, g);
            let rr = self.bg_dot_rr.as_ref().expect("a z buffer has its ⟨r,r⟩");
            batch.dispatch(&self.dot, rr, g);
            return match mode {
                CheckMode::Device => {
                    batch.dispatch(&self.finish, &self.bg_finish_rz, 1);
                    let rr = self.bg_finish_rr.as_ref().expect("with z");
                    batch.dispatch(&self.finish, rr, 1);
                    let v: Vec<T> =
                        batch.submit_and_read(&self.bufs.history, run.history.len(), 1)?;
                    Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
                }
                CheckMode::Paper => {
                    let parts: Vec<T> =
                        batch.submit_and_read(&self.bufs.partials, 0, 4 * 3 * g as usize)?;
                    let rz = sum_component(&parts, g as usize, 0, 0);
                    engine.write(&self.bufs.scalars, S_RZ as usize, &[T::from_f64(rz)]);
                    run.last_rz = rz;
                    Ok(Some(sum_component(&parts, g as usize, 2, 0)))
                }
            };
        }
        match mode {
            CheckMode::Device => {
                batch.dispatch(&self.finish, &self.bg_finish_init, 1);
                let v: Vec<T> = batch.submit_and_read(&self.bufs.history, run.history.len(), 1)?;
                Ok((v[0] >= T::zero() || v[0].is_nan()).then(|| v[0].as_f64()))
            }
            CheckMode::Paper => {
                let parts: Vec<T> =
                    batch.submit_and_read(&self.bufs.partials, 0, 4 * g as usize)?;
                let rz = sum_component(&parts, g as usize, 0, 0);
                engine.write(&self.bufs.scalars, S_RZ as usize, &[T::from_f64(rz)]);
                run.last_rz = rz;
                Ok(Some(sum_component(&parts, g as usize, 0, 1)))
            }
        }
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.record_spmv_dot(batch);
        batch.dispatch(&self.finish, &self.bg_finish_pap, 1);
        self.record_updates_dots(batch);
        batch.dispatch(&self.finish, &self.bg_finish_rz, 1);
        if let Some(bg) = &self.bg_finish_rr {
            batch.dispatch(&self.finish, bg, 1);
        }
        batch.dispatch(&self.xpay, &self.bg_xpay, self.bufs.groups);
    }

    /// The host drives every scalar: ⟨p,Ap⟩ is read back and sent up before the updates,
    /// ⟨r,z⟩ (and ⟨r,r⟩) read back and sent up before the next search direction.
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        let g = self.bufs.groups as usize;
        let mut first = true;
        loop {
            if let Some(end) = run.paper_stop(opts.max_iter) {
                return Ok(end);
            }
            let before = engine.counters().snapshot();
            let mut batch = engine.begin("cg spmv");
            if !first {
                // Alg. 1 line 18 of the previous iteration, now that β is on the device.
                batch.dispatch(&self.xpay, &self.bg_xpay, g as u32);
            }
            first = false;
            self.record_spmv_dot(&mut batch);
            let parts: Vec<T> = batch.submit_and_read(&self.bufs.partials, 4 * g, 4 * g)?;
            let pap = sum_component(&parts, g, 0, 0);
            run.recorded += 1;
            run.batch_size = 1;
            if pap.is_nan() || pap <= 0.0 {
                run.loop_counts = add(
                    &run.loop_counts,
                    &engine.counters().snapshot().since(&before),
                );
                return Ok(if pap.is_nan() {
                    LoopEnd::NonFinite
                } else {
                    LoopEnd::NotSpd
                });
            }
            engine.write(&self.bufs.scalars, S_PAP as usize, &[T::from_f64(pap)]);
            let mut batch = engine.begin("cg update");
            self.record_updates_dots(&mut batch);
            let parts: Vec<T> = batch.submit_and_read(&self.bufs.partials, 0, 4 * 3 * g)?;
            let rz = sum_component(&parts, g, 0, 0);
            let rr = if self.z.is_some() {
                sum_component(&parts, g, 2, 0)
            } else {
                rz
            };
            // β's numerator and denominator: [⟨r,z⟩_new, ⟨r,z⟩_old] in one write.
            let old: f64 = run.last_rz;
            engine.write(
                &self.bufs.scalars,
                S_RZ as usize,
                &[T::from_f64(rz), T::from_f64(old)],
            );
            run.last_rz = rz;
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
        }
    }
}
