//! The host side of simpler GMRES (Walker & Zhou): the small least-squares problem of a
//! cycle. With A [v_0 … v_{k−1}] = [v_1 … v_k] R (R upper triangular) and ξ_i = ⟨r, v_i⟩, the
//! minimiser of ‖r_0 − A Z η‖ solves R η = ξ (Alg. 5/6 l.21: back substitution, no Givens
//! rotations), and ‖r_i‖ is known without forming r_i: ‖r_i‖² = ‖r_{i−1}‖² − ξ_i² (the
//! Walker–Zhou estimate, [`wz`]). Here: what a cycle hands the host ([`CycleData`]), reading
//! it from a `device`-mode readback of the cycle buffer, the estimate's tests that end a
//! cycle, and [`solve_upper`].

use super::basis::{
    CycleLayout, H_STEP, H_STOP, STOP_BREAKDOWN, STOP_CONVERGED, STOP_ESTIMATE, STOP_LOST,
    STOP_NONE, STOP_NONFINITE_AV, STOP_NONFINITE_RR, STOP_NONFINITE_XI,
};
use crate::base::scalar::Scalar;
use crate::solvers::driver::Run;

/// The Walker–Zhou estimate ‖r_i‖ from ‖r_{i−1}‖ and ξ_i, in `T` exactly as the CPU reference
/// (and the kernels) evaluate it: √((‖r_{i−1}‖ − |ξ_i|)(‖r_{i−1}‖ + |ξ_i|)), 0 once
/// |ξ_i| ≥ ‖r_{i−1}‖.
pub(super) fn wz<T: Scalar>(prev: T, xi: T) -> T {
    let a = xi.abs();
    if a < prev {
        ((prev - a) * (prev + a)).sqrt()
    } else {
        T::zero()
    }
}

/// How a cycle's steps ended.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum StepEnd {
    /// All steps recorded for the cycle ran (m, or what max_iter left).
    Full,
    /// The estimate met the threshold or the truncation.
    Estimate,
    Breakdown(Breakdown),
    /// p(1)-GMRES: R_{s,s} from ‖u_s‖² − Σ R_{j,s}² lost its accuracy at step s; the cycle
    /// keeps its first s − 1 steps and GMRES restarts.
    Lost,
    /// A NaN/∞ in the named quantity.
    NonFinite(&'static str),
    Cancelled,
}

/// R_{s,s} ≈ 0 at step s of a cycle: R_{s,s} ≤ ε‖A v_{s−1}‖ (`w_norm`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Breakdown {
    pub(super) step: usize,
    pub(super) rii: f64,
    pub(super) w_norm: f64,
}

/// What the host learns from one cycle.
pub(super) struct CycleData<T> {
    /// Steps used (columns of R).
    pub(super) k: usize,
    /// Steps counted as iterations (k, or k + 1 when ξ_{k+1} was not finite).
    pub(super) counted: usize,
    /// Estimates of steps 1…counted.
    pub(super) est: Vec<T>,
    /// ξ_1…ξ_k (index 0 unused).
    pub(super) xi: Vec<f64>,
    /// R_{j,i} at r[i][j], 1 ≤ j ≤ i ≤ k.
    pub(super) r: Vec<Vec<f64>>,
    /// Orthonormal vectors v_1 … v_basis the pool holds after the cycle.
    pub(super) basis: usize,
    pub(super) end: StepEnd,
    /// ρ0 = ‖r‖ at the cycle's start.
    pub(super) rho: T,
    /// The running estimate and the tests that end the cycle.
    estimate: Estimate<T>,
}

/// The Walker–Zhou estimate of a cycle from ρ0 on, and when it ends the cycle: at the
/// threshold, or at the truncation ε^(1/3)·ρ0 (see [`crate::cpu::gmres`]).
#[derive(Debug, Clone, Copy)]
struct Estimate<T> {
    value: T,
    threshold: f64,
    truncate: f64,
}

impl<T: Scalar> Estimate<T> {
    fn new(rho: T, threshold: f64) -> Self {
        Estimate {
            value: rho,
            threshold,
            truncate: T::PRECISION.epsilon().cbrt() * rho.as_f64(),
        }
    }
    /// ‖r_i‖ from ‖r_{i−1}‖ (`prev`) and ξ_i.
    fn next(&mut self, prev: T, xi: T) -> T {
        self.value = wz(prev, xi);
        self.value
    }
    fn ends_cycle(&self) -> bool {
        let e = self.value.as_f64();
        e <= self.threshold || e <= self.truncate
    }
}

impl<T: Scalar> CycleData<T> {
    /// A cycle of at most `mc` steps from ρ0 = `rho`, no step yet.
    pub(super) fn new(rho: T, threshold: f64, mc: usize) -> Self {
        CycleData {
            k: 0,
            counted: 0,
            est: Vec::new(),
            xi: vec![0.0],
            r: vec![vec![0.0; mc + 1]; mc + 1],
            basis: 0,
            end: StepEnd::Full,
            rho,
            estimate: Estimate::new(rho, threshold),
        }
    }

    /// `paper` mode, after step i's ξ_i (l.15) was finished on the host: its estimate goes to
    /// the history. Returns whether the cycle goes on (the estimate is finite and met neither
    /// the threshold nor the truncation); `end` says why not.
    pub(super) fn push_step(&mut self, run: &mut Run<'_>, i: usize, xi: f64) -> bool {
        let e = self.estimate.next(self.estimate.value, T::from_f64(xi));
        self.counted = i;
        self.est.push(e);
        run.push(e.as_f64());
        if !e.is_finite() {
            self.end = StepEnd::NonFinite("xi");
            return false;
        }
        self.k = i;
        self.basis = i;
        self.xi.push(xi);
        if self.estimate.ends_cycle() {
            self.end = StepEnd::Estimate;
            return false;
        }
        true
    }

    /// Parses a `device`-mode readback `c` of the cycle buffer (up to R) of a cycle of `mc`
    /// steps from ρ0 = `rho` (as the kernels computed it): the steps used, their ξ, estimates
    /// and R. `last_xi_on_host`: the kernels finish ξ_i in step i + 1 (pipelined), so the last
    /// step's ξ is finished here from its record (as paper 000 does for every ξ).
    pub(super) fn from_device(
        c: &[T],
        lay: &CycleLayout,
        mc: usize,
        rho: T,
        threshold: f64,
        last_xi_on_host: bool,
    ) -> Self {
        let code = c[H_STOP].as_f64() as u32;
        let s = c[H_STEP].as_f64() as usize;
        let mut data = CycleData::new(rho, threshold, 0);
        data.basis = match code {
            STOP_NONE => mc,
            STOP_CONVERGED | STOP_NONFINITE_RR => 0,
            STOP_ESTIMATE => s,
            _ => s.saturating_sub(1),
        };
        (data.k, data.counted, data.end) = match code {
            STOP_ESTIMATE => (s, s, StepEnd::Estimate),
            STOP_BREAKDOWN => (
                s - 1,
                s - 1,
                StepEnd::Breakdown(Breakdown {
                    step: s,
                    rii: c[lay.r_at(s, s)].as_f64(),
                    w_norm: c[lay.step(s) + 2].as_f64().sqrt(),
                }),
            ),
            STOP_LOST => (s - 1, s - 1, StepEnd::Lost),
            STOP_NONFINITE_AV => (s - 1, s - 1, StepEnd::NonFinite("A v")),
            STOP_NONFINITE_XI => (s - 1, s, StepEnd::NonFinite("xi")),
            _ => (mc, mc, StepEnd::Full),
        };
        data.xi = vec![0.0; data.counted + 1];
        for (i, x) in data.xi.iter_mut().enumerate().skip(1) {
            *x = c[lay.step(i)].as_f64();
            data.est.push(c[lay.step(i) + 1]);
        }
        if code == STOP_NONE && last_xi_on_host {
            let x = T::from_f64(lay.record_xi(c, mc));
            let prev = if mc >= 2 { data.est[mc - 2] } else { rho };
            let e = data.estimate.next(prev, x);
            data.xi[mc] = x.as_f64();
            data.est[mc - 1] = e;
            if !e.is_finite() {
                data.k = mc - 1;
                data.end = StepEnd::NonFinite("xi");
            } else if data.estimate.ends_cycle() {
                data.end = StepEnd::Estimate;
            }
        }
        data.r = read_r(c, lay, 0, data.k);
        data.xi.truncate(data.k + 1);
        data
    }
}

/// R_{j,i} (1 ≤ j ≤ i ≤ k) at r[i][j], from a readback `c` of the cycle buffer that starts at
/// element `from` of it.
pub(super) fn read_r<T: Scalar>(
    c: &[T],
    lay: &CycleLayout,
    from: usize,
    k: usize,
) -> Vec<Vec<f64>> {
    let mut r = vec![vec![0.0; k + 1]; k + 1];
    for (i, col) in r.iter_mut().enumerate().skip(1) {
        for (j, v) in col.iter_mut().enumerate().skip(1).take(i) {
            *v = c[lay.r_at(j, i) - from].as_f64();
        }
    }
    r
}

/// l.21: back substitution R η = ξ (k×k upper triangular, R_{j,i} at r[i][j]), in f64.
pub(super) fn solve_upper(r: &[Vec<f64>], xi: &[f64], k: usize) -> Vec<f64> {
    let mut eta = vec![0.0; k + 1];
    for i in (1..=k).rev() {
        let mut s = xi[i];
        for l in i + 1..=k {
            s -= r[l][i] * eta[l];
        }
        eta[i] = s / r[i][i];
    }
    eta
}
