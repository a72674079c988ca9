//! Pipelined GMRES (paper 000, Alg. 6, classical Gram–Schmidt): step i of a cycle is four
//! fused kernels (two in step 1), no host transfer inside the Gram–Schmidt process; r is never
//! updated inside the cycle (ξ_i = ⟨r_0, v_i⟩), so the update needs no η̃ correction.
//!
//! | kernel | Alg. 6 | does |
//! |---|---|---|
//! | `gmres_spmv_dot` | l.7 (step 1: l.3–4) | v_i = A v_{i−1} (A D⁻¹v_{i−1}), first stage of ⟨v_{i−1}, v_i⟩ and ‖A v_{i−1}‖²; step 1 finishes ρ0 = ‖r‖ and writes v_0 = r/ρ0 |
//! | `gmres_basis_dots` | l.8–10 | first stage of ⟨v_j, v_i⟩, j = 1 … i−2 (from step 2; empty range in step 2) |
//! | `gmres_gs_update` | l.11–13 | second stage of all R_{j,i}, v_i −= Σ R_{j,i} v_j, first stage of ‖v_i‖ (from step 2) |
//! | `gmres_normalize` | l.14–15 | R_{i,i} = ‖v_i‖ (+ breakdown test), v_i /= R_{i,i}, z = D⁻¹v_i, first stage of ξ_i |
//!
//! With CGS2 every step from the second re-orthogonalises once: `gmres_basis_dots` over
//! j = 1 … i−1 and a second `gmres_gs_update` adding to R.

use super::basis::{GmresSystem, SLOT_DOTS};
use super::cycles::{GmresVariant, paper_steps_with};
use super::least_squares::CycleData;
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::Params;
use crate::gpu::{Batch, Kernel};
use crate::solvers::driver::Run;
use crate::solvers::{CheckMode, GramSchmidt};

// Kernel flags (`params.flags`).
const RESIDUAL_WRITE_Z: u32 = 1;
const SPMV_FIRST: u32 = 1;
const SPMV_MONITOR: u32 = 2;
const GS_PASS2: u32 = 1;
const GS_NORM: u32 = 2;
const NORMALIZE_FIRST: u32 = 1;

/// Step i's launches bound to their buffers.
struct Step {
    /// l.7: v_i = A v_{i−1} + first stages of ⟨v_{i−1}, v_i⟩ and ‖A v_{i−1}‖².
    spmv_dot: wgpu::BindGroup,
    /// l.8–13, i ≥ 2: ⟨v_j, v_i⟩ for j = 1 … i−2, then R_{j,i} and v_i −= Σ R_{j,i} v_j.
    gs: Option<(wgpu::BindGroup, wgpu::BindGroup)>,
    /// CGS2, i ≥ 2: the same again over j = 1 … i−1, adding to R.
    reorth: Option<(wgpu::BindGroup, wgpu::BindGroup)>,
    /// l.14–15: R_{i,i}, v_i /= R_{i,i}, z = D⁻¹v_i, first stage of ξ_i.
    normalize: wgpu::BindGroup,
}

/// Pipelined GMRES's kernels and the bind groups of its m steps.
pub(super) struct Pipelined<'a, T> {
    sys: &'a GmresSystem<'a, T>,
    spmv_dot: Kernel,
    gs_update: Kernel,
    normalize: Kernel,
    /// `gmres_gs_update` without its norm flag (CGS2's first pass: the second starts ‖w‖²)
    /// and `gmres_basis_dots` over the empty range of step 2: launches that start no
    /// reduction ([`Kernel::without_reduction`]).
    gs_update_no_norm: Kernel,
    dots_empty: Kernel,
    steps: Vec<Step>,
}

impl<'a, T: Scalar> Pipelined<'a, T> {
    pub(super) fn new(sys: &'a GmresSystem<'a, T>) -> Result<Self> {
        let (spmv_dot, gs_update, normalize) = (
            sys.kernel("gmres_spmv_dot")?,
            sys.kernel("gmres_gs_update")?,
            sys.kernel("gmres_normalize")?,
        );
        let (m, lay, at, base) = (sys.m, sys.lay, sys.at, sys.params());
        let monitor = if sys.mode == CheckMode::Device {
            SPMV_MONITOR
        } else {
            0
        };
        let cgs2 = sys.gs == GramSchmidt::Cgs2;
        let steps = (1..=m)
            .map(|i| {
                let src = if sys.jacobi() {
                    at.z()
                } else if i == 1 {
                    at.r()
                } else {
                    (i - 1) as u32
                };
                let gs_update = |flags| {
                    sys.bind(
                        &gs_update,
                        Params {
                            comp_monitor: i as u32,
                            comp: lay.r_at(0, i) as u32,
                            den: lay.step(i) as u32,
                            flags,
                            ..base
                        },
                    )
                };
                let pass =
                    |j1, flags| (sys.bind_dots(i as u32, 1, j1, SLOT_DOTS), gs_update(flags));
                Step {
                    spmv_dot: sys.bind(
                        &spmv_dot,
                        Params {
                            comp_monitor: i as u32,
                            num: src,
                            den: at.r(),
                            slot: lay.rec(i.saturating_sub(1)) as u32,
                            comp: lay.steps as u32,
                            flags: monitor | if i == 1 { SPMV_FIRST } else { 0 },
                            ..base
                        },
                    ),
                    gs: (i >= 2).then(|| pass(i - 1, if cgs2 { 0 } else { GS_NORM })),
                    reorth: (i >= 2 && cgs2).then(|| pass(i, GS_PASS2 | GS_NORM)),
                    normalize: sys.bind(
                        &normalize,
                        Params {
                            comp_monitor: i as u32,
                            comp: lay.r_at(i, i) as u32,
                            den: lay.step(i) as u32,
                            slot: lay.rec(i) as u32,
                            num: at.r(),
                            dst: at.z(),
                            flags: if i == 1 { NORMALIZE_FIRST } else { 0 },
                            ..base
                        },
                    ),
                }
            })
            .collect();
        Ok(Pipelined {
            sys,
            gs_update_no_norm: gs_update.without_reduction(),
            dots_empty: sys.dots.without_reduction(),
            spmv_dot,
            gs_update,
            normalize,
            steps,
        })
    }
}

impl<T: Scalar> GmresVariant<T> for Pipelined<'_, T> {
    /// The restart also writes z = D⁻¹r, which step 1's SpMV reads with Jacobi.
    fn residual_flags(&self) -> u32 {
        RESIDUAL_WRITE_Z
    }

    /// Nothing beyond r = b − Ax: step 1's `gmres_spmv_dot` finishes ρ0 and writes v_0.
    fn record_restart(&self, _: &mut Batch<'_>) {}

    fn record_step(&self, batch: &mut Batch<'_>, i: usize) {
        let (sys, st) = (self.sys, &self.steps[i - 1]);
        sys.dispatch(batch, &self.spmv_dot, &st.spmv_dot);
        if let Some((dots, update)) = &st.gs {
            // j = 1 … i−2 is empty in step 2; with CGS2 the second pass starts ‖w‖².
            let dots_kernel = if i == 2 { &self.dots_empty } else { &sys.dots };
            let update_kernel = if st.reorth.is_some() {
                &self.gs_update_no_norm
            } else {
                &self.gs_update
            };
            sys.dispatch(batch, dots_kernel, dots);
            sys.dispatch(batch, update_kernel, update);
        }
        if let Some((dots, update)) = &st.reorth {
            sys.dispatch(batch, &sys.dots, dots);
            sys.dispatch(batch, &self.gs_update, update);
        }
        sys.dispatch(batch, &self.normalize, &st.normalize);
    }

    /// The steps one submit each, ξ_i finished on the host from the step record read back
    /// after it (paper 000's monitoring transfer), then R once.
    fn paper_steps(&self, run: &mut Run<'_>, mc: usize, data: &mut CycleData<T>) -> Result<()> {
        let lay = &self.sys.lay;
        paper_steps_with(
            self.sys,
            (run, mc, data),
            |batch, i| self.record_step(batch, i),
            |i| lay.rec(i) + lay.stride,
            |c, i| (lay.record_xi(c, i), None),
        )
    }

    fn last_xi_on_host(&self) -> bool {
        true
    }
}
