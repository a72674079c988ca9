//! Each recurrence of [BiCG on two devices](super) on its device: the operator (A or Aᵀ), M's
//! apply (M⁻¹ or M⁻ᵀ), the vectors and the launches; device 0's extra part (x, the copies of
//! p̃ and r̃, the inner products).

use std::time::Instant;

use super::super::block::poisoned;
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{Precond, SolveReport};
use crate::cpu::precond::Ilu as HostIlu;
use crate::gpu::kernels::{FLAG_NEGATE, Params, SolverBuffers, solver_kernel};
use crate::gpu::{Batch, Engine, GpuMatrix, GpuOperator, Kernel, ShaderConfig, Spmv};
use crate::matrix::Csr;
use crate::precond::ilu::IluSide;
use crate::precond::{ApplySite, ApplyStep, GpuPreconditioner, Jacobi};
use crate::solvers::SolveOptions;
use crate::solvers::system::solver_buffers;

// Scalars on both devices (SolverBuffers::scalars): ρ, ρ_old (β = ρ/ρ_old), ⟨p̃,q⟩
// (α = ρ/⟨p̃,q⟩).
pub(super) const S_RHO: u32 = 0;
pub(super) const S_RHO_OLD: u32 = 1;
pub(super) const S_PTQ: u32 = 3;
// Partial-sum slots on device 0: ⟨p̃,q⟩, ‖p̃‖², ‖q‖², then ⟨z,r̃⟩, ‖z‖², ‖r̃‖², ‖r‖².
pub(super) const SLOT_PTQ: u32 = 0;
pub(super) const SLOT_RHO: u32 = 3;
pub(super) const SLOTS: u32 = 7;

/// M on one device: D⁻¹ (Jacobi, a `diag_scale`), one of ILU's factor pairs, or none.
pub(super) enum SideM {
    None,
    Jacobi(Jacobi),
    Ilu(Box<IluSide>),
}

impl SideM {
    /// z = M⁻¹r (or M⁻ᵀr; Jacobi's D is its own transpose) as a step, `None` for M = I.
    pub(super) fn bind<T: Scalar>(
        &self,
        at: &ApplySite<'_>,
        r: &wgpu::Buffer,
        z: &wgpu::Buffer,
    ) -> Result<Option<ApplyStep>> {
        Ok(match self {
            SideM::None => None,
            SideM::Ilu(m) => Some(m.bind::<T>(at, r, z)?),
            SideM::Jacobi(m) => GpuPreconditioner::<T>::bind_apply(m, at, r, z)?,
        })
    }
}

/// One recurrence on its device: the operator (A or Aᵀ), r, z (= r when M = I), p, q, and
/// its launches — the direction update, the product, the residual update and the apply.
pub(super) struct Recurrence<T> {
    pub(super) engine: Engine,
    pub(super) op: GpuMatrix<T>,
    pub(super) bufs: SolverBuffers,
    pub(super) config: ShaderConfig,
    pub(super) base: Params,
    pub(super) r: wgpu::Buffer,
    pub(super) z: Option<wgpu::Buffer>,
    pub(super) p: wgpu::Buffer,
    pub(super) q: wgpu::Buffer,
    pub(super) spmv: Spmv<T>,
    pub(super) bg_spmv: wgpu::BindGroup,
    pub(super) xpay: Kernel,
    pub(super) bg_dir: wgpu::BindGroup,
    pub(super) axpy: Kernel,
    pub(super) bg_r: wgpu::BindGroup,
    pub(super) apply: Option<ApplyStep>,
}

impl<T: Scalar> Recurrence<T> {
    pub(super) fn new(
        engine: Engine,
        op: GpuMatrix<T>,
        m: &SideM,
        slots: u32,
        opts: &SolveOptions,
    ) -> Result<Self> {
        let n = op.nrows();
        let bufs = solver_buffers::<T>(&engine, n, op.passes(), slots, opts)?;
        let config = op.shader_config(&engine);
        let base = Params {
            n: n as u32,
            groups: bufs.groups,
            ..Default::default()
        };
        let v = |label| poisoned::<T>(&engine, label, n);
        let (r, p, q) = (v("bicg2 r")?, v("bicg2 p")?, v("bicg2 q")?);
        let z = match m {
            SideM::None => None,
            _ => Some(v("bicg2 z")?),
        };
        let spmv = Spmv::<T>::with_config(
            &engine,
            &op,
            ShaderConfig {
                subgroups: false,
                ..config
            },
        )?;
        let bg_spmv = spmv.bind(&engine, &op, &p, &q);
        let uniform = |p: Params| engine.uniform_from("bicg2 params", &p);
        let xpay = solver_kernel::<T>(&engine, "xpay", config)?;
        let beta = uniform(Params {
            num: S_RHO,
            den: S_RHO_OLD,
            ..base
        });
        let bg_dir = bufs.bind(
            &engine,
            &xpay,
            &beta,
            &[(5, z.as_ref().unwrap_or(&r)), (6, &p)],
        );
        let axpy = solver_kernel::<T>(&engine, "axpy", config)?;
        let alpha = uniform(Params {
            num: S_RHO,
            den: S_PTQ,
            flags: FLAG_NEGATE,
            ..base
        });
        let bg_r = bufs.bind(&engine, &axpy, &alpha, &[(5, &q), (6, &r)]);
        let params = uniform(base);
        let at = ApplySite {
            engine: &engine,
            config,
            bufs: &bufs,
            params: &params,
        };
        let apply = match &z {
            Some(z) => m.bind::<T>(&at, &r, z)?,
            None => None,
        };
        Ok(Recurrence {
            engine,
            op,
            bufs,
            config,
            base,
            r,
            z,
            p,
            q,
            spmv,
            bg_spmv,
            xpay,
            bg_dir,
            axpy,
            bg_r,
            apply,
        })
    }

    pub(super) fn n(&self) -> usize {
        self.op.nrows()
    }

    /// z (r itself when M = I).
    pub(super) fn zr(&self) -> &wgpu::Buffer {
        self.z.as_ref().unwrap_or(&self.r)
    }

    /// Lines 3–4 and 5: p = z + βp (not on the first iteration), q = op·p.
    pub(super) fn record_direction(&self, batch: &mut Batch<'_>, first: bool) {
        if !first {
            batch.dispatch(&self.xpay, &self.bg_dir, self.bufs.groups);
        }
    }

    pub(super) fn record_product(&self, batch: &mut Batch<'_>) {
        self.spmv.record(batch, &self.op, &self.bg_spmv);
    }

    /// Line 8: r −= αq.
    pub(super) fn record_residual(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.axpy, &self.bg_r, self.bufs.groups);
    }

    /// Line 1: z = M⁻¹r.
    pub(super) fn record_apply(&self, batch: &mut Batch<'_>) {
        if let Some(step) = &self.apply {
            step.record(batch);
        }
    }

    /// Line 3 of the first iteration: p = z.
    pub(super) fn record_first_direction(&self, batch: &mut Batch<'_>) {
        let bytes = (self.n() * size_of::<T>()) as u64;
        batch.copy(self.zr(), 0, &self.p, 0, bytes);
    }

    /// The host's scalars at `at` on this device.
    pub(super) fn write_scalars(&self, at: u32, v: &[f64]) {
        let v: Vec<T> = v.iter().map(|&s| T::from_f64(s)).collect();
        self.engine.write(&self.bufs.scalars, at as usize, &v);
    }

    pub(super) fn apply_launches(&self) -> usize {
        self.apply.as_ref().map_or(0, ApplyStep::launches)
    }
}

/// Device 0's part beyond its recurrence: x, its copies of p̃ and r̃, and the inner
/// products (`dot`, one per launch).
pub(super) struct Owner {
    pub(super) x: wgpu::Buffer,
    pub(super) pt: wgpu::Buffer,
    pub(super) rt: wgpu::Buffer,
    pub(super) bg_x: wgpu::BindGroup,
    pub(super) dot: Kernel,
    pub(super) bg_ptq: Vec<wgpu::BindGroup>,
    pub(super) bg_rho: Vec<wgpu::BindGroup>,
}

impl Owner {
    pub(super) fn new<T: Scalar>(rec: &Recurrence<T>) -> Result<Self> {
        let (e, n) = (&rec.engine, rec.n());
        let x = poisoned::<T>(e, "bicg2 x", n)?;
        let pt = poisoned::<T>(e, "bicg2 p~ (copy of device 1's)", n)?;
        let rt = poisoned::<T>(e, "bicg2 r~ (copy of device 1's)", n)?;
        let alpha = e.uniform_from(
            "bicg2 params",
            &Params {
                num: S_RHO,
                den: S_PTQ,
                ..rec.base
            },
        );
        let bg_x = rec.bufs.bind(e, &rec.axpy, &alpha, &[(5, &rec.p), (6, &x)]);
        let dot = solver_kernel::<T>(e, "dot", rec.config)?;
        let bind_dot = |slot: u32, a: &wgpu::Buffer, b: &wgpu::Buffer| {
            let params = e.uniform_from("bicg2 params", &Params { slot, ..rec.base });
            rec.bufs.bind(e, &dot, &params, &[(5, a), (6, b)])
        };
        let bg_ptq = vec![
            bind_dot(SLOT_PTQ, &pt, &rec.q),
            bind_dot(SLOT_PTQ + 1, &pt, &pt),
            bind_dot(SLOT_PTQ + 2, &rec.q, &rec.q),
        ];
        let z = rec.zr();
        let bg_rho = vec![
            bind_dot(SLOT_RHO, z, &rt),
            bind_dot(SLOT_RHO + 1, z, z),
            bind_dot(SLOT_RHO + 2, &rt, &rt),
            bind_dot(SLOT_RHO + 3, &rec.r, &rec.r),
        ];
        Ok(Owner {
            x,
            pt,
            rt,
            bg_x,
            dot,
            bg_ptq,
            bg_rho,
        })
    }

    pub(super) fn record_dots(&self, batch: &mut Batch<'_>, bgs: &[wgpu::BindGroup], groups: u32) {
        for bg in bgs {
            batch.dispatch(&self.dot, bg, groups);
        }
    }
}

/// M on each device: D⁻¹ on both, or the factorisation computed once on the host and split
/// (M⁻¹'s factors to device 0, M⁻ᵀ's to device 1).
pub(super) fn split_m<T: Scalar>(
    engines: [&Engine; 2],
    a: &Csr<T>,
    opts: &SolveOptions,
    report: &mut SolveReport,
) -> Result<[SideM; 2]> {
    Ok(match opts.precond {
        Precond::None => [SideM::None, SideM::None],
        Precond::Jacobi => {
            let (m0, m1) = (Jacobi::new(engines[0], a)?, Jacobi::new(engines[1], a)?);
            report.preconditioner = GpuPreconditioner::<T>::info(&m0);
            [SideM::Jacobi(m0), SideM::Jacobi(m1)]
        }
        kind => {
            let start = Instant::now();
            let host = HostIlu::new(a, kind, opts.trisolve)?;
            let own = IluSide::upload(engines[0], &host, false)?;
            let shadow = IluSide::upload(engines[1], &host, true)?;
            let mut info = crate::cpu::precond::CpuPreconditioner::info(&host)
                .expect("ILU reports its set-up");
            info.setup_seconds = start.elapsed().as_secs_f64();
            if let Some(notice) = info.shift_notice.clone() {
                report.notes.push(notice);
            }
            report.preconditioner = Some(info);
            [SideM::Ilu(Box::new(own)), SideM::Ilu(Box::new(shadow))]
        }
    })
}
