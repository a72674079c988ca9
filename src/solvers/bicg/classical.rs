//! Classical BiCG the way a BLAS-based code runs it (paper 001 §3.3: CUBLAS dots and a few
//! custom kernels), one inner product per `dot` launch. Its steps, each a short run of
//! launches (the lines are those of the [module docs](super)):
//!
//! * [`Products`]: line 5 and 6a — q = A·p, q̃ = Aᵀ·p̃, first stages of ⟨p̃,q⟩, ‖p̃‖², ‖q‖²;
//! * [`Updates`]: lines 7–8, 9a, 1 and 2a — x, r, r̃, ‖r‖², z = M⁻¹r, z̃ = M⁻ᵀr̃, first
//!   stages of ρ = ⟨z,r̃⟩ and its norms;
//! * [`Directions`]: lines 3–4 — p = z + βp, p̃ = z̃ + βp̃;
//! * [`Finishes`]: lines 6b and 2b, 9b on the device (`device` mode; in `paper` mode the host
//!   finishes the sums and sends the scalars up).

use std::cell::Cell;

use super::{
    CODE_PTQ, CODE_RHO, Common, FLAG_ALPHA, FLAG_PACKED, S_PTQ, S_RHO, S_RHO_OLD, SLOT_PTQ,
    SLOT_RHO, SLOT_RR, check_ptq, check_rho, count_loop, paper_stop, residual_stop,
};
use crate::base::error::Result;
use crate::base::options::Precond;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{FLAG_MONITOR, FLAG_NEGATE, FLAG_SHIFT, Params, solver_kernel};
use crate::gpu::{Batch, Engine, Kernel, ShaderConfig, Spmv};
use crate::precond::{ApplySite, ApplyStep};
use crate::solvers::CheckMode;
use crate::solvers::driver::{GpuIterative, LoopEnd, PaperLoop, Run, sum_component};

/// Classical BiCG as a BLAS-based code runs it (see the module docs for the launch list).
pub struct Classical<'a, T> {
    c: &'a Common<'a, T>,
    /// z = M⁻¹r, z̃ = M⁻ᵀr̃ (absent when M = I: r, r̃ serve as z, z̃).
    z: Option<(wgpu::Buffer, wgpu::Buffer)>,
    /// Line 3 (setup): p = M⁻¹r, p̃ = M⁻ᵀr̃ applied straight into p, p̃; copies when M = I.
    first_directions: Option<[ApplyStep; 2]>,
    products: Products<T>,
    updates: Updates,
    directions: Directions,
    finishes: Finishes,
    /// A stop the host found in ρ's sums (`paper` mode), acted on before the next iteration.
    pending: Cell<Option<LoopEnd>>,
}

/// Binds the classical kernels, every launch with its own parameter uniform (as every BLAS
/// call gets its own arguments).
struct Binder<'a, T> {
    engine: &'a Engine,
    c: &'a Common<'a, T>,
    config: ShaderConfig,
    base: Params,
}

impl<T: Scalar> Binder<'_, T> {
    fn kernel(&self, name: &str) -> Result<Kernel> {
        solver_kernel::<T>(self.engine, name, self.config)
    }

    fn bind(&self, kernel: &Kernel, p: Params, vecs: &[(u32, &wgpu::Buffer)]) -> wgpu::BindGroup {
        let params = self.engine.uniform_from("bicg params", &p);
        self.c.bufs.bind(self.engine, kernel, &params, vecs)
    }

    /// A `dot` launch: the first stage of ⟨x, y⟩ into partial slot `slot`.
    fn dot(&self, dot: &Kernel, slot: u32, x: &wgpu::Buffer, y: &wgpu::Buffer) -> wgpu::BindGroup {
        self.bind(dot, Params { slot, ..self.base }, &[(5, x), (6, y)])
    }

    /// z = M⁻¹ r and, for the shadow system, z̃ = M⁻ᵀ r̃ (none when M = I).
    fn apply(
        &self,
        (r, z): (&wgpu::Buffer, &wgpu::Buffer),
        (rt, zt): (&wgpu::Buffer, &wgpu::Buffer),
    ) -> Result<Option<[ApplyStep; 2]>> {
        let (engine, bufs, m) = (self.engine, self.c.bufs, &self.c.sys.m);
        // One params uniform per apply, the second only when the first exists (as before).
        let params = engine.uniform_from("bicg params", &self.base);
        let at = ApplySite {
            engine,
            config: self.config,
            bufs,
            params: &params,
        };
        let Some(step) = m.bind_apply(&at, r, z)? else {
            return Ok(None);
        };
        let params = engine.uniform_from("bicg params", &self.base);
        let at = ApplySite {
            params: &params,
            ..at
        };
        let Some(step_t) = m.bind_apply_transposed(&at, rt, zt)? else {
            return Ok(None);
        };
        Ok(Some([step, step_t]))
    }
}

/// Line 5 and 6a: q = A·p, q̃ = Aᵀ·p̃ (`spmv_csr` ×2), then the first stages of ⟨p̃,q⟩,
/// ‖p̃‖², ‖q‖² (`dot` ×3, slots `SLOT_PTQ`…).
struct Products<T> {
    spmv: Spmv<T>,
    bg_spmv: [wgpu::BindGroup; 2],
    dot: Kernel,
    bg_dots: [wgpu::BindGroup; 3],
}

impl<T: Scalar> Products<T> {
    fn new(b: &Binder<'_, T>, dot: &Kernel) -> Result<Self> {
        let sys = b.c.sys;
        let (p, pt, q) = (&sys.p[0], &sys.pt[0], &sys.q);
        let spmv = Spmv::<T>::with_config(
            b.engine,
            &sys.a,
            ShaderConfig {
                subgroups: false,
                ..b.config
            },
        )?;
        let bg_spmv = [
            spmv.bind(b.engine, &sys.a, p, q),
            spmv.bind(b.engine, &sys.at, pt, &sys.qt),
        ];
        let bg_dots = [
            b.dot(dot, SLOT_PTQ, pt, q),
            b.dot(dot, SLOT_PTQ + 1, pt, pt),
            b.dot(dot, SLOT_PTQ + 2, q, q),
        ];
        Ok(Products {
            spmv,
            bg_spmv,
            dot: dot.clone(),
            bg_dots,
        })
    }

    fn record(&self, batch: &mut Batch<'_>, c: &Common<'_, T>) {
        self.spmv.record(batch, &c.sys.a, &self.bg_spmv[0]);
        self.spmv.record(batch, &c.sys.at, &self.bg_spmv[1]);
        for bg in &self.bg_dots {
            batch.dispatch(&self.dot, bg, c.groups());
        }
    }
}

/// Lines 7–8: x += αp, r −= αq, r̃ −= αq̃ (`axpy` ×3, α = ρ/⟨p̃,q⟩ from the device scalars);
/// 9a: ‖r‖²; 1: z = M⁻¹r, z̃ = M⁻ᵀr̃; 2a: ⟨z,r̃⟩, ‖r̃‖² (and ‖z‖² when z ≠ r).
struct Updates {
    axpy: Kernel,
    bg_axpy: [wgpu::BindGroup; 3],
    dot: Kernel,
    bg_dot_rr: wgpu::BindGroup,
    apply_z: Option<[ApplyStep; 2]>,
    bg_dots_rho: Vec<wgpu::BindGroup>,
}

impl Updates {
    fn new<T: Scalar>(
        b: &Binder<'_, T>,
        dot: &Kernel,
        z: Option<&(wgpu::Buffer, wgpu::Buffer)>,
    ) -> Result<Self> {
        let sys = b.c.sys;
        let axpy = b.kernel("axpy")?;
        let alpha = |flags| Params {
            num: S_RHO,
            den: S_PTQ,
            flags,
            ..b.base
        };
        let bg_axpy = [
            b.bind(&axpy, alpha(0), &[(5, &sys.p[0]), (6, &sys.x)]),
            b.bind(&axpy, alpha(FLAG_NEGATE), &[(5, &sys.q), (6, &sys.r)]),
            b.bind(&axpy, alpha(FLAG_NEGATE), &[(5, &sys.qt), (6, &sys.rt)]),
        ];
        let (apply_z, zr) = match z {
            Some((z, zt)) => (b.apply((&sys.r, z), (&sys.rt, zt))?, z),
            None => (None, &sys.r),
        };
        let mut bg_dots_rho = vec![
            b.dot(dot, SLOT_RHO, zr, &sys.rt),
            b.dot(dot, SLOT_RHO + 2, &sys.rt, &sys.rt),
        ];
        if z.is_some() {
            bg_dots_rho.push(b.dot(dot, SLOT_RHO + 1, zr, zr));
        }
        Ok(Updates {
            bg_axpy,
            axpy,
            dot: dot.clone(),
            bg_dot_rr: b.dot(dot, SLOT_RR, &sys.r, &sys.r),
            apply_z,
            bg_dots_rho,
        })
    }

    fn record(&self, batch: &mut Batch<'_>, groups: u32) {
        for bg in &self.bg_axpy {
            batch.dispatch(&self.axpy, bg, groups);
        }
        self.record_rho(batch, groups);
    }

    /// Lines 1, 2a and 9a: ‖r‖², z = M⁻¹r, z̃ = M⁻ᵀr̃, the first stages of ρ and its norms.
    fn record_rho(&self, batch: &mut Batch<'_>, groups: u32) {
        batch.dispatch(&self.dot, &self.bg_dot_rr, groups);
        for step in self.apply_z.iter().flatten() {
            step.record(batch);
        }
        for bg in &self.bg_dots_rho {
            batch.dispatch(&self.dot, bg, groups);
        }
    }
}

/// Lines 3–4 of the iterations after the first: β = ρ/ρ_old from the device scalars,
/// p = z + βp, p̃ = z̃ + βp̃ (`xpay` ×2).
struct Directions {
    xpay: Kernel,
    bg: [wgpu::BindGroup; 2],
}

impl Directions {
    fn new<T: Scalar>(b: &Binder<'_, T>, z: Option<&(wgpu::Buffer, wgpu::Buffer)>) -> Result<Self> {
        let sys = b.c.sys;
        let xpay = b.kernel("xpay")?;
        let (zr, zrt) = match z {
            Some((z, zt)) => (z, zt),
            None => (&sys.r, &sys.rt),
        };
        let beta = Params {
            num: S_RHO,
            den: S_RHO_OLD,
            ..b.base
        };
        let bg = [
            b.bind(&xpay, beta, &[(5, zr), (6, &sys.p[0])]),
            b.bind(&xpay, beta, &[(5, zrt), (6, &sys.pt[0])]),
        ];
        Ok(Directions { xpay, bg })
    }

    fn record(&self, batch: &mut Batch<'_>, groups: u32) {
        for bg in &self.bg {
            batch.dispatch(&self.xpay, bg, groups);
        }
    }
}

/// `device` mode: the sums finished on the GPU by `bicg_finish` (second stage + test), one
/// launch each — line 6b (⟨p̃,q⟩ and α), lines 2b and 9b (ρ with ρ_old shifted, ‖r‖
/// recorded), and at setup ρ₀ and ‖r₀‖ from `bicg_init`'s packed sums.
struct Finishes {
    kernel: Kernel,
    ptq: wgpu::BindGroup,
    rho: wgpu::BindGroup,
    init: wgpu::BindGroup,
}

impl Finishes {
    /// `with_z`: ⟨z,z⟩ is its own inner product (any M ≠ I; `Params.jacobi` tells the kernel).
    fn new<T: Scalar>(b: &Binder<'_, T>, with_z: bool) -> Result<Self> {
        let kernel = b.kernel("bicg_finish")?;
        let bind = |slot, dst, flags, comp| {
            let p = Params {
                slot,
                dst,
                flags,
                comp,
                num: S_RHO,
                jacobi: with_z as u32,
                ..b.base
            };
            b.bind(&kernel, p, &[])
        };
        Ok(Finishes {
            ptq: bind(SLOT_PTQ, S_PTQ, FLAG_ALPHA, CODE_PTQ),
            rho: bind(SLOT_RHO, S_RHO, FLAG_MONITOR | FLAG_SHIFT, CODE_RHO),
            init: bind(0, S_RHO, FLAG_MONITOR | FLAG_PACKED, CODE_RHO),
            kernel,
        })
    }

    fn record(&self, batch: &mut Batch<'_>, bg: &wgpu::BindGroup) {
        batch.dispatch(&self.kernel, bg, 1);
    }
}

impl<'a, T: Scalar> Classical<'a, T> {
    pub(super) fn new(engine: &'a Engine, c: &'a Common<'a, T>) -> Result<Self> {
        let sys = c.sys;
        let b = Binder {
            engine,
            c,
            config: sys.a.shader_config(engine),
            base: sys.params(c.bufs),
        };
        let dot = b.kernel("dot")?;
        let z = match sys.m.kind() {
            Precond::None => None,
            _ => Some((sys.vector(engine, "z")?, sys.vector(engine, "z~")?)),
        };
        let first_directions = match &z {
            Some(_) => b.apply((&sys.r, &sys.p[0]), (&sys.rt, &sys.pt[0]))?,
            None => None,
        };
        Ok(Classical {
            c,
            first_directions,
            products: Products::new(&b, &dot)?,
            updates: Updates::new(&b, &dot, z.as_ref())?,
            directions: Directions::new(&b, z.as_ref())?,
            finishes: Finishes::new(&b, z.is_some())?,
            z,
            pending: Cell::new(None),
        })
    }

    /// Line 3: p = z, p̃ = z̃ for the first iteration (M⁻¹ applied to r, r̃ straight into
    /// p, p̃; copies when M = I).
    fn record_first_directions(&self, batch: &mut Batch<'_>) {
        let sys = self.c.sys;
        match &self.first_directions {
            Some(steps) => steps.iter().for_each(|step| step.record(batch)),
            None => {
                let bytes = (sys.n * std::mem::size_of::<T>()) as u64;
                batch.copy(&sys.r, 0, &sys.p[0], 0, bytes);
                batch.copy(&sys.rt, 0, &sys.pt[0], 0, bytes);
            }
        }
    }
}

impl<T: Scalar> GpuIterative<T> for Classical<'_, T> {
    /// Lines 0–3: `bicg_init`, the first directions, and ρ₀ finished (on the GPU in `device`
    /// mode; on the host in `paper` mode, which sends it up and tests it).
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        self.pending.set(None);
        if let (Some((z, zt)), false) = (&self.z, self.c.sys.jacobi()) {
            // M without a diagonal form: bicg_init's packed ρ₀ is ⟨r, r̃⟩, so ρ₀ = ⟨z, r̃⟩ is
            // formed as in an iteration (z = M⁻¹r, z̃ = M⁻ᵀr̃, then p = z, p̃ = z̃).
            let sys = self.c.sys;
            let bytes = (sys.n * std::mem::size_of::<T>()) as u64;
            let g = self.c.groups();
            let mut batch = self.c.begin_setup(engine, |b| {
                self.updates.record_rho(b, g);
                b.copy(z, 0, &sys.p[0], 0, bytes);
                b.copy(zt, 0, &sys.pt[0], 0, bytes);
            });
            return match mode {
                CheckMode::Device => {
                    self.finishes.record(&mut batch, &self.finishes.rho);
                    self.c.read_first_residual(batch, run)
                }
                CheckMode::Paper => {
                    let parts = self.c.read_slots(batch, SLOT_RHO, 4)?;
                    let s = |slot| sum_component(&parts, g as usize, slot, 0);
                    let rho = s(0);
                    engine.write(&self.c.bufs.scalars, S_RHO as usize, &[T::from_f64(rho)]);
                    run.last_rz = rho;
                    self.pending.set(check_rho::<T>(rho, s(1), s(2)));
                    Ok(Some(s(3)))
                }
            };
        }
        let mut batch = self
            .c
            .begin_setup(engine, |b| self.record_first_directions(b));
        match mode {
            CheckMode::Device => {
                self.finishes.record(&mut batch, &self.finishes.init);
                self.c.read_first_residual(batch, run)
            }
            CheckMode::Paper => {
                let parts = self.c.read_slots(batch, 0, 1)?;
                let g = self.c.groups() as usize;
                let s = |comp| sum_component(&parts, g, 0, comp);
                let rho = s(0);
                engine.write(&self.c.bufs.scalars, S_RHO as usize, &[T::from_f64(rho)]);
                run.last_rz = rho;
                self.pending.set(check_rho::<T>(rho, s(1), s(2)));
                Ok(Some(s(3)))
            }
        }
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        let g = self.c.groups();
        self.products.record(batch, self.c);
        self.finishes.record(batch, &self.finishes.ptq);
        self.updates.record(batch, g);
        self.finishes.record(batch, &self.finishes.rho);
        self.directions.record(batch, g);
    }

    /// The host drives every scalar: ⟨p̃,q⟩ (with its norms) is read back and sent up before
    /// the updates; ρ, its norms and ‖r‖² are read back and [ρ, ρ_old] sent up before the
    /// next directions (`run.last_rz` holds ρ, β's next denominator).
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        let g = self.c.groups() as usize;
        let scalars = &self.c.bufs.scalars;
        let mut first = true;
        loop {
            if let Some(end) = paper_stop(&self.pending, run, opts) {
                return Ok(end);
            }
            let before = engine.counters().snapshot();
            let mut batch = engine.begin("bicg products");
            if !first {
                // Lines 3–4 of this iteration, now that β's ρ is on the device.
                self.directions.record(&mut batch, g as u32);
            }
            first = false;
            self.products.record(&mut batch, self.c);
            let parts = self.c.read_slots(batch, SLOT_PTQ, 3)?;
            run.recorded += 1;
            run.batch_size = 1;
            // Line 6b on the host.
            let s = |slot| sum_component(&parts, g, slot, 0);
            let ptq = s(0);
            if let Some(end) = check_ptq::<T>(ptq, s(1), s(2), run.last_rz) {
                count_loop(engine, run, &before);
                return Ok(end);
            }
            engine.write(scalars, S_PTQ as usize, &[T::from_f64(ptq)]);
            let mut batch = engine.begin("bicg updates");
            self.updates.record(&mut batch, g as u32);
            let parts = self.c.read_slots(batch, SLOT_RHO, 4)?;
            // Lines 2b and 9b on the host; β's numerator and denominator in one write.
            let s = |slot| sum_component(&parts, g, slot, 0);
            let (rho, rtrt, rr) = (s(0), s(2), s(3));
            let zz = if self.z.is_some() { s(1) } else { rr };
            engine.write(
                scalars,
                S_RHO as usize,
                &[T::from_f64(rho), T::from_f64(run.last_rz)],
            );
            run.last_rz = rho;
            count_loop(engine, run, &before);
            if let Some(end) = residual_stop(run, rr, threshold) {
                return Ok(end);
            }
            self.pending.set(check_rho::<T>(rho, zz, rtrt));
        }
    }
}
