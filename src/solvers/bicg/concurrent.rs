//! Concurrent BiCG with a factored M (ILU(0)/IC(0); paper 004 §3): the pipelined iteration
//! with the A-recurrence and the Aᵀ-recurrence side by side in every launch. The residuals
//! live stacked, rr = [r; r̃] (2n entries), and so do the preconditioned ones,
//! zz = [z; z̃] = [M⁻¹r; M⁻ᵀr̃], which one stacked apply ([`StackedIlu`]) forms with both
//! triangular solves of both applies in the same dispatches. An iteration (the lines of the
//! [module docs](super)):
//!
//! * `bicg_update` (flag `BICG_STACKED`) — lines 6b, 7–8: α, x, and r, r̃ in rr;
//! * the stacked apply — line 1: zz = diag(U, Lᵀ)⁻¹ diag(L, Uᵀ)⁻¹ rr, `D_s` launches;
//! * `bicg_rho` — lines 2a, 9a: first stage of ⟨z,r̃⟩, ‖z‖², ‖r̃‖², ‖r‖² (slot 0);
//! * `bicg_direction_spmv` (flag `BICG_STACKED`) — lines 2b, 9b, 3–5, 6a as in the pipelined
//!   variant, the directions formed from zz: q = A·p and q̃ = Aᵀ·p̃ in one launch.
//!
//! `3 + D_s` launches per iteration, 2 global reductions (`bicg_rho`, `bicg_direction_spmv`;
//! `bicg_update` is recorded [`without_reduction`](crate::gpu::Kernel::without_reduction)). Setup: `bicg_init` (r, r̃ = r), two buffer copies of r
//! into rr (copies, not launches), then the apply, `bicg_rho` and the direction kernel.

use super::System;
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{Params, SolverBuffers, solver_kernel};
use crate::gpu::{Batch, Engine, Kernel};
use crate::precond::ilu::StackedIlu;
use crate::precond::{ApplySite, ApplyStep};

/// The stacked vectors of the concurrent variant and the launches between its update and
/// direction kernels: the stacked apply and `bicg_rho`.
pub(super) struct Stacked {
    n: usize,
    elem: usize,
    /// [r; r̃].
    pub(super) rr: wgpu::Buffer,
    /// [z; z̃] = [M⁻¹r; M⁻ᵀr̃].
    pub(super) zz: wgpu::Buffer,
    apply: ApplyStep,
    rho: Kernel,
    bg_rho: wgpu::BindGroup,
}

impl Stacked {
    /// Allocates rr and zz and binds the stacked apply of `m` and `bicg_rho` for `sys`.
    pub(super) fn new<T: Scalar>(
        engine: &Engine,
        sys: &System<T>,
        bufs: &SolverBuffers,
        m: &StackedIlu<T>,
    ) -> Result<Self> {
        let n = sys.n;
        let rr = engine.storage_zeroed::<T>("[r; r~]", 2 * n)?;
        let zz = engine.storage_zeroed::<T>("[z; z~]", 2 * n)?;
        let config = sys.a.shader_config(engine);
        // The stacked solves run over 2n rows (the sweeps read params.n).
        let params = engine.uniform_from(
            "bicg stacked apply params",
            &Params {
                n: (2 * n) as u32,
                ..sys.params(bufs)
            },
        );
        let at = ApplySite {
            engine,
            config,
            bufs,
            params: &params,
        };
        let apply = m.bind_apply(&at, &rr, &zz)?;
        let rho = solver_kernel::<T>(engine, "bicg_rho", config)?;
        let params = engine.uniform_from("bicg rho params", &sys.params(bufs));
        let bg_rho = bufs.bind(engine, &rho, &params, &[(5, &rr), (6, &zz)]);
        Ok(Stacked {
            n,
            elem: size_of::<T>(),
            rr,
            zz,
            apply,
            rho,
            bg_rho,
        })
    }

    /// Launches of the stacked apply (`D_s`).
    pub(super) fn apply_launches(&self) -> usize {
        self.apply.launches()
    }

    /// Setup, after `bicg_init`: rr = [r; r] (r̃₀ = r₀), two copies.
    pub(super) fn record_copies(&self, batch: &mut Batch<'_>, r: &wgpu::Buffer) {
        let bytes = (self.n * self.elem) as u64;
        batch.copy(r, 0, &self.rr, 0, bytes);
        batch.copy(r, 0, &self.rr, bytes, bytes);
    }

    /// Lines 1, 2a, 9a: zz = [M⁻¹r; M⁻ᵀr̃] (the stacked apply) and `bicg_rho`.
    pub(super) fn record(&self, batch: &mut Batch<'_>, groups: u32) {
        self.apply.record(batch);
        batch.dispatch(&self.rho, &self.bg_rho, groups);
    }
}
