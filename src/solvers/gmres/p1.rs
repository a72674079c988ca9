//! p(1)-GMRES (variant `p1`; Ghysels, Ashby, Meerbergen & Vanroose 2013, shift 0): the step
//! of simpler GMRES in **one launch** and one global reduction. Beside the orthonormal v_j
//! the pool keeps u_j = A v_{j−1}, which follows from the previous one without waiting for
//! v_{j−1}'s normalisation (paper 000 §3.3's shift invariance):
//!
//! ```text
//! u_1     = A v_0 = A r/ρ0
//! R_{j,i} = ⟨u_i, v_j⟩ (j < i),   R_{i,i} = √(‖u_i‖² − Σ_j R_{j,i}²)
//! ξ_i     = (⟨r, u_i⟩ − Σ_j R_{j,i} ξ_j) / R_{i,i}
//! v_i     = (u_i − Σ_j R_{j,i} v_j) / R_{i,i}
//! u_{i+1} = (A u_i − Σ_j R_{j,i} u_{j+1}) / R_{i,i}
//! ```
//!
//! | kernel | does |
//! |---|---|
//! | `gmres_p1_step` (launch i) | closes step i − 1 (R's column, ξ_{i−1}, the estimate, stop tests); per row of A·u_{i−1}: v_{i−1} and u_i; first stage of ⟨u_i, v_j⟩ (j < i), ‖u_i‖², ⟨r, u_i⟩ |
//! | `gmres_p1_step` with CLOSE_ONLY | closes step k and writes v_k (the end of a cycle) |
//!
//! A cycle of k steps is k + 1 launches (fused GMRES: 2k + 1, pipelined: 4k − 2) and k
//! global reductions (+ the restart's ‖r‖²). The price: a second basis (2m + 5 pool vectors
//! instead of m + 5), R_{i,i} from Pythagoras, and u_i a recurrence rather than a product.
//! R_{i,i} is provisional: launch i + 1 also sums ‖v_i‖², and launch i + 2 rescales v_i and
//! u_{i+1} by it and corrects R_{i,i}, ξ_i and the estimate (the lagged norm of PETSc's
//! PGMRES), so the basis stays normalised; a cycle's last step keeps its provisional pair.
//! When ‖u_i‖² − Σ R² ≤ √ε‖u_i‖² (R_{i,i} too small to be known to about a percent) the
//! cycle keeps its first i − 1 steps and GMRES restarts from the true residual
//! (`STOP_LOST`, counted in the report's `restarts` with a note); after
//! [`P1_MAX_LOST_CYCLES`](crate::cpu::gmres::P1_MAX_LOST_CYCLES) such cycles, or one that left
//! the restart residual where it was, the solve goes on as fused GMRES (`cycles.rs`). An optimistic estimate is caught by the true residual at the
//! restart, as for every variant. Classical Gram–Schmidt only (one pass: `--gs cgs2` runs
//! one, with a note).
//!
//! `paper` mode closes every step in its own launch (2 per step) and reads its record —
//! [‖u_i‖², R_{i,i}, ξ_i, ξ_{i−1} corrected] finished on the device — once per step.
//!
//! The CPU twin is [`crate::cpu::gmres::p1`] (the same recurrences in the same order).

use super::basis::GmresSystem;
use super::cycles::{GmresVariant, paper_steps_with};
use super::least_squares::CycleData;
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::Params;
use crate::gpu::{Batch, Kernel};
use crate::solvers::CheckMode;
use crate::solvers::driver::Run;

// `gmres_p1_step` flags.
const FIRST: u32 = 1;
const MONITOR: u32 = 2;
const CLOSE_ONLY: u32 = 4;
const CLOSED: u32 = 8;

/// Step i's launches bound to their buffers.
struct Step {
    /// Closes step i − 1 (device mode), v_{i−1}, u_i, the inner products of u_i.
    product: wgpu::BindGroup,
    /// The same with step i − 1 closed by its own launch (`paper` mode only).
    product_closed: Option<wgpu::BindGroup>,
    /// Closes step i on its own and writes v_i: the end of a cycle, every step in `paper`
    /// mode.
    close: wgpu::BindGroup,
}

/// p(1)-GMRES's kernel and the bind groups of its m steps.
pub(super) struct P1<'a, T> {
    sys: &'a GmresSystem<'a, T>,
    step: Kernel,
    /// `gmres_p1_step` with CLOSE_ONLY: finishes sums, starts none.
    close: Kernel,
    steps: Vec<Step>,
}

impl<'a, T: Scalar> P1<'a, T> {
    pub(super) fn new(sys: &'a GmresSystem<'a, T>) -> Result<Self> {
        let step = sys.kernel("gmres_p1_step")?;
        let (m, lay, at, base) = (sys.m, sys.lay, sys.at, sys.params());
        let monitor = if sys.mode == CheckMode::Device {
            MONITOR
        } else {
            0
        };
        // Launch i (comp_monitor = i) closes step i − 1.
        let launch = |i: usize, flags: u32| {
            sys.bind(
                &step,
                Params {
                    comp_monitor: i as u32,
                    num: at.u1(),
                    den: at.r(),
                    slot: lay.rec(i - 1) as u32,
                    comp: lay.steps as u32,
                    dst: lay.r_at(0, i - 1) as u32,
                    // R's column stride m + 1 in the high bits (step i − 2's R_{i−2,i−2}).
                    flags: flags | if i == 1 { FIRST } else { 0 } | ((m as u32 + 1) << 8),
                    ..base
                },
            )
        };
        let steps = (1..=m)
            .map(|i| Step {
                product: launch(i, monitor),
                product_closed: (sys.mode == CheckMode::Paper && i >= 2).then(|| launch(i, CLOSED)),
                close: launch(i + 1, monitor | CLOSE_ONLY),
            })
            .collect();
        Ok(P1 {
            sys,
            close: step.without_reduction(),
            step,
            steps,
        })
    }
}

impl<T: Scalar> GmresVariant<T> for P1<'_, T> {
    /// The product applies D⁻¹ as it reads its vector: no z.
    fn residual_flags(&self) -> u32 {
        0
    }

    /// Nothing beyond r = b − Ax: step 1's launch finishes ρ0, writes v_0 and u_1.
    fn record_restart(&self, _: &mut Batch<'_>) {}

    fn record_step(&self, batch: &mut Batch<'_>, i: usize) {
        self.sys
            .dispatch(batch, &self.step, &self.steps[i - 1].product);
    }

    /// Step k's closing (R's column k, ξ_k, the estimate, v_k).
    fn record_cycle_end(&self, batch: &mut Batch<'_>, k: usize) {
        self.sys
            .dispatch(batch, &self.close, &self.steps[k - 1].close);
    }

    /// The steps one submit each — product, closing — and the step's record read back
    /// after it (R_{i,i} and ξ_i finished on the device), then R once.
    fn paper_steps(&self, run: &mut Run<'_>, mc: usize, data: &mut CycleData<T>) -> Result<()> {
        let (sys, lay) = (self.sys, &self.sys.lay);
        let record = |batch: &mut Batch<'_>, i: usize| {
            let st = &self.steps[i - 1];
            sys.dispatch(
                batch,
                &self.step,
                st.product_closed.as_ref().unwrap_or(&st.product),
            );
            sys.dispatch(batch, &self.close, &st.close);
        };
        // The record of step i also holds ξ_{i−1} corrected by s_{i−1} (its lagged norm).
        paper_steps_with(
            sys,
            (run, mc, data),
            record,
            |i| lay.rec(i) + 4,
            |c, i| {
                (
                    c[lay.rec(i) + 2].as_f64(),
                    (i >= 2).then(|| c[lay.rec(i) + 3].as_f64()),
                )
            },
        )
    }

    fn last_xi_on_host(&self) -> bool {
        false
    }
}
