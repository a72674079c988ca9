//! Pipelined BiCG: the iteration as two fused kernels (the lines are those of the
//! [module docs](super)):
//!
//! * step 1, `bicg_direction_spmv` — lines 2b, 9b (second stage of ρ and ‖r‖², the
//!   convergence check and the test of ρ), 3–4 (β and the new directions, formed inside the
//!   gathers of) line 5 (q = A·p, q̃ = Aᵀ·p̃), and 6a (first stage of ⟨p̃,q⟩, ‖p̃‖², ‖q‖²);
//! * step 2, `bicg_update` — lines 6b (second stage of ⟨p̃,q⟩ and its test, α), 7–8 (x, r, r̃),
//!   1 and 2a, 9a (first stage of ⟨z,r̃⟩, ‖z‖², ‖r̃‖², ‖r‖², z = D⁻¹r formed on the fly).
//!
//! Setup records line 0 (`bicg_init`) and step 1; an iteration is step 2 then step 1.
//!
//! With a factored M the same two kernels run the [concurrent](super::concurrent) variant:
//! they read and write the stacked [r; r̃] and [z; z̃], and the stacked apply and `bicg_rho`
//! run between step 2 and step 1.
//!
//! Global reductions per iteration: 2 in both (the 6a sums and the 9a sums; in the concurrent
//! variant `bicg_rho` starts the latter and `bicg_update` none).

use std::cell::Cell;

use super::concurrent::Stacked;
use super::{
    Common, FLAG_CHECKS, FLAG_STACKED, check_ptq, check_rho, count_loop, paper_stop, residual_stop,
};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{Params, solver_kernel};
use crate::gpu::{Batch, Engine, Kernel};
use crate::solvers::CheckMode;
use crate::solvers::driver::{GpuIterative, LoopEnd, PaperLoop, Run, sum_component};

/// Pipelined BiCG: `bicg_update` + `bicg_direction_spmv`, 2 launches per iteration (the
/// concurrent variant: + the stacked apply and `bicg_rho` in between).
pub struct Pipelined<'a, T> {
    c: &'a Common<'a, T>,
    /// The concurrent variant's stacked vectors and launches (a factored M).
    stacked: Option<&'a Stacked>,
    direction: Kernel,
    update: Kernel,
    /// Step 1, `[k]`: reads the directions in buffer k, writes them to buffer 1 − k.
    bg_direction: [wgpu::BindGroup; 2],
    /// Step 2, `[k]`: uses the directions in buffer k.
    bg_update: [wgpu::BindGroup; 2],
    /// Which direction buffer holds the current p, p̃.
    current: Cell<usize>,
    /// A stop the host found while finishing the setup's sums (`paper` mode).
    pending: Cell<Option<LoopEnd>>,
}

impl<'a, T: Scalar> Pipelined<'a, T> {
    /// The pipelined variant, or with `stacked` the concurrent one.
    pub(super) fn new(
        engine: &Engine,
        c: &'a Common<'a, T>,
        mode: CheckMode,
        stacked: Option<&'a Stacked>,
    ) -> Result<Self> {
        let (sys, bufs) = (c.sys, c.bufs);
        let cfg = sys.a.shader_config(engine);
        let direction = solver_kernel::<T>(engine, "bicg_direction_spmv", cfg)?;
        let update = solver_kernel::<T>(engine, "bicg_update", cfg)?;
        // Stacked (concurrent BiCG with a factored M): `bicg_rho` starts the sums of slot 0
        // after the apply, `bicg_update` none.
        let update = match stacked {
            Some(_) => update.without_reduction(),
            None => update,
        };
        // In `device` mode the kernels test the breakdowns themselves.
        let mut flags = if mode == CheckMode::Device {
            FLAG_CHECKS
        } else {
            0
        };
        // The residuals the kernels update (r, r̃) and form the directions from (z, z̃).
        let (r, rt, z, zt) = match stacked {
            Some(s) => {
                flags |= FLAG_STACKED;
                (&s.rr, &sys.rt, &s.zz, &s.zz)
            }
            None => (&sys.r, &sys.rt, &sys.r, &sys.rt),
        };
        let params = engine.uniform_from(
            "bicg params",
            &Params {
                flags,
                ..sys.params(bufs)
            },
        );
        let bg_direction = [0, 1].map(|k| {
            let mut vecs = sys.a.bindings(false);
            vecs.extend(sys.at.bindings(true));
            vecs.extend([
                (11, z),
                (12, zt),
                (13, &sys.p[k]),
                (14, &sys.pt[k]),
                (15, &sys.p[1 - k]),
                (16, &sys.pt[1 - k]),
                (17, &sys.q),
                (18, &sys.qt),
                (19, sys.dinv()),
            ]);
            bufs.bind(engine, &direction, &params, &vecs)
        });
        let bg_update = [0, 1].map(|k| {
            let vecs = [
                (5, &sys.x),
                (6, r),
                (7, rt),
                (8, &sys.p[k]),
                (9, &sys.q),
                (10, &sys.qt),
                (11, sys.dinv()),
            ];
            bufs.bind(engine, &update, &params, &vecs)
        });
        Ok(Pipelined {
            c,
            stacked,
            direction,
            update,
            bg_direction,
            bg_update,
            current: Cell::new(0),
            pending: Cell::new(None),
        })
    }

    /// Step 1 (lines 2b, 9b, 3–5, 6a): finishes ρ and ‖r‖, forms p, p̃ in the other buffer
    /// inside q = A·p, q̃ = Aᵀ·p̃, first stage of ⟨p̃,q⟩.
    fn record_direction(&self, batch: &mut Batch<'_>) {
        let k = self.current.get();
        batch.dispatch(&self.direction, &self.bg_direction[k], self.c.groups());
        self.current.set(1 - k);
    }

    /// Step 2 (lines 6b, 7–8, 1, 2a, 9a): α, x, r, r̃, first stages of ρ and ‖r‖² (the
    /// concurrent variant: lines 1, 2a and 9a as the stacked apply and `bicg_rho`).
    fn record_update(&self, batch: &mut Batch<'_>) {
        let k = self.current.get();
        batch.dispatch(&self.update, &self.bg_update[k], self.c.groups());
        if let Some(s) = self.stacked {
            s.record(batch, self.c.groups());
        }
    }

    /// Lines 2 and 6 tested on the host, from slots 0 (ρ, ‖z‖², ‖r̃‖², ‖r‖²) and 1
    /// (⟨p̃,q⟩, ‖p̃‖², ‖q‖²).
    fn check(&self, parts: &[T]) -> Option<LoopEnd> {
        let g = self.c.groups() as usize;
        let s = |slot, comp| sum_component(parts, g, slot, comp);
        let rho = s(0, 0);
        check_rho::<T>(rho, s(0, 1), s(0, 2))
            .or_else(|| check_ptq::<T>(s(1, 0), s(1, 1), s(1, 2), rho))
    }
}

impl<T: Scalar> GpuIterative<T> for Pipelined<'_, T> {
    /// Line 0 and step 1 (the first directions: ρ_old = 0 there means p = z, p̃ = z̃); the
    /// concurrent variant forms [z; z̃] from rr = [r; r] in between.
    fn setup(&self, engine: &Engine, run: &mut Run<'_>, mode: CheckMode) -> Result<Option<f64>> {
        self.pending.set(None);
        let batch = self.c.begin_setup(engine, |b| {
            if let Some(s) = self.stacked {
                s.record_copies(b, &self.c.sys.r);
                s.record(b, self.c.groups());
            }
            self.record_direction(b)
        });
        match mode {
            CheckMode::Device => self.c.read_first_residual(batch, run),
            CheckMode::Paper => {
                let parts = self.c.read_slots(batch, 0, 2)?;
                self.pending.set(self.check(&parts));
                Ok(Some(sum_component(&parts, self.c.groups() as usize, 0, 3)))
            }
        }
    }

    fn record_iteration(&self, batch: &mut Batch<'_>) {
        self.record_update(batch);
        self.record_direction(batch);
    }

    /// One submit of the two steps and one readback of both partial slots per iteration;
    /// the host finishes ‖r‖ (line 9), ρ and ⟨p̃,q⟩ (the tests of lines 2 and 6) before the
    /// next submit would use them.
    fn paper_loop(&self, lp: &PaperLoop<'_>, run: &mut Run<'_>) -> Result<LoopEnd> {
        let (engine, opts, threshold) = (lp.engine, lp.opts, lp.threshold);
        let g = self.c.groups() as usize;
        loop {
            if let Some(end) = paper_stop(&self.pending, run, opts) {
                return Ok(end);
            }
            let before = engine.counters().snapshot();
            let mut batch = engine.begin("bicg iteration");
            self.record_iteration(&mut batch);
            let parts = self.c.read_slots(batch, 0, 2)?;
            count_loop(engine, run, &before);
            run.recorded += 1;
            run.batch_size = 1;
            if let Some(end) = residual_stop(run, sum_component(&parts, g, 0, 3), threshold) {
                return Ok(end);
            }
            self.pending.set(self.check(&parts));
        }
    }
}
