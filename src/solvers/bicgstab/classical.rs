//! Classical BiCGStab (paper 000, Alg. 3) the way a BLAS-based library runs it: one launch
//! per SpMV, inner product, vector update and apply of M (see the module table in
//! [`super`]).

use super::paper::{Flow, alpha, check_rho, halt, last_residual, nrm, omega, paper_iterations};
use super::{
    Common, Launch, S_APR, S_AS_AS, S_AS_S, S_BETA, S_ONE, S_RHO, SLOT_AP2, SLOT_APR, SLOT_AS_AS,
    SLOT_AS_S, SLOT_RHO, SLOT_RR, SLOT_SS, STEP_AP, STEP_AS, STEP_R, STEP_SETUP, SetupEnd,
    record_all,
};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{FLAG_NEGATE, Params, solver_kernel};
use crate::gpu::{Batch, Engine, GpuOperator, Kernel, Spmv};
use crate::precond::{ApplySite, ApplyStep};
use crate::solvers::driver::{GpuIterative, LoopEnd, PaperLoop, Run};
use crate::solvers::{CheckMode, Precond};

/// Classical BiCGStab (paper 000, Alg. 3) written the way a BLAS-based library runs it.
pub struct ClassicalBicgstab<'a, T> {
    c: &'a Common<'a, T>,
    spmv: Spmv<T>,
    /// p̂ = M⁻¹p with a preconditioner (else p̂ = p).
    _phat: Option<wgpu::Buffer>,
    /// l.6–7: Ap = A·M⁻¹p, first stages of ⟨Ap,r0*⟩ and ⟨Ap,Ap⟩ (the breakdown scale).
    ap: Product,
    /// l.8 (`device` mode): ⟨Ap,r0*⟩ finished and tested, α's denominator stored.
    finish_ap: Launch,
    /// l.9: s = r − αAp (in place of r) and the first stage of ⟨s,s⟩ (the early exit).
    update_s: [Launch; 2],
    /// l.10–11: As = A·M⁻¹s (ŝ = M⁻¹s in `s`; s itself lives in r), first stages of ⟨As,s⟩
    /// and ⟨As,As⟩.
    as_: Product,
    /// l.14 (`device` mode): ⟨s,s⟩, ⟨As,s⟩, ⟨As,As⟩ finished, ω's terms stored or the early
    /// exit taken (ω = 0).
    finish_as: Launch,
    /// l.15–17: x += αp̂, x += ωŝ, r = s − ωAs, first stages of ⟨r,r⟩ and ⟨r,r0*⟩. The first
    /// launch alone is the early exit on the half step.
    update_xr: [Launch; 5],
    /// l.18 (`device` mode): ⟨r,r⟩ recorded and tested, β and ρ = ⟨r,r0*⟩ stored.
    finish_r: Launch,
    /// l.19: p = r + β(p − ωAp) as p −= ωAp; p = r + βp.
    update_p: [Launch; 2],
    /// l.4 (`device` mode): ρ0 and ‖r0‖² of bicgstab_init finished and recorded.
    finish_setup: Launch,
    /// Left preconditioning: what turns b − Ax into r̂ = M⁻¹(b − Ax) at setup.
    left: Option<LeftSetup>,
}

/// The setup steps of left-preconditioned BiCGStab (running on M⁻¹A x = M⁻¹b): after
/// `bicgstab_init` (r = b − Ax), z = M⁻¹r into `s` and `bicgstab_left_init` (r̂ = r0* = p = z,
/// the partials of ⟨r̂,r0*⟩ and ⟨r̂,r̂⟩); and, once per solve, ‖M⁻¹b‖ for τ_L.
struct LeftSetup {
    apply_r: ApplyStep,
    init: Launch,
    apply_b: ApplyStep,
    norm_s: Launch,
}

/// A preconditioned product with the inner products of its result: right, [v̂ = M⁻¹v
/// (`diag_scale` with Jacobi),] Av = A·v̂; left, Av = M⁻¹(A v) through a scratch vector; then
/// the first stages of two inner products of Av.
struct Product {
    apply: Option<ApplyStep>,
    /// Whether the apply follows the SpMV (left) instead of preceding it (right).
    left: bool,
    spmv: wgpu::BindGroup,
    dots: [Launch; 2],
}

impl Product {
    fn record<T: Scalar>(&self, batch: &mut Batch<'_>, spmv: &Spmv<T>, a: &dyn GpuOperator<T>) {
        let apply = |batch: &mut Batch<'_>| {
            if let Some(apply) = &self.apply {
                apply.record(batch);
            }
        };
        if !self.left {
            apply(batch);
        }
        spmv.record(batch, a, &self.spmv);
        if self.left {
            apply(batch);
        }
        record_all(batch, &self.dots);
    }
}

impl<'a, T: Scalar> ClassicalBicgstab<'a, T> {
    pub(super) fn new(c: &'a Common<'a, T>) -> Result<Self> {
        let (engine, sys, base) = (c.engine, c.sys, c.base);
        let cfg = sys.a.shader_config(engine);
        let k = |name| solver_kernel::<T>(engine, name, cfg);
        let (dot, axpy, xpay, finish) = (k("dot")?, k("axpy")?, k("xpay")?, k("bicgstab_finish")?);
        // The stand-alone SpMV of a BLAS-based code: no subgroup operations.
        let mut blas = cfg;
        blas.subgroups = false;
        let spmv = Spmv::<T>::with_config(engine, &sys.a, blas)?;
        // Right, with M: p̂ = M⁻¹p has its own vector and ŝ = M⁻¹s lives in `s`. Without M:
        // p̂ = p and ŝ = s, which lives in r (s = r − αAp in place). Left: x moves along p
        // and s themselves, and the two vectors hold A p and A s before the apply.
        let left = c.left;
        let phat = if sys.m.kind() != Precond::None {
            Some(sys.vector(engine, "p^")?)
        } else {
            None
        };
        let phat_or_p = phat.as_ref().unwrap_or(&sys.p);
        let shat_or_s = if phat.is_some() { &sys.s } else { &sys.r };
        // The vectors SpMV multiplies and those x moves along.
        let (spmv_p, spmv_s) = match left {
            false => (phat_or_p, shat_or_s),
            true => (&sys.p, &sys.r),
        };
        // The vectors the apply reads and writes; left: A p in p̂ and A s in `s`.
        let (apply_p_io, apply_s_io) = match left {
            false => ((&sys.p, phat_or_p), (&sys.r, &sys.s)),
            true => ((phat_or_p, &sys.ap), (&sys.s, &sys.as_)),
        };
        let apply = |v, out| {
            sys.m.bind_apply(
                &ApplySite {
                    engine,
                    config: cfg,
                    bufs: c.bufs,
                    params: &c.params(base),
                },
                v,
                out,
            )
        };
        let (apply_p, apply_s) = match &phat {
            Some(_) => (
                apply(apply_p_io.0, apply_p_io.1)?,
                apply(apply_s_io.0, apply_s_io.1)?,
            ),
            None => (None, None),
        };
        // Each launch has its own parameters: a dot's slot, an update's coefficient
        // scalars[num]/scalars[den], a finish's step.
        let launch = |kernel: &Kernel, p: Params, vecs: &[(u32, &wgpu::Buffer)]| {
            c.launch(kernel, &c.params(p), vecs)
        };
        let dot_of = |slot, x, y| launch(&dot, Params { slot, ..base }, &[(5, x), (6, y)]);
        let coef = |kernel, num, den, flags, x, y| {
            let p = Params {
                num,
                den,
                flags,
                ..base
            };
            launch(kernel, p, &[(5, x), (6, y)])
        };
        let finish_at = |dst| Launch {
            groups: 1,
            ..launch(&finish, Params { dst, ..base }, &[])
        };
        // Right: [v̂ = M⁻¹v,] Av = A·v̂; left: tmp = A v, Av = M⁻¹tmp; then the first
        // stages of ⟨Av,y⟩ for two (slot, y).
        let product = |apply, v, tmp, av, [(s1, y1), (s2, y2)]: [(u32, _); 2]| Product {
            left: left && phat.is_some(),
            spmv: match left && phat.is_some() {
                false => spmv.bind(engine, &sys.a, v, av),
                true => spmv.bind(engine, &sys.a, v, tmp),
            },
            apply,
            dots: [dot_of(s1, av, y1), dot_of(s2, av, y2)],
        };
        let left_setup = match (left, &phat) {
            (true, Some(_)) => Some(LeftSetup {
                apply_r: apply(&sys.r, &sys.s)?.expect("M is not the identity"),
                init: c.launch(
                    &k("bicgstab_left_init")?,
                    &c.params(base),
                    &[(5, &sys.s), (10, &sys.r), (11, &sys.rstar), (12, &sys.p)],
                ),
                apply_b: apply(&sys.b, &sys.s)?.expect("M is not the identity"),
                norm_s: dot_of(SLOT_SS, &sys.s, &sys.s),
            }),
            _ => None,
        };
        Ok(ClassicalBicgstab {
            ap: product(
                apply_p,
                spmv_p,
                phat_or_p,
                &sys.ap,
                [(SLOT_APR, &sys.rstar), (SLOT_AP2, &sys.ap)],
            ),
            finish_ap: finish_at(STEP_AP),
            update_s: [
                coef(&axpy, S_RHO, S_APR, FLAG_NEGATE, &sys.ap, &sys.r),
                dot_of(SLOT_SS, &sys.r, &sys.r),
            ],
            // ⟨As,s⟩ with s in r.
            as_: product(
                apply_s,
                spmv_s,
                &sys.s,
                &sys.as_,
                [(SLOT_AS_S, &sys.r), (SLOT_AS_AS, &sys.as_)],
            ),
            finish_as: finish_at(STEP_AS),
            update_xr: [
                coef(&axpy, S_RHO, S_APR, 0, spmv_p, &sys.x),
                coef(&axpy, S_AS_S, S_AS_AS, 0, spmv_s, &sys.x),
                coef(&axpy, S_AS_S, S_AS_AS, FLAG_NEGATE, &sys.as_, &sys.r),
                dot_of(SLOT_RR, &sys.r, &sys.r),
                dot_of(SLOT_RHO, &sys.r, &sys.rstar),
            ],
            finish_r: finish_at(STEP_R),
            update_p: [
                coef(&axpy, S_AS_S, S_AS_AS, FLAG_NEGATE, &sys.ap, &sys.p),
                coef(&xpay, S_BETA, S_ONE, 0, &sys.r, &sys.p),
            ],
            finish_setup: finish_at(STEP_SETUP),
            left: left_setup,
            _phat: phat,
            c,
            spmv,
        })
    }

    /// ‖M⁻¹b‖ (f64 sum of the GPU's partials; one submit and readback) for the threshold
    /// τ_L of left preconditioning, or `None` on the right.
    pub(super) fn left_norm_b(&self) -> Result<Option<f64>> {
        let Some(left) = &self.left else {
            return Ok(None);
        };
        let mut batch = self.c.engine.begin("bicgstab |M^-1 b|");
        // The apply kernels test the status word: open it.
        batch.clear(&self.c.bufs.state, 0, 4);
        left.apply_b.record(&mut batch);
        left.norm_s.record(&mut batch);
        let parts = self.c.read_slots(batch, SLOT_SS, 1)?;
        Ok(Some(parts.f64(0, 0).max(0.0).sqrt()))
    }

    /// l.6–7 (`ap`) or l.10–11 (`as_`).
    fn record(&self, batch: &mut Batch<'_>, product: &Product) {
        product.record(batch, &self.spmv, &self.c.sys.a);
    }

    /// One `paper`-mode iteration: every inner product read back and finished on the host
    /// (4 readbacks), the scalars it derives sent up (3 uploads). `rho` is ρ_i as last sent
    /// to the device; `first`: no p update of a previous iteration is pending.
    fn paper_iteration(
        &self,
        run: &mut Run<'_>,
        rho: &mut T,
        first: bool,
        rstar_norm: f64,
        threshold: f64,
    ) -> Flow {
        let engine = self.c.engine;
        let scalars = &self.c.bufs.scalars;
        // l.5's guard on ρ_i (before the iteration counts as recorded).
        check_rho(*rho, last_residual(run), rstar_norm)?;
        run.recorded += 1;
        run.batch_size = 1;
        // l.19 of the previous iteration (β is on the device now), l.6–8.
        let mut batch = engine.begin("bicgstab Ap");
        if !first {
            record_all(&mut batch, &self.update_p);
        }
        self.record(&mut batch, &self.ap);
        let parts = self.c.read_slots(batch, SLOT_APR, 2)?;
        let apr = parts.get(0, 0);
        let alpha = alpha(*rho, apr, parts.f64(1, 0).max(0.0).sqrt(), rstar_norm)?;
        engine.write(scalars, S_APR as usize, &[apr]);
        // l.9 and the early exit on ‖s‖: x += αp̂ alone.
        let mut batch = engine.begin("bicgstab s");
        record_all(&mut batch, &self.update_s);
        let s_norm = nrm(self.c.read_slots(batch, SLOT_SS, 1)?.get(0, 0));
        if s_norm <= threshold {
            let mut batch = engine.begin("bicgstab half step");
            self.update_xr[0].record(&mut batch);
            batch.submit()?;
            run.push(s_norm);
            return halt(LoopEnd::Converged);
        }
        // l.10–11, l.14: As, ω.
        let mut batch = engine.begin("bicgstab As");
        self.record(&mut batch, &self.as_);
        let parts = self.c.read_slots(batch, SLOT_AS_S, 2)?;
        let (as_s, as_as) = (parts.get(0, 0), parts.get(1, 0));
        let omega = omega(as_s, as_as, s_norm)?;
        engine.write(scalars, S_AS_S as usize, &[as_s, as_as]);
        // l.15–17: x, r, ⟨r,r⟩ and ⟨r,r0*⟩.
        let mut batch = engine.begin("bicgstab x r");
        record_all(&mut batch, &self.update_xr);
        let parts = self.c.read_slots(batch, SLOT_RHO, 2)?;
        let (rho_new, rr) = (parts.get(0, 0), parts.get(1, 0));
        let res = nrm(rr);
        run.push(res);
        if !rr.is_finite() {
            return halt(LoopEnd::NonFinite);
        }
        if res <= threshold {
            return halt(LoopEnd::Converged);
        }
        // l.18: β = (ρ_new/ρ)(α/ω), sent up with ρ_new for the next iteration.
        let beta = (rho_new / *rho) * (alpha / omega);
        if !beta.is_finite() {
            return halt(LoopEnd::NonFinite);
        }
        engine.write(scalars, S_RHO as usize, &[rho_new, beta]);
        *rho = rho_new;
        run.last_rz = rho_new.as_f64();
        Ok(())
    }
}

impl<T: Scalar> GpuIterative<T> for ClassicalBicgstab<'_, T> {
    /// l.1–4: `bicgstab_init`, then ρ0 finished on the device or on the host (and sent up).
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        let mut batch = engine.begin("bicgstab setup");
        self.c.init.record(&mut batch);
        if let Some(left) = &self.left {
            // r̂ = M⁻¹(b − Ax), r0* = p = r̂ (left preconditioning).
            left.apply_r.record(&mut batch);
            left.init.record(&mut batch);
        }
        if mode == CheckMode::Device {
            self.finish_setup.record(&mut batch);
        }
        Ok(match self.c.end_setup(batch, run, mode)? {
            SetupEnd::Device(rr) => rr,
            SetupEnd::Paper { rho, rr } => {
                engine.write(&self.c.bufs.scalars, S_RHO as usize, &[rho]);
                run.last_rz = rho.as_f64();
                Some(rr)
            }
        })
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.record(batch, &self.ap);
        self.finish_ap.record(batch);
        record_all(batch, &self.update_s);
        self.record(batch, &self.as_);
        self.finish_as.record(batch);
        record_all(batch, &self.update_xr);
        self.finish_r.record(batch);
        record_all(batch, &self.update_p);
    }

    /// The host drives every scalar: each inner product is read back (4 readbacks per
    /// iteration) and the coefficients it gives are sent up (3 uploads).
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        let rstar_norm = last_residual(run);
        // ρ_i as last sent to the device (the setup sent ρ_0).
        let mut rho = T::from_f64(run.last_rz);
        let mut first = true;
        paper_iterations(engine, run, opts.max_iter, |run| {
            let flow = self.paper_iteration(run, &mut rho, first, rstar_norm, threshold);
            first = false;
            flow
        })
    }
}
