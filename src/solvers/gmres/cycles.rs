//! The restart loop of GMRES(m): each cycle starts from the true residual r = b − Ax
//! (Alg. 5/6 l.2), runs up to m steps of its variant ([`GmresVariant`]), solves R η = ξ on
//! the host (l.21) and hands the update of x (l.22) to the next submit. `device` mode records
//! [update] + restart + the whole cycle in one submit with one readback; `paper` mode reads the
//! restart residual and lets the variant drive its steps from the host.

use super::basis::{
    GmresSystem, H_RHO, H_RR, H_STOP, SLOT_RESIDUAL, STOP_BREAKDOWN, STOP_CONVERGED, STOP_LOST,
    STOP_NONE, STOP_NONFINITE_RR, UPDATE_STORE,
};
use super::least_squares::{Breakdown, CycleData, StepEnd, read_r, solve_upper};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::cpu::gmres::P1_MAX_LOST_CYCLES;
use crate::gpu::kernels::Params;
use crate::gpu::{Batch, Kernel};
use crate::solvers::driver::Run;
use crate::solvers::{CheckMode, SolveOptions, Variant};

use super::MAX_GAP_RESTARTS;

/// What differs between classical (Alg. 5) and pipelined (Alg. 6) GMRES.
pub(super) trait GmresVariant<T: Scalar> {
    /// The flags of the restart's `gmres_residual` (what it writes beside r).
    fn residual_flags(&self) -> u32;
    /// `device` mode: what a restart records after r = b − Ax.
    fn record_restart(&self, batch: &mut Batch<'_>);
    /// `device` mode: every launch of step i (l.7–16).
    fn record_step(&self, batch: &mut Batch<'_>, i: usize);
    /// `device` mode: every launch of steps 1 … `k` (by default step by step; one-workgroup
    /// GMRES runs them in one launch).
    fn record_steps(&self, batch: &mut Batch<'_>, k: usize) {
        for i in 1..=k {
            self.record_step(batch, i);
        }
    }
    /// `paper` mode: up to `mc` steps of the cycle `data` starts, the host deciding after each.
    fn paper_steps(&self, run: &mut Run<'_>, mc: usize, data: &mut CycleData<T>) -> Result<()>;
    /// l.22: the coefficients of x += D⁻¹(c_r r + Σ_i c_i v_{i−1}) from η (η_1 … η_k at
    /// 1 … k) into `coef` (c_r at 0, c_i at i). By default Alg. 6's x_k = x0 + D⁻¹ Σ_{i=1..k}
    /// η_i v_{i−1} with the pool's v_j normalised (r = r0 = ρ0 v0 was never updated, so r's
    /// coefficient stays 0).
    fn update_coefficients(&self, eta: &[f64], _data: &CycleData<T>, coef: &mut [T]) {
        for i in 1..eta.len() {
            coef[i] = T::from_f64(eta[i]);
        }
    }
    /// Whether the kernels leave the last step's ξ to the host (`device` mode).
    fn last_xi_on_host(&self) -> bool;
    /// `device` mode: what a cycle of `k` steps records after its last step.
    fn record_cycle_end(&self, _batch: &mut Batch<'_>, _k: usize) {}
    /// ‖w_j‖ = R_{j,j} of the vectors v_1 … v_k the pool holds unnormalised after `data`'s
    /// cycle (fused GMRES), `None` when it holds them normalised.
    fn basis_norms(&self, _data: &CycleData<T>) -> Option<Vec<f64>> {
        None
    }
}

/// `paper` mode's steps for the pipelined and fused variants: each step one submit —
/// `record(batch, i)` records it — and one readback of the cycle buffer up to `read_len(i)`
/// (header and step i's record: a stop code, R_{i,i} and ‖A v_{i−1}‖²), from which `xi`
/// takes ξ_i for the host's estimate (paper 000's monitoring transfer) and, for p(1)-GMRES,
/// ξ_{i−1} as step i's closing corrected it; then R once.
pub(super) fn paper_steps_with<T: Scalar>(
    sys: &GmresSystem<'_, T>,
    (run, mc, data): (&mut Run<'_>, usize, &mut CycleData<T>),
    record: impl Fn(&mut Batch<'_>, usize),
    read_len: impl Fn(usize) -> usize,
    xi: impl Fn(&[T], usize) -> (f64, Option<f64>),
) -> Result<()> {
    let lay = &sys.lay;
    for i in 1..=mc {
        if run.monitor.cancelled() {
            data.end = StepEnd::Cancelled;
            break;
        }
        let mut batch = sys.engine.begin("gmres step");
        record(&mut batch, i);
        let rec = lay.rec(i);
        let c: Vec<T> = batch.submit_and_read(&sys.cyc, 0, read_len(i))?;
        run.recorded += 1;
        let (xi_i, corrected) = xi(&c, i);
        if let Some(prev) = corrected {
            data.xi[i - 1] = prev;
        }
        match c[H_STOP].as_f64() as u32 {
            STOP_NONE => {}
            STOP_BREAKDOWN => {
                data.end = StepEnd::Breakdown(Breakdown {
                    step: i,
                    rii: c[rec + 1].as_f64(),
                    w_norm: c[rec].as_f64().sqrt(),
                });
                break;
            }
            STOP_LOST => {
                data.end = StepEnd::Lost;
                break;
            }
            _ => {
                data.end = StepEnd::NonFinite("A v");
                break;
            }
        }
        if !data.push_step(run, i, xi_i) {
            break;
        }
    }
    let k = data.k;
    if k >= 1 {
        let c: Vec<T> = sys
            .engine
            .read(&sys.cyc, lay.r, lay.r_at(k, k) + 1 - lay.r)?;
        data.r = read_r(&c, lay, lay.r, k);
    }
    Ok(())
}

/// How the solve ended, before the final true-residual check.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Fin {
    /// The residual at a restart met the threshold.
    Converged,
    /// The last cycle's estimate met the threshold (the true residual decides).
    EstimateConverged,
    MaxIterations,
    Breakdown(Breakdown),
    NonFinite(&'static str),
    Cancelled,
    /// `cycles` full cycles took the restart residual only from `from` to `to`
    /// ([`crate::cpu::gmres::is_stagnant`]).
    Stagnation {
        from: f64,
        to: f64,
        cycles: usize,
    },
}

/// How the cycles ended: the stop, the restarts after a residual gap, and the number of
/// orthonormal vectors v_1 … v_k the pool holds at the end (for `orthogonality_loss`).
pub(super) struct Outcome {
    pub(super) fin: Fin,
    pub(super) gap_restarts: usize,
    /// Cycles p(1)-GMRES ended early because R_{i,i} lost its accuracy ([`StepEnd::Lost`]).
    pub(super) lost_cycles: usize,
    /// The step after which p(1)-GMRES went on as fused GMRES, and whether because a cycle
    /// that ended early made no progress (else: [`P1_MAX_LOST_CYCLES`] such cycles).
    pub(super) fell_back: Option<(usize, bool)>,
    pub(super) basis_k: usize,
    /// The norms the pool's basis vectors still carry ([`GmresVariant::basis_norms`]).
    pub(super) basis_norms: Option<Vec<f64>>,
}

/// A GMRES solve: the system, its restart kernels and its variant's steps.
pub(super) struct Gmres<'a, T> {
    sys: &'a GmresSystem<'a, T>,
    variant: Box<dyn GmresVariant<T> + 'a>,
    /// p(1)-GMRES only: fused GMRES on the same system (whose pool and cycle buffer hold all
    /// fused GMRES needs), made when [`P1_MAX_LOST_CYCLES`] cycles ended early.
    fallback: Option<std::cell::OnceCell<Box<dyn GmresVariant<T> + 'a>>>,
    /// l.2: `gmres_residual`, r = b − Ax (z = D⁻¹r for the pipelined variant), first stage of
    /// ‖r‖²; it also reopens the cycle.
    residual: Kernel,
    bg_residual: wgpu::BindGroup,
    /// l.22: `gmres_update_x`, x += D⁻¹(…) with the coefficients in the cycle buffer.
    update: Kernel,
    bg_update: wgpu::BindGroup,
    /// With a factored M: u = Σ… stored into z, and x += z after z = M⁻¹z.
    bg_factored_update: Option<(wgpu::BindGroup, wgpu::BindGroup)>,
}

impl<'a, T: Scalar> Gmres<'a, T> {
    pub(super) fn new(
        sys: &'a GmresSystem<'a, T>,
        variant: Box<dyn GmresVariant<T> + 'a>,
    ) -> Result<Self> {
        let (at, base) = (sys.at, sys.params());
        let (residual, update) = (sys.kernel("gmres_residual")?, sys.kernel("gmres_update_x")?);
        let bg_residual = sys.bind(
            &residual,
            Params {
                dst: at.r(),
                num: at.z(),
                comp: at.x(),
                den: at.b(),
                flags: variant.residual_flags(),
                ..base
            },
        );
        let bg_update = sys.bind(
            &update,
            Params {
                comp: sys.lay.eta as u32,
                num: at.r(),
                dst: at.x(),
                ..base
            },
        );
        let bg_factored_update = (sys.factored() && !sys.left()).then(|| {
            let store = Params {
                comp: sys.lay.eta as u32,
                num: at.r(),
                dst: at.z(),
                flags: UPDATE_STORE,
                ..base
            };
            let add = Params {
                comp: sys.lay.add as u32,
                num: at.z(),
                dst: at.x(),
                ..base
            };
            (sys.bind(&update, store), sys.bind(&update, add))
        });
        Ok(Gmres {
            sys,
            fallback: (sys.variant() == Variant::P1).then(std::cell::OnceCell::new),
            variant,
            residual,
            bg_residual,
            update,
            bg_update,
            bg_factored_update,
        })
    }

    /// The steps the cycles run: the variant's, or fused GMRES's once p(1)-GMRES fell back.
    fn steps(&self) -> &dyn GmresVariant<T> {
        match self.fallback.as_ref().and_then(|f| f.get()) {
            Some(fused) => fused.as_ref(),
            None => self.variant.as_ref(),
        }
    }

    /// p(1)-GMRES after [`P1_MAX_LOST_CYCLES`] cycles that ended early: fused GMRES from the
    /// next cycle on. Returns whether it switched now.
    fn fall_back(&self) -> Result<bool> {
        let Some(cell) = &self.fallback else {
            return Ok(false);
        };
        if cell.get().is_some() {
            return Ok(false);
        }
        let fused: Box<dyn GmresVariant<T> + 'a> = Box::new(super::fused::Fused::new(self.sys)?);
        let _ = cell.set(fused);
        Ok(true)
    }

    /// x += M⁻¹(…) with the coefficients `eta` uploaded first: one launch with M = I or
    /// Jacobi; with a factored M, u into z, z = M⁻¹z, x += z.
    fn record_update(&self, batch: &mut Batch<'_>, eta: &[T]) {
        let sys = self.sys;
        sys.engine.write(&sys.cyc, sys.lay.eta, eta);
        match &self.bg_factored_update {
            None => sys.dispatch(batch, &self.update, &self.bg_update),
            Some((store, add)) => {
                sys.dispatch(batch, &self.update, store);
                sys.record_reopen(batch);
                sys.record_apply(batch, sys.at.z(), sys.at.z());
                sys.dispatch(batch, &self.update, add);
            }
        }
    }

    /// Applies a pending update on its own (the last one of a solve): 1 upload, 1 launch.
    fn flush(&self, pending: &mut Option<Vec<T>>) -> Result<()> {
        if let Some(eta) = pending.take() {
            let mut batch = self.sys.engine.begin("gmres update");
            self.record_update(&mut batch, &eta);
            batch.submit()?;
        }
        Ok(())
    }

    /// [previous update] + the monitored residual r = b − Ax (r = M⁻¹(b − Ax) on the left),
    /// and ‖r‖² finished on the host (one readback).
    pub(super) fn restart_rr(&self, pending: Option<Vec<T>>) -> Result<f64> {
        let mut batch = self.sys.engine.begin("gmres restart");
        if let Some(eta) = pending {
            self.record_update(&mut batch, &eta);
        }
        self.record_residual(&mut batch);
        self.sys.read_sum(batch, SLOT_RESIDUAL)
    }

    /// The true ‖b − Ax‖² (f64 sum of the GPU's partials; the left apply is not recorded).
    pub(super) fn true_rr(&self) -> Result<f64> {
        let mut batch = self.sys.engine.begin("gmres true residual");
        self.sys
            .dispatch(&mut batch, &self.residual, &self.bg_residual);
        self.sys.read_sum(batch, SLOT_RESIDUAL)
    }

    /// l.2: r = b − Ax (+ r = M⁻¹r on the left) and the first stage of ‖r‖².
    fn record_residual(&self, batch: &mut Batch<'_>) {
        self.sys.dispatch(batch, &self.residual, &self.bg_residual);
        self.sys.record_left_residual(batch);
    }

    /// `device` mode: one submit of [previous update] + restart + `mc` steps, one readback of
    /// the cycle buffer up to R.
    fn device_cycle(&self, pending: Option<Vec<T>>, mc: usize) -> Result<Vec<T>> {
        let sys = self.sys;
        let mut batch = sys.engine.begin("gmres cycle");
        if let Some(eta) = pending {
            self.record_update(&mut batch, &eta);
        }
        self.record_residual(&mut batch);
        self.steps().record_restart(&mut batch);
        self.steps().record_steps(&mut batch, mc);
        self.steps().record_cycle_end(&mut batch, mc);
        batch.submit_and_read(&sys.cyc, 0, sys.lay.tmp)
    }

    /// l.21–22: η from R η = ξ, as the coefficients `gmres_update_x` takes (`[k, c_r, c_1…]`).
    fn update_for(&self, data: &CycleData<T>) -> Option<Vec<T>> {
        let k = data.k;
        (k >= 1).then(|| {
            let eta = solve_upper(&data.r, &data.xi, k);
            let mut up = vec![T::zero(); k + 2];
            up[0] = T::from_f64(k as f64);
            self.steps().update_coefficients(&eta, data, &mut up[1..]);
            up
        })
    }

    /// The restart cycles until a stop.
    ///
    /// `steps_before`: steps of earlier runs (a run resumed after the left-preconditioning guard; its
    /// restart residual is pushed as the history's next entry).
    pub(super) fn cycles(
        &self,
        run: &mut Run<'_>,
        opts: &SolveOptions,
        threshold: f64,
        steps_before: usize,
    ) -> Result<Outcome> {
        let max_iter = opts.max_iter;
        let device = self.sys.mode == CheckMode::Device;
        let done = |v: f64| v <= threshold;
        let mut pending: Option<Vec<T>> = None;
        let mut first = true;
        let mut prev_est_done = false;
        let mut cycle_start = 0.0f64;
        let mut gap_cycles = 0usize;
        let mut total = steps_before;
        // Consecutive full cycles without progress (the CPU reference's rule), the restart
        // residual before them, and whether the last cycle ran all m steps.
        let (mut stagnant, mut stagnant_from, mut prev_full) = (0usize, 0.0f64, false);
        let (mut gap_restarts, mut basis_k, mut basis_norms) = (0, 0, None);
        let (mut lost_cycles, mut prev_lost) = (0usize, false);
        let mut fell_back = None;
        let fin = loop {
            if run.monitor.cancelled() {
                self.flush(&mut pending)?;
                break Fin::Cancelled;
            }
            let mc = self.sys.m.min(max_iter.saturating_sub(total));
            // l.2–3, on its own when the host must see the true residual before deciding
            // (`paper` mode; after a cycle whose estimate met the threshold; at the iteration
            // limit): [update] + r = b − Ax, ‖r‖² read back and finished on the host.
            let mut rho = None;
            if !device || prev_est_done || mc == 0 {
                let rr = self.restart_rr(pending.take())?;
                if !rr.is_finite() {
                    if first {
                        run.push(rr.sqrt());
                    }
                    break Fin::NonFinite("<r, r>");
                }
                let r = T::from_f64(rr.sqrt());
                if first {
                    run.push(r.as_f64());
                    first = false;
                }
                if done(r.as_f64()) {
                    break Fin::Converged;
                }
                if prev_est_done {
                    // The last cycle's estimate converged but the true residual does not:
                    // restart, unless that keeps failing (as the CPU reference decides).
                    if r.as_f64() > 0.5 * cycle_start {
                        gap_cycles += 1;
                    }
                    if gap_cycles >= MAX_GAP_RESTARTS {
                        break Fin::EstimateConverged;
                    }
                    gap_restarts += 1;
                }
                if mc == 0 {
                    break Fin::MaxIterations;
                }
                rho = Some(r);
            }
            // `device` mode: one submit of [update] + restart + the whole cycle, one readback.
            let cycle = if device {
                let c = self.device_cycle(pending.take(), mc)?;
                run.cycles = run.cycles.map(|n| n + 1);
                run.recorded += mc;
                run.batch_size = mc;
                let code = c[H_STOP].as_f64() as u32;
                if !c[H_RR].is_finite() || code == STOP_NONFINITE_RR {
                    if first {
                        run.push(c[H_RHO].as_f64());
                    }
                    break Fin::NonFinite("<r, r>");
                }
                if first {
                    run.push(c[H_RHO].as_f64());
                    first = false;
                }
                if code == STOP_CONVERGED {
                    // The restart residual met the threshold on the device.
                    break Fin::Converged;
                }
                rho = Some(c[H_RHO]);
                Some(c)
            } else {
                None
            };
            let rho = rho.expect("restart residual");
            let stalled = prev_full && crate::cpu::gmres::is_stagnant(cycle_start, rho.as_f64());
            // A p(1)-GMRES cycle that ended early and made no progress: its recurrences stall,
            // not GMRES — fused GMRES from here on, not counted towards stagnation (as the CPU
            // twin goes on with pipelined steps). In `device` mode the cycle just recorded ran
            // p(1)'s steps from this restart: it is dropped and run again as fused GMRES.
            if stalled && prev_lost && self.fall_back()? {
                fell_back = Some((total, true));
                (stagnant, prev_full, prev_lost) = (0, false, false);
                if cycle.is_some() {
                    run.cycles = run.cycles.map(|n| n - 1);
                    continue;
                }
            }
            // Stagnation, judged at the restart as the CPU does: in `device` mode the cycle
            // just recorded is dropped (its update is never applied, its steps not counted).
            // `prev_full` is false here after a fall-back: that restart is not counted.
            if stalled && prev_full {
                if stagnant == 0 {
                    stagnant_from = cycle_start;
                }
                stagnant += 1;
                if stagnant >= crate::cpu::gmres::STAGNATION_CYCLES {
                    break Fin::Stagnation {
                        from: stagnant_from,
                        to: rho.as_f64(),
                        cycles: stagnant,
                    };
                }
            } else {
                stagnant = 0;
            }
            cycle_start = rho.as_f64();
            // l.4–16: the steps of the cycle.
            let data = match &cycle {
                Some(c) => {
                    let d = CycleData::from_device(
                        c,
                        &self.sys.lay,
                        mc,
                        rho,
                        threshold,
                        self.steps().last_xi_on_host(),
                    );
                    for e in &d.est {
                        run.push(e.as_f64());
                    }
                    d
                }
                None => {
                    run.batch_size = 1;
                    let mut d = CycleData::new(rho, threshold, mc);
                    run.cycles = run.cycles.map(|n| n + 1);
                    self.steps().paper_steps(run, mc, &mut d)?;
                    d.r.truncate(d.k + 1);
                    d
                }
            };
            basis_k = data.basis;
            basis_norms = self.steps().basis_norms(&data);
            total += data.counted;
            // A cycle p(1)-GMRES cut short is judged for stagnation like a full one: it
            // restarts where it is, and one that keeps making no progress must stop.
            let lost = data.end == StepEnd::Lost;
            lost_cycles += lost as usize;
            prev_lost = lost;
            prev_full = (data.end == StepEnd::Full && data.k == self.sys.m) || lost;
            if let StepEnd::NonFinite(q) = data.end {
                break Fin::NonFinite(q);
            }
            // l.21–22, applied with the next submit.
            if let Some(up) = self.update_for(&data) {
                pending = Some(up);
            }
            // p(1)-GMRES that keeps losing R_{i,i}: fused GMRES from the next cycle on (the
            // update above is p(1)'s own).
            if lost && lost_cycles >= P1_MAX_LOST_CYCLES && self.fall_back()? {
                fell_back = Some((total, false));
            }
            let est_last = data.est.last().map_or(rho.as_f64(), |e| e.as_f64());
            match data.end {
                StepEnd::Breakdown(b) => {
                    self.flush(&mut pending)?;
                    break Fin::Breakdown(b);
                }
                StepEnd::Cancelled => {
                    self.flush(&mut pending)?;
                    break Fin::Cancelled;
                }
                _ => {}
            }
            prev_est_done = done(est_last);
            if total >= max_iter {
                self.flush(&mut pending)?;
                break if prev_est_done {
                    Fin::EstimateConverged
                } else {
                    Fin::MaxIterations
                };
            }
        };
        Ok(Outcome {
            fin,
            gap_restarts,
            lost_cycles,
            fell_back,
            basis_k,
            basis_norms,
        })
    }
}
