//! Fused GMRES (variant `fused`): pipelined GMRES's step (paper 000, Alg. 6, classical
//! Gram–Schmidt) in **two launches** instead of four. The pool keeps w_j = R_{j,j} v_j
//! unnormalised; every kernel divides by R_{j,j} where it reads v_j, so the normalisation
//! of step i − 1 (l.14–15: a global reduction) is finished by the first launch of step i,
//! which also forms every inner product of the new vector over the rows its own product
//! wrote:
//!
//! | kernel | Alg. 6 | does |
//! |---|---|---|
//! | `gmres_scale_spmv_dots` | l.14–15 of step i − 1, l.7, l.8–10 | R_{i−1,i−1} = ‖w_{i−1}‖ (+ breakdown test), ξ_{i−1} = ⟨r, w_{i−1}⟩/R_{i−1,i−1} and the estimate; w = A v_{i−1} (A D⁻¹ v_{i−1}); first stage of ⟨w_j, w⟩, j = 1 … i−1, and ‖w‖² (step 1: ρ0, v_0 = r/ρ0 instead of the closing) |
//! | `gmres_gs_update` (SCALED, XI) | l.9–13, first stages of l.14–15 | R_{j,i}, w −= Σ R_{j,i} v_j, first stage of ‖w‖² and ⟨r, w⟩ |
//!
//! A cycle of k steps is 2k launches and one more that closes step k
//! (`gmres_scale_spmv_dots` with CLOSE_ONLY: no product, no new reduction): 2k + 1 against
//! pipelined GMRES's 4k − 2. Global reductions: 2 per step (every launch starts one; the
//! closing launch only finishes). With CGS2 each step from the second re-orthogonalises once
//! more (`gmres_basis_dots` over j = 1 … i−1 and a second `gmres_gs_update`): 4 launches.
//!
//! `paper` mode closes every step in its own launch (3 per step) and reads its record —
//! [‖A v_{i−1}‖², R_{i,i}, ξ_i] finished on the device — once per step, as pipelined GMRES
//! reads its partial sums.
//!
//! x = x0 + D⁻¹ Σ η_i v_{i−1} with v_{i−1} = w_{i−1}/R_{i−1,i−1}: the update's coefficients
//! are η_i/R_{i−1,i−1} (v_0 = r/ρ0 is stored normalised by step 1).

use super::basis::GmresSystem;
use super::cycles::{GmresVariant, paper_steps_with};
use super::least_squares::CycleData;
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::Params;
use crate::gpu::{Batch, Kernel};
use crate::solvers::driver::Run;
use crate::solvers::{CheckMode, GramSchmidt};

use super::basis::SLOT_DOTS;

// `gmres_scale_spmv_dots` flags.
const SPMV_FIRST: u32 = 1;
const SPMV_MONITOR: u32 = 2;
const CLOSE_ONLY: u32 = 4;
const CLOSED: u32 = 8;
// `gmres_gs_update` flags.
const GS_PASS2: u32 = 1;
const GS_NORM: u32 = 2;
const GS_SCALED: u32 = 4;
const GS_XI: u32 = 8;

/// Step i's launches bound to their buffers.
struct Step {
    /// Closes step i − 1 (device mode), w = A v_{i−1}, first stage of every ⟨w_j, w⟩.
    spmv_dots: wgpu::BindGroup,
    /// The same with step i − 1 closed by its own launch (`paper` mode only).
    spmv_dots_closed: Option<wgpu::BindGroup>,
    /// R_{j,i}, w −= Σ R_{j,i} v_j (+ ‖w‖², ⟨r, w⟩ unless CGS2 follows).
    update: wgpu::BindGroup,
    /// CGS2, i ≥ 2: ⟨w_j, w⟩ for j = 1 … i−1 and the second update.
    reorth: Option<(wgpu::BindGroup, wgpu::BindGroup)>,
    /// Closes step i on its own: the end of a cycle, every step in `paper` mode.
    close: wgpu::BindGroup,
}

/// Fused GMRES's kernels and the bind groups of its m steps.
pub(super) struct Fused<'a, T> {
    sys: &'a GmresSystem<'a, T>,
    spmv_dots: Kernel,
    /// `gmres_scale_spmv_dots` with CLOSE_ONLY: finishes sums, starts none.
    close: Kernel,
    gs_update: Kernel,
    /// CGS2's first pass, which starts no reduction (the second starts ‖w‖², ⟨r, w⟩).
    gs_update_no_norm: Kernel,
    steps: Vec<Step>,
}

impl<'a, T: Scalar> Fused<'a, T> {
    pub(super) fn new(sys: &'a GmresSystem<'a, T>) -> Result<Self> {
        let (spmv_dots, gs_update) = (
            sys.kernel("gmres_scale_spmv_dots")?,
            sys.kernel("gmres_gs_update")?,
        );
        let (m, lay, at, base) = (sys.m, sys.lay, sys.at, sys.params());
        let monitor = if sys.mode == CheckMode::Device {
            SPMV_MONITOR
        } else {
            0
        };
        let cgs2 = sys.gs == GramSchmidt::Cgs2;
        // `gmres_scale_spmv_dots` of step i (comp_monitor = i closes step i − 1).
        let spmv = |i: usize, flags: u32| {
            sys.bind(
                &spmv_dots,
                Params {
                    comp_monitor: i as u32,
                    num: if i == 1 { at.r() } else { (i - 1) as u32 },
                    den: at.r(),
                    slot: lay.rec(i - 1) as u32,
                    comp: lay.steps as u32,
                    dst: lay.r_at(i - 1, i - 1) as u32,
                    flags: flags | if i == 1 { SPMV_FIRST } else { 0 },
                    ..base
                },
            )
        };
        let steps = (1..=m)
            .map(|i| {
                let update = |flags| {
                    sys.bind(
                        &gs_update,
                        Params {
                            comp_monitor: i as u32,
                            comp: lay.r_at(0, i) as u32,
                            den: lay.step(i) as u32,
                            slot: lay.rec(i) as u32,
                            num: at.r(),
                            flags: GS_SCALED | flags,
                            ..base
                        },
                    )
                };
                let reorth = i >= 2 && cgs2;
                Step {
                    spmv_dots: spmv(i, monitor),
                    spmv_dots_closed: (sys.mode == CheckMode::Paper).then(|| spmv(i, CLOSED)),
                    update: update(if reorth { 0 } else { GS_NORM | GS_XI }),
                    reorth: reorth.then(|| {
                        (
                            sys.bind_dots(i as u32, 1, i, SLOT_DOTS),
                            update(GS_PASS2 | GS_NORM | GS_XI),
                        )
                    }),
                    close: spmv(i + 1, monitor | CLOSE_ONLY),
                }
            })
            .collect();
        Ok(Fused {
            sys,
            close: spmv_dots.without_reduction(),
            gs_update_no_norm: gs_update.without_reduction(),
            spmv_dots,
            gs_update,
            steps,
        })
    }

    /// Step i's launches after its product: the update (and CGS2's second pass).
    fn record_update(&self, batch: &mut Batch<'_>, st: &Step) {
        let sys = self.sys;
        match &st.reorth {
            None => sys.dispatch(batch, &self.gs_update, &st.update),
            Some((dots, update)) => {
                sys.dispatch(batch, &self.gs_update_no_norm, &st.update);
                sys.dispatch(batch, &sys.dots, dots);
                sys.dispatch(batch, &self.gs_update, update);
            }
        }
    }
}

impl<T: Scalar> GmresVariant<T> for Fused<'_, T> {
    /// The product applies D⁻¹ as it reads its vector: no z.
    fn residual_flags(&self) -> u32 {
        0
    }

    /// Nothing beyond r = b − Ax: step 1's product finishes ρ0 and writes v_0.
    fn record_restart(&self, _: &mut Batch<'_>) {}

    fn record_step(&self, batch: &mut Batch<'_>, i: usize) {
        let st = &self.steps[i - 1];
        self.sys.dispatch(batch, &self.spmv_dots, &st.spmv_dots);
        self.record_update(batch, st);
    }

    /// Step k's closing (R_{k,k}, ξ_k, the estimate): the next step would have done it.
    fn record_cycle_end(&self, batch: &mut Batch<'_>, k: usize) {
        self.sys
            .dispatch(batch, &self.close, &self.steps[k - 1].close);
    }

    /// The steps one submit each — product, update, closing — and the step's record read
    /// back after it (R_{i,i} and ξ_i finished on the device), then R once.
    fn paper_steps(&self, run: &mut Run<'_>, mc: usize, data: &mut CycleData<T>) -> Result<()> {
        let (sys, lay) = (self.sys, &self.sys.lay);
        let record = |batch: &mut Batch<'_>, i: usize| {
            let st = &self.steps[i - 1];
            // Step 1 closes nothing; later steps find the previous one closed.
            let product = match (i, &st.spmv_dots_closed) {
                (2.., Some(closed)) => closed,
                _ => &st.spmv_dots,
            };
            sys.dispatch(batch, &self.spmv_dots, product);
            self.record_update(batch, st);
            sys.dispatch(batch, &self.close, &st.close);
        };
        paper_steps_with(
            sys,
            (run, mc, data),
            record,
            |i| lay.rec(i) + 3,
            |c, i| (c[lay.rec(i) + 2].as_f64(), None),
        )
    }

    /// l.22 with v_{i−1} = w_{i−1}/R_{i−1,i−1} (v_0 is stored normalised).
    fn update_coefficients(&self, eta: &[f64], data: &CycleData<T>, coef: &mut [T]) {
        for i in 1..eta.len() {
            let scale = if i >= 2 { data.r[i - 1][i - 1] } else { 1.0 };
            coef[i] = T::from_f64(eta[i] / scale);
        }
    }

    fn last_xi_on_host(&self) -> bool {
        false
    }

    fn basis_norms(&self, data: &CycleData<T>) -> Option<Vec<f64>> {
        Some((1..=data.k).map(|j| data.r[j][j]).collect())
    }
}
