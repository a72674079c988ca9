//! Classical GMRES (paper 000, Alg. 5) as a conventional GPU library runs it: one BLAS-like
//! launch per operation on pool vectors (`gmres_basis_*`), every inner product a first stage
//! (`gmres_basis_dots`) plus a second stage that is a one-workgroup launch (`gmres_finish`,
//! `device` mode) or a readback finished on the host (`paper` mode, with an upload where the
//! device needs the value). Gram–Schmidt is MGS, CGS or CGS2; r is updated inside the cycle
//! (l.16, applied lazily before ξ_i), so the update of x uses the η̃ correction. The launch
//! table is in the [module docs](super).

use super::basis::{GmresSystem, H_RHO, SLOT_DOT, SLOT_DOTS, SLOT_RESIDUAL};
use super::cycles::GmresVariant;
use super::least_squares::{Breakdown, CycleData, StepEnd};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::Params;
use crate::gpu::{Batch, Kernel};
use crate::solvers::driver::{Run, sum_component};
use crate::solvers::{CheckMode, GramSchmidt};

// `gmres_finish` modes (`params.flags`).
const FINISH_RHO: u32 = 1;
const FINISH_NORM_W: u32 = 2;
const FINISH_COLUMN: u32 = 3;
const FINISH_RII: u32 = 4;
const FINISH_XI: u32 = 5;
const FINISH_PASS2: u32 = 16;

/// Step i's launches bound to their buffers.
struct Step {
    /// v_{i−1}: the vector l.7 multiplies (through z = M⁻¹v_{i−1} when M ≠ I).
    prev: u32,
    /// l.7 with Jacobi: z = D⁻¹v_{i−1} (bound either way).
    diag: wgpu::BindGroup,
    /// l.7: w = A v_{i−1} (A z).
    spmv: wgpu::BindGroup,
    /// l.8–13, CGS (i ≥ 2): all ⟨v_j, w⟩ at once, then w −= Σ c_j v_j.
    cgs: Option<(wgpu::BindGroup, wgpu::BindGroup)>,
    /// l.14: v_i = w/R_{i,i}.
    scale: wgpu::BindGroup,
    /// l.16 of step i − 1 (i ≥ 2): r −= ξ_{i−1} v_{i−1}.
    r_update: Option<wgpu::BindGroup>,
    /// l.15: first stage of ξ_i = ⟨r, v_i⟩.
    dot_xi: wgpu::BindGroup,
    /// The second stages on the device (`device` mode only).
    finish: Option<Finish>,
}

/// Step i's `gmres_finish` launches.
struct Finish {
    norm_w: wgpu::BindGroup,
    column: Option<wgpu::BindGroup>,
    column2: Option<wgpu::BindGroup>,
    rii: wgpu::BindGroup,
    xi: wgpu::BindGroup,
}

/// MGS against basis vector j: ⟨v_j, w⟩ (+ its finish on the device), w −= R_{j,i} v_j.
struct Mgs {
    dot: wgpu::BindGroup,
    finish: Option<wgpu::BindGroup>,
    axpy: wgpu::BindGroup,
}

/// Classical GMRES's kernels and the bind groups of its m steps.
pub(super) struct Classical<'a, T> {
    sys: &'a GmresSystem<'a, T>,
    spmv: Kernel,
    diag: Kernel,
    finish: Kernel,
    axpy: Kernel,
    scale: Kernel,
    /// l.3 on the device: ρ0 = ‖r‖ finished.
    bg_finish_rho: Option<wgpu::BindGroup>,
    /// l.4: v_0 = r/ρ0.
    bg_scale0: wgpu::BindGroup,
    /// First stage of ⟨w, w⟩.
    bg_dot_ww: wgpu::BindGroup,
    steps: Vec<Step>,
    /// Per basis vector j = 1 … m−1 (MGS only).
    mgs: Vec<Mgs>,
}

impl<'a, T: Scalar> Classical<'a, T> {
    pub(super) fn new(sys: &'a GmresSystem<'a, T>) -> Result<Self> {
        let (spmv, diag, finish, axpy, scale) = (
            sys.kernel("gmres_basis_spmv")?,
            sys.kernel("gmres_basis_diag")?,
            sys.kernel("gmres_finish")?,
            sys.kernel("gmres_basis_axpy")?,
            sys.kernel("gmres_basis_scale")?,
        );
        let (m, lay, at, base) = (sys.m, sys.lay, sys.at, sys.params());
        let (rv, zv, wv) = (at.r(), at.z(), at.w());
        let device = sys.mode == CheckMode::Device;
        let fin = |flags: u32, i: usize, slot: u32, den: usize, comp: usize, dst: usize| {
            let (comp_monitor, den, comp, dst) = (i as u32, den as u32, comp as u32, dst as u32);
            sys.bind(
                &finish,
                Params {
                    flags,
                    comp_monitor,
                    slot,
                    den,
                    comp,
                    dst,
                    ..base
                },
            )
        };
        // The pool kernels: target vector `dst`, source `num`, cycle-buffer offsets or vector
        // ranges in `den` and `comp`.
        let op = |kernel: &Kernel, dst: u32, num: u32, den: usize, comp: usize| {
            let (den, comp) = (den as u32, comp as u32);
            sys.bind(
                kernel,
                Params {
                    dst,
                    num,
                    den,
                    comp,
                    ..base
                },
            )
        };
        let ax = |dst: u32, j0: usize, j1: usize, coef: usize| op(&axpy, dst, j0 as u32, j1, coef);
        let mut steps = Vec::with_capacity(m);
        let mut mgs = Vec::with_capacity(m);
        for i in 1..=m {
            let prev = (i - 1) as u32;
            let cgs = sys.gs != GramSchmidt::Mgs && i >= 2;
            let finishes = device.then(|| {
                let column = |pass| {
                    fin(
                        FINISH_COLUMN | pass,
                        i,
                        SLOT_DOTS,
                        i - 1,
                        lay.tmp + 1,
                        lay.acc + 1,
                    )
                };
                Finish {
                    norm_w: fin(FINISH_NORM_W, i, SLOT_DOT, lay.step(i), 0, 0),
                    column: cgs.then(|| column(0)),
                    column2: (cgs && sys.gs == GramSchmidt::Cgs2).then(|| column(FINISH_PASS2)),
                    rii: fin(
                        FINISH_RII,
                        i,
                        SLOT_DOT,
                        lay.step(i),
                        lay.r_at(0, i),
                        lay.acc,
                    ),
                    xi: fin(FINISH_XI, i, SLOT_DOT, lay.step(i), 0, 0),
                }
            });
            let spmv_src = if sys.preconditioned() && !sys.left() {
                zv
            } else {
                prev
            };
            steps.push(Step {
                prev,
                diag: op(&diag, zv, prev, 0, 0),
                spmv: op(&spmv, wv, spmv_src, 0, 0),
                cgs: cgs.then(|| (sys.bind_dots(wv, 1, i, SLOT_DOTS), ax(wv, 1, i, lay.tmp))),
                scale: op(&scale, i as u32, wv, lay.r_at(i, i), 0),
                // r −= ξ_{i−1} v_{i−1}: the coefficient of vector j = i−1 is at comp + j.
                r_update: (i >= 2).then(|| ax(rv, i - 1, i, lay.step(i - 1) - (i - 1))),
                dot_xi: sys.bind_dots(rv, i, i + 1, SLOT_DOT),
                finish: finishes,
            });
            if sys.gs == GramSchmidt::Mgs && i < m {
                mgs.push(Mgs {
                    dot: sys.bind_dots(wv, i, i + 1, SLOT_DOT),
                    finish: device
                        .then(|| fin(FINISH_COLUMN, i, SLOT_DOT, 1, lay.tmp + i, lay.acc + i)),
                    axpy: ax(wv, i, i + 1, lay.tmp),
                });
            }
        }
        Ok(Classical {
            sys,
            bg_finish_rho: device.then(|| fin(FINISH_RHO, 0, SLOT_RESIDUAL, lay.step(0), 0, 0)),
            bg_scale0: op(&scale, 0, rv, H_RHO, 0),
            bg_dot_ww: sys.bind_dots(wv, wv as usize, wv as usize + 1, SLOT_DOT),
            steps,
            mgs,
            spmv,
            diag,
            finish,
            axpy,
            scale,
        })
    }

    /// A one-workgroup `gmres_finish` launch.
    fn record_finish(&self, batch: &mut Batch<'_>, bg: &wgpu::BindGroup) {
        batch.dispatch(&self.finish, bg, 1);
    }

    /// l.7: w = A v_{i−1} (A M⁻¹v_{i−1} with M ≠ I: `gmres_basis_diag` for Jacobi, the
    /// triangular solves for a factored M), then the first stage of ‖w‖² (the scale of the
    /// breakdown test).
    /// On the left: w = M⁻¹(A v_{i−1}) instead.
    fn record_av(&self, batch: &mut Batch<'_>, st: &Step) {
        let sys = self.sys;
        if sys.jacobi() {
            sys.dispatch(batch, &self.diag, &st.diag);
        }
        if !sys.left() {
            sys.record_apply(batch, st.prev, sys.at.z());
        }
        sys.dispatch(batch, &self.spmv, &st.spmv);
        sys.record_left_in_place(batch, sys.at.w());
        sys.dispatch(batch, &sys.dots, &self.bg_dot_ww);
    }
}

impl<T: Scalar> GmresVariant<T> for Classical<'_, T> {
    /// r = b − Ax only: each step applies D⁻¹ itself (`gmres_basis_diag`).
    fn residual_flags(&self) -> u32 {
        0
    }

    /// l.3–4 on the device: ρ0 = ‖r‖ finished, v_0 = r/ρ0.
    fn record_restart(&self, batch: &mut Batch<'_>) {
        let rho = self.bg_finish_rho.as_ref().expect("device-mode finish");
        self.record_finish(batch, rho);
        self.sys.dispatch(batch, &self.scale, &self.bg_scale0);
    }

    fn record_step(&self, batch: &mut Batch<'_>, i: usize) {
        let (sys, st) = (self.sys, &self.steps[i - 1]);
        let f = st.finish.as_ref().expect("device-mode finish");
        // l.7: w = A v_{i−1} and ‖w‖².
        self.record_av(batch, st);
        self.record_finish(batch, &f.norm_w);
        // l.8–13: Gram–Schmidt against v_1 … v_{i−1}.
        if sys.gs == GramSchmidt::Mgs {
            for mg in &self.mgs[..i - 1] {
                sys.dispatch(batch, &sys.dots, &mg.dot);
                self.record_finish(batch, mg.finish.as_ref().expect("device-mode finish"));
                sys.dispatch(batch, &self.axpy, &mg.axpy);
            }
        } else if let Some((dots, gemv)) = &st.cgs {
            for column in [&f.column, &f.column2].into_iter().flatten() {
                sys.dispatch(batch, &sys.dots, dots);
                self.record_finish(batch, column);
                sys.dispatch(batch, &self.axpy, gemv);
            }
        }
        // l.14: R_{i,i} = ‖w‖, v_i = w/R_{i,i}.
        sys.dispatch(batch, &sys.dots, &self.bg_dot_ww);
        self.record_finish(batch, &f.rii);
        sys.dispatch(batch, &self.scale, &st.scale);
        // l.16 of step i − 1, applied lazily: r −= ξ_{i−1} v_{i−1}.
        if let Some(bg) = &st.r_update {
            sys.dispatch(batch, &self.axpy, bg);
        }
        // l.15: ξ_i = ⟨r, v_i⟩.
        sys.dispatch(batch, &sys.dots, &st.dot_xi);
        self.record_finish(batch, &f.xi);
    }

    /// Every inner product read back and finished on the host, the values later launches
    /// need sent back up.
    fn paper_steps(&self, run: &mut Run<'_>, mc: usize, data: &mut CycleData<T>) -> Result<()> {
        let (sys, lay) = (self.sys, &self.sys.lay);
        let eps = T::PRECISION.epsilon();
        let begin = || sys.engine.begin("gmres step");
        // l.4: v_0 = r/ρ0 with the ρ0 the host sends up.
        sys.engine.write(&sys.cyc, H_RHO, &[data.rho]);
        let mut batch = begin();
        sys.dispatch(&mut batch, &self.scale, &self.bg_scale0);
        for i in 1..=mc {
            if run.monitor.cancelled() {
                data.end = StepEnd::Cancelled;
                break;
            }
            run.recorded += 1;
            let st = &self.steps[i - 1];
            // l.7: w = A v_{i−1} and ‖w‖².
            self.record_av(&mut batch, st);
            let w2 = sys.read_sum(batch, SLOT_DOT)?;
            if !w2.is_finite() {
                data.end = StepEnd::NonFinite("A v");
                break;
            }
            batch = begin();
            // l.8–13: Gram–Schmidt, each R_{j,i} sent up for the update of w.
            if sys.gs == GramSchmidt::Mgs {
                for (j, mg) in (1..).zip(&self.mgs[..i - 1]) {
                    sys.dispatch(&mut batch, &sys.dots, &mg.dot);
                    let h = sys.read_sum(batch, SLOT_DOT)?;
                    data.r[i][j] += h;
                    sys.engine.write(&sys.cyc, lay.tmp + j, &[T::from_f64(h)]);
                    batch = begin();
                    sys.dispatch(&mut batch, &self.axpy, &mg.axpy);
                }
            } else if let Some((dots, gemv)) = &st.cgs {
                let passes = if sys.gs == GramSchmidt::Cgs2 { 2 } else { 1 };
                for _ in 0..passes {
                    sys.dispatch(&mut batch, &sys.dots, dots);
                    let parts = sys.read_slots(batch, SLOT_DOTS, (i - 1).div_ceil(4))?;
                    let h: Vec<T> = (0..i - 1)
                        .map(|q| {
                            let v = sum_component(&parts, sys.g as usize, q / 4, q % 4);
                            data.r[i][q + 1] += v;
                            T::from_f64(v)
                        })
                        .collect();
                    sys.engine.write(&sys.cyc, lay.tmp + 1, &h);
                    batch = begin();
                    sys.dispatch(&mut batch, &self.axpy, gemv);
                }
            }
            // l.14: R_{i,i} = ‖w‖ (breakdown when ≤ ε‖A v_{i−1}‖), v_i = w/R_{i,i}.
            sys.dispatch(&mut batch, &sys.dots, &self.bg_dot_ww);
            let rii = sys.read_sum(batch, SLOT_DOT)?.sqrt();
            let w_norm = w2.sqrt();
            if !rii.is_finite() {
                data.end = StepEnd::NonFinite("A v");
                break;
            }
            if w_norm == 0.0 || rii <= eps * w_norm {
                data.end = StepEnd::Breakdown(Breakdown {
                    step: i,
                    rii,
                    w_norm,
                });
                break;
            }
            data.r[i][i] = rii;
            sys.engine
                .write(&sys.cyc, lay.r_at(i, i), &[T::from_f64(rii)]);
            batch = begin();
            sys.dispatch(&mut batch, &self.scale, &st.scale);
            if let Some(bg) = &st.r_update {
                // l.16: ξ_{i−1}, sent up now that the device needs it.
                let prev = T::from_f64(data.xi[i - 1]);
                sys.engine.write(&sys.cyc, lay.step(i - 1), &[prev]);
                sys.dispatch(&mut batch, &self.axpy, bg);
            }
            // l.15: ξ_i = ⟨r, v_i⟩, and the Walker–Zhou estimate.
            sys.dispatch(&mut batch, &sys.dots, &st.dot_xi);
            let x = sys.read_sum(batch, SLOT_DOT)?;
            batch = begin();
            if !data.push_step(run, i, x) {
                break;
            }
        }
        Ok(())
    }

    /// l.22 of Alg. 5 with r updated inside the cycle: since v_0 = (r_{k−1} + Σ_{i<k} ξ_i v_i)/ρ0,
    /// x_k = x0 + D⁻¹((η1/ρ0) r_{k−1} + Σ_{i=2..k} (η_i + (η1/ρ0) ξ_{i−1}) v_{i−1}).
    fn update_coefficients(&self, eta: &[f64], data: &CycleData<T>, coef: &mut [T]) {
        let c = eta[1] / data.rho.as_f64();
        coef[0] = T::from_f64(c);
        for i in 2..eta.len() {
            coef[i] = T::from_f64(eta[i] + c * data.xi[i - 1]);
        }
    }

    fn last_xi_on_host(&self) -> bool {
        false
    }
}
