//! Restarted GMRES(m) in the "simpler GMRES" form of Walker & Zhou (1994), as in paper 000:
//! classical (Alg. 5, residual updated inside the cycle, Gram–Schmidt of choice) and
//! pipelined (Alg. 6, classical Gram–Schmidt, residual not updated inside the cycle).
//!
//! One cycle, with r0 = b − A x0 and ρ0 = ‖r0‖ (absolute, unnormalised residual):
//!
//! * Krylov basis: v0 = r0/ρ0, and for i = 1..m, v_i = A v_{i−1} orthogonalised against
//!   v_1..v_{i−1} (R_{j,i} = ⟨v_j, A v_{i−1}⟩) and normalised (R_{i,i} = its norm), so that
//!   A [v0, v1, …, v_{m−1}] = [v1, …, v_m] R with R upper triangular;
//! * ξ_i = ⟨r0, v_i⟩ (= ⟨r_{i−1}, v_i⟩ with r_i = r_{i−1} − ξ_i v_i, the classical form);
//! * the minimiser of ‖r0 − A Z η‖ over Z = [v0, v1, …, v_{k−1}] solves R η = ξ, and the
//!   residual norm is known without forming it: ‖r_i‖² = ‖r_{i−1}‖² − ξ_i²
//!   (the Walker–Zhou monitor reported in the history);
//! * x_k = x0 + η1 v0 + Σ_{i=2..k} η_i v_{i−1}.
//!
//! The classical variant updates r inside the cycle (Alg. 5 l.16) and writes the update with
//! that residual instead of v0: since v0 = (r_{k−1} + Σ_{i<k} ξ_i v_i)/ρ0,
//! x_k = x0 + (η1/ρ0) r_{k−1} + Σ_{i=2..k} η̃_i v_{i−1} with η̃_i = η_i + (η1/ρ0) ξ_{i−1}
//! (the paper's η̃ correction; the paper normalises r, which removes the 1/ρ0). This needs
//! r = r_{k−1}, so l.16 is applied lazily, just before ξ_i is computed. The pipelined
//! variant never updates r (r = r0 = ρ0 v0), so its update needs no correction: the η̃ of
//! the paper belongs to the updated residual of Alg. 5, not to Alg. 6.
//!
//! The monitor is evaluated as ‖r_i‖ = √((‖r_{i−1}‖ − |ξ_i|)(‖r_{i−1}‖ + |ξ_i|)) (0 once
//! |ξ_i| ≥ ‖r_{i−1}‖), algebraically the same but without the cancellation of a running
//! ρ0² − Σξ². The pipelined GPU code may run the whole cycle before reading the ξ's back: it
//! then takes k as the first step whose estimate meets the threshold (or the truncation
//! below), which gives the same x as the early exit here.
//!
//! **Cycle truncation** (not in the paper): a cycle also ends, and GMRES restarts from the
//! recomputed true residual, once its estimate has dropped below ε_T^(1/3)·ρ0 (6e-6 in f64,
//! 5e-3 in f32). The basis [v0, v1, …, v_{k−1}] of simpler GMRES has a condition number of
//! about ρ0/‖r_k‖ (Liesen, Rozložník & Strakoš 2002; Jiránek, Rozložník & Gutknecht 2008):
//! past that point Gram–Schmidt (even MGS or CGS2) loses orthogonality, the ξ monitor becomes
//! meaningless and R η = ξ is ill-conditioned — without this rule GMRES(144) on a 12×12
//! Poisson problem stalls at |r|/|b| ≈ 3e-8 (the true residual of the iterate then grows
//! to O(1)) and with CGS2 returns an x whose residual is 1e54.
//!
//! **Side of the preconditioner** (`opts.side`, see [`super::side`]):
//!
//! * `Side::Right`, the default: GMRES runs on `A M⁻¹`: every `A v` above is `A (M⁻¹v)`,
//!   the update is `x_k = x0 + M⁻¹(…)`, and r is the true residual b − Ax, so the estimate
//!   (and the history) monitors the true residual against max(rtol·‖b‖, atol).
//! * `Side::Left`: GMRES runs on `M⁻¹A x = M⁻¹b`: r0 = M⁻¹(b − A x0), every `A v` above is
//!   `M⁻¹(A v)`, the update is `x_k = x0 + (…)` without M⁻¹, and the Walker–Zhou estimate
//!   (and the history) tracks the preconditioned residual ‖M⁻¹r‖ against
//!   τ_L = max(rtol·‖M⁻¹b‖, atol) — SciPy's and PETSc's GMRES convention. A claim is
//!   confirmed with the true ‖b − Ax‖; if that misses the threshold, τ_L is tightened and
//!   GMRES restarts from the current x (at most [`MAX_GAP_RESTARTS`] times, counted in the
//!   report's restarts; then the driver reports the residual gap).
//!
//! With M = I (`Precond::None`) both sides are the same run, bit for bit.
//!
//! At each restart the residual of the side (b − Ax, or M⁻¹(b − Ax)) is recomputed; a cycle
//! whose estimate met the threshold ends the solve only if that recomputed residual confirms
//! it (otherwise GMRES restarts, at most [`MAX_GAP_RESTARTS`] times, then stops and the
//! driver reports a residual gap, unless for left the true residual confirms it).
//!
//! Breakdown: `"R_ii"` when the new Krylov vector vanishes after Gram–Schmidt,
//! R_{i,i} ≤ ε·‖A v_{i−1}‖ (the Krylov space is invariant: the exact solution was already
//! found, or A is singular); the cycle is closed with the i−1 columns it has, and unless the
//! recomputed residual of the side then meets the threshold the solve stops with that
//! breakdown.

mod p1;

pub use p1::{P1_MAX_LOST_CYCLES, p1, p1_lost_note};
use p1::{P1Step, p1_step};

use super::cagmres::gmres_counts_per_cycle;
use super::side::{Target, on_side};
use super::{Stop, System, dot, is_breakdown};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{GramSchmidt, Side, Solution, SolveOptions, StopReason, Variant};
use crate::matrix::Csr;

/// Cycles whose Walker–Zhou estimate met the threshold while the recomputed residual (the true
/// one for right preconditioning) did not, before GMRES gives up (the driver then reports
/// `ResidualGap`). Also the bound of the left-preconditioning guard,
/// [`MAX_GUARD_RESTARTS`](super::side::MAX_GUARD_RESTARTS).
pub const MAX_GAP_RESTARTS: usize = 3;

/// Classical GMRES(m) (Alg. 5) with `opts.gs` (MGS, CGS or CGS2) and `opts.restart` = m.
/// The report's reductions and syncs are what the algorithm needs per cycle
/// (`with_cycle_counts`).
pub fn classical<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
) -> Result<Solution<T>> {
    let sol = classical_run(a, b, x0, opts)?;
    Ok(with_cycle_counts(sol, opts, opts.gs))
}

/// Pipelined GMRES(m) (Alg. 6): classical Gram–Schmidt (CGS2 if `opts.gs` is `Cgs2`, CGS
/// otherwise), ξ_i = ⟨r0, v_i⟩ with r0 never updated inside the cycle. Reductions and syncs
/// as [`classical`]'s.
pub fn pipelined<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
) -> Result<Solution<T>> {
    let sol = pipelined_run(a, b, x0, opts)?;
    Ok(with_cycle_counts(sol, opts, pipelined_gs(opts.gs)))
}

/// Pipelined GMRES's Gram–Schmidt: CGS2 if asked for, CGS otherwise.
fn pipelined_gs(gs: GramSchmidt) -> GramSchmidt {
    match gs {
        GramSchmidt::Cgs2 => GramSchmidt::Cgs2,
        _ => GramSchmidt::Cgs,
    }
}

/// Fills the CPU report's communication figures with what GMRES(m) with `gs` needs on a
/// distributed machine ([`gmres_counts_per_cycle`], paper 002's count, the standard against
/// which CA-GMRES is compared): `reductions_per_iteration` = reductions of a full cycle / m,
/// `syncs_per_cycle` = its host syncs (1 + m), `syncs_per_iteration` = that / m, and
/// `cycles` = ⌈iterations / m⌉. The CPU counts no GPU work (`counts` stay 0).
fn with_cycle_counts<T>(mut sol: Solution<T>, opts: &SolveOptions, gs: GramSchmidt) -> Solution<T> {
    let m = opts.restart.min(sol.report.n).max(1);
    let (reductions, syncs) = gmres_counts_per_cycle(m, gs);
    let r = &mut sol.report;
    r.reductions_per_iteration = reductions as f64 / m as f64;
    r.syncs_per_iteration = syncs as f64 / m as f64;
    r.cycles = Some(r.iterations.div_ceil(m));
    r.syncs_per_cycle = Some(syncs as f64);
    sol
}

entry_point! {
    fn classical_run(opts) => Gmres, Classical, move |sys, x, h| {
        gmres_core(sys, x, h, Variant::Classical, opts.gs, opts.side, opts.rtol, opts.atol)
    }
}

entry_point! {
    fn pipelined_run(opts) => Gmres, Pipelined, move |sys, x, h| {
        let gs = pipelined_gs(opts.gs);
        gmres_core(sys, x, h, Variant::Pipelined, gs, opts.side, opts.rtol, opts.atol)
    }
}

/// l.8–13: orthogonalises `w` against `v[1..i]` (the basis vectors v_1..v_{i−1}), adding the
/// coefficients to `rcol[j]` = R_{j,i} (1-based j).
fn orthogonalize<T: Scalar>(gs: GramSchmidt, v: &[Vec<T>], i: usize, w: &mut [T], rcol: &mut [T]) {
    match gs {
        GramSchmidt::Mgs => {
            // One inner product, then one update, at a time.
            for j in 1..i {
                let h = dot(&v[j], w);
                rcol[j] += h;
                super::axpy(-h, &v[j], w);
            }
        }
        GramSchmidt::Cgs | GramSchmidt::Cgs2 => {
            let passes = if gs == GramSchmidt::Cgs2 { 2 } else { 1 };
            for _ in 0..passes {
                // l.8–10: all R_{j,i} = ⟨v_j, v_i⟩ from the same v_i (one fused kernel) …
                let h: Vec<T> = (1..i).map(|j| dot(&v[j], w)).collect();
                // l.11–13: … then v_i = v_i − Σ_j R_{j,i} v_j.
                for (j, &hj) in (1..i).zip(&h) {
                    rcol[j] += hj;
                    super::axpy(-hj, &v[j], w);
                }
            }
        }
    }
}

/// GMRES(m) on the side `side` (see [`on_side`]; `rtol`, `atol` give the left threshold).
#[allow(clippy::too_many_arguments)]
fn gmres_core<T: Scalar>(
    sys: &System<'_, T>,
    x: &mut [T],
    hist: &mut Vec<f64>,
    variant: Variant,
    gs: GramSchmidt,
    side: Side,
    rtol: f64,
    atol: f64,
) -> Stop {
    on_side(sys, x, hist, side, rtol, atol, |x, hist, target| {
        // Restarts after a cycle whose estimate converged but whose restart residual did not.
        // p(1)-GMRES's cycles that ended early where R_ii lost its accuracy restart too.
        let (mut gap_restarts, mut lost_cycles) = (0, 0);
        let mut stop = gmres_cycles(
            sys,
            x,
            hist,
            (variant, gs),
            target,
            (&mut gap_restarts, &mut lost_cycles),
        );
        stop.restarts = gap_restarts + lost_cycles;
        stop.replacements = gap_restarts;
        stop
    })
}

/// The cycles of GMRES(m) on the preconditioned system of `target` (A M⁻¹ or M⁻¹A), from
/// iteration `target.first_iter`, until the monitored residual meets `target.tau`.
fn gmres_cycles<T: Scalar>(
    sys: &System<'_, T>,
    x: &mut [T],
    hist: &mut Vec<f64>,
    (variant, gs): (Variant, GramSchmidt),
    target: Target,
    (gap_restarts, lost_cycles): (&mut usize, &mut usize),
) -> Stop {
    let n = sys.n();
    let m = sys.restart.min(n).max(1);
    let classical = variant == Variant::Classical;
    // Basis v[0] = v0, v[1..=m] = v_1..v_m; R is m×m, column i (1-based) in rmat[i][1..=i].
    let mut v: Vec<Vec<T>> = (0..=m).map(|_| vec![T::zero(); n]).collect();
    let mut rmat: Vec<Vec<T>> = (0..=m).map(|_| vec![T::zero(); m + 1]).collect();
    let mut xi = vec![T::zero(); m + 1];
    let mut r = vec![T::zero(); n];
    let mut tmp = vec![T::zero(); n];
    let mut w = vec![T::zero(); n];
    // p(1)-GMRES's second basis u_1 … u_m (u[j] = u_j; empty otherwise).
    let mut p1 = variant == Variant::P1;
    let mut u: Vec<Vec<T>> = (0..=if p1 { m } else { 0 })
        .map(|_| vec![T::zero(); if p1 { n } else { 0 }])
        .collect();
    let mut total = target.first_iter;
    let mut gap_cycles = 0usize;
    let mut stagnation = StagnationWatch::default();

    // l.2: r0 = b − A x0 (left: M⁻¹(b − A x0));  l.3: ρ0 = ‖r0‖₂. A resumed run (after the
    // left guard) replaces the last history entry with ρ0 and runs at least one cycle.
    target.residual(sys, x, &mut r, &mut tmp);
    let mut rho0 = dot(&r, &r).sqrt();
    target.record_start(hist, rho0.as_f64());
    if !rho0.is_finite() {
        return Stop::non_finite(total, "<r, r>", rho0.as_f64());
    }
    if !target.resumed && target.done(rho0.as_f64()) {
        return Stop::converged(total, rho0.as_f64(), target.scale);
    }

    loop {
        if total >= sys.max_iter {
            return Stop::max_iterations(total, rho0.as_f64(), target.scale);
        }
        // l.4: v0 = r0/ρ0 (r keeps the unnormalised residual).
        for (vj, &rj) in v[0].iter_mut().zip(&r) {
            *vj = rj / rho0;
        }
        // l.5: R = 0.
        for col in rmat.iter_mut() {
            col.iter_mut().for_each(|e| *e = T::zero());
        }
        let cycle_start = rho0.as_f64();
        // Cycle truncation (see the module docs): end the cycle once the estimate has dropped
        // by ε^(1/3), where the basis [v0, v1, …] is too ill-conditioned to go on.
        let truncate = T::PRECISION.epsilon().cbrt() * cycle_start;
        let mut est_t = rho0;
        // The estimate before the last step's (p(1)-GMRES corrects the last one).
        let mut est_before = rho0;
        let mut est = rho0.as_f64();
        let mut k = 0usize;
        let mut breakdown: Option<(usize, f64, f64)> = None;
        // l.6: for i = 1 to m.
        let mut lost = false;
        for i in 1..=m {
            if p1 {
                // p(1)-GMRES: u_i by its recurrence, R's column i, v_i and ξ_i.
                let step = p1_step(
                    sys,
                    &target,
                    i,
                    (&r, rho0),
                    &mut v,
                    &mut u,
                    &mut rmat,
                    &mut xi,
                    (&mut w, &mut tmp),
                );
                match step {
                    P1Step::Made if i >= 2 => {
                        // Step i − 1's estimate again from its corrected ξ.
                        est_t = wz(est_before, xi[i - 1]);
                        if let Some(last) = hist.last_mut() {
                            *last = est_t.as_f64();
                        }
                    }
                    P1Step::Made => {}
                    P1Step::Lost => {
                        lost = true;
                        break;
                    }
                    P1Step::Breakdown(rii, u_norm) => {
                        breakdown = Some((i, rii, u_norm));
                        break;
                    }
                    P1Step::NonFinite(uu) => return Stop::non_finite(total, "A v", uu),
                }
            } else {
                // l.7: v_i = A v_{i−1} (A M⁻¹ v_{i−1} right-, M⁻¹A v_{i−1} left-preconditioned).
                target.operator(sys, &v[i - 1], &mut w, &mut tmp);
                let w_norm = dot(&w, &w).sqrt().as_f64();
                if !w_norm.is_finite() {
                    return Stop::non_finite(total, "A v", w_norm);
                }
                // l.8–13: Gram–Schmidt against v_1..v_{i−1}.
                orthogonalize(gs, &v, i, &mut w, &mut rmat[i]);
                // l.14: R_{i,i} = ‖v_i‖, v_i = v_i/‖v_i‖.
                let rii = dot(&w, &w).sqrt();
                if w_norm == 0.0 || is_breakdown::<T>(rii.as_f64(), w_norm) {
                    breakdown = Some((i, rii.as_f64(), w_norm));
                    break;
                }
                rmat[i][i] = rii;
                for (vj, &wj) in v[i].iter_mut().zip(&w) {
                    *vj = wj / rii;
                }
                // l.16 of the previous step (classical only), deferred to here so that
                // r = r_{k−1} whenever the cycle ends, as the η̃ update of l.22 needs.
                if classical && i > 1 {
                    super::axpy(-xi[i - 1], &v[i - 1], &mut r);
                }
                // l.15: ξ_i = ⟨r, v_i⟩ (classical: r = r_{i−1}; pipelined: r = r0).
                xi[i] = dot(&r, &v[i]);
            }
            // Walker–Zhou monitor: ‖r_i‖² = ‖r_{i−1}‖² − ξ_i², evaluated as
            // (‖r_{i−1}‖ − |ξ_i|)(‖r_{i−1}‖ + |ξ_i|): a running ρ0² − Σξ² would cancel down to
            // a floor of about √(iε)·ρ0 (1e-7·ρ0 in f64), this form keeps the error relative
            // to the current residual.
            est_before = est_t;
            est_t = wz(est_t, xi[i]);
            est = est_t.as_f64();
            total += 1;
            k = i;
            hist.push(est);
            if !est.is_finite() {
                return Stop::non_finite(total, "xi", xi[i].as_f64());
            }
            if target.done(est) || total >= sys.max_iter || est <= truncate {
                break;
            }
        }
        // l.21: solve R η = (ξ_1, …, ξ_k) by back substitution.
        let mut eta = vec![T::zero(); k + 1];
        for i in (1..=k).rev() {
            let mut s = xi[i];
            for l in i + 1..=k {
                s -= rmat[l][i] * eta[l];
            }
            eta[i] = s / rmat[i][i];
        }
        // l.22: the update, in the space of the Krylov basis (z), then x += M⁻¹ z (right)
        // or x += z (left).
        if k >= 1 {
            let z = &mut w;
            if classical {
                // x_k = x0 + (η1/ρ0) r_{k−1} + Σ_{i=2..k} η̃_i v_{i−1},
                // η̃_i = η_i + (η1/ρ0) ξ_{i−1}, because v0 = (r_{k−1} + Σ_{i<k} ξ_i v_i)/ρ0.
                let c = eta[1] / rho0;
                for (zj, &rj) in z.iter_mut().zip(&r) {
                    *zj = c * rj;
                }
                for i in 2..=k {
                    super::axpy(eta[i] + c * xi[i - 1], &v[i - 1], z);
                }
            } else {
                // x_k = x0 + η1 v0 + Σ_{i=2..k} η_i v_{i−1}  (r = r0 = ρ0 v0 was never updated).
                z.iter_mut().for_each(|e| *e = T::zero());
                for i in 1..=k {
                    super::axpy(eta[i], &v[i - 1], z);
                }
            }
            if target.left {
                super::axpy(T::one(), z, x);
            } else {
                sys.m.apply(z, &mut tmp);
                super::axpy(T::one(), &tmp, x);
            }
        }
        // Restart: the recomputed residual r = b − A x (the true one; left: M⁻¹(b − A x)),
        // ρ0 = ‖r‖.
        target.residual(sys, x, &mut r, &mut tmp);
        rho0 = dot(&r, &r).sqrt();
        let restart_res = rho0.as_f64();
        if !restart_res.is_finite() {
            return Stop::non_finite(total, "<r, r>", restart_res);
        }
        if let Some((i, rii, w_norm)) = breakdown {
            if target.done(restart_res) {
                return Stop::converged(total, restart_res, target.scale);
            }
            let mut s = Stop::breakdown(total, "R_ii", rii, w_norm);
            s.detail = format!(
                "{} (step {i} of the cycle: A v_{} lies in the span of the basis)",
                s.detail,
                i - 1
            );
            return s;
        }
        if target.done(est) {
            if target.done(restart_res) {
                return Stop::converged(total, restart_res, target.scale);
            }
            // A cycle whose estimate is optimistic (lost orthogonality makes Σξ² overshoot)
            // but that still cut the true residual at least in half is progress, not a gap.
            if restart_res > 0.5 * cycle_start {
                gap_cycles += 1;
            }
            if gap_cycles >= MAX_GAP_RESTARTS || total >= sys.max_iter {
                // The estimate converged, the true residual did not: the driver reports it.
                return Stop::converged(total, est, target.scale);
            }
            *gap_restarts += 1;
        }
        // p(1)-GMRES's early end is a restart (judged for stagnation like a full cycle) —
        // unless it left the restart residual where it was: then p(1)'s recurrences stall,
        // not GMRES, and the solve goes on with pipelined GMRES's steps at once (the GPU:
        // fused GMRES) instead of counting it towards the stagnation stop.
        let mut stalled_p1 = false;
        if lost {
            *lost_cycles += 1;
            stalled_p1 = is_stagnant(cycle_start, restart_res);
            // After P1_MAX_LOST_CYCLES, pipelined GMRES's steps too.
            p1 = *lost_cycles < P1_MAX_LOST_CYCLES && !stalled_p1;
        }
        // Stagnation: a full cycle that left the restart residual where it was.
        // (At the iteration limit the limit is the reason, as on the GPU.)
        if let Some(stop) = stagnation.after_cycle(
            (k == m || lost) && !stalled_p1 && total < sys.max_iter,
            cycle_start,
            restart_res,
            total,
            m,
        ) {
            return stop;
        }
    }
}

/// The Walker–Zhou estimate ‖r_i‖ = √((‖r_{i−1}‖ − |ξ_i|)(‖r_{i−1}‖ + |ξ_i|)) from `prev` =
/// ‖r_{i−1}‖, 0 once |ξ_i| ≥ ‖r_{i−1}‖.
fn wz<T: Scalar>(prev: T, xi: T) -> T {
    let a = xi.abs();
    if a < prev {
        ((prev - a) * (prev + a)).sqrt()
    } else {
        T::zero()
    }
}

/// A restart cycle whose restart residual ends above this fraction of where it started made
/// no progress (less than 0.01 %).
pub const STAGNATION_RATIO: f64 = 0.9999;

/// Consecutive full cycles without progress after which restarted GMRES stops with
/// [`crate::base::StopReason::Stagnation`]: two, because one flat
/// cycle can precede progress (a plateau), while at 0.01 % per cycle the threshold is out of
/// reach of any iteration budget.
pub const STAGNATION_CYCLES: usize = 2;

/// The detail of a stagnation stop (CPU reference and GPU alike): `cycles` cycles of `m`
/// steps took the restart residual only from `from` to `to`.
pub fn stagnation_detail(iterations: usize, from: f64, to: f64, cycles: usize, m: usize) -> String {
    format!(
        "stagnation at iteration {iterations}: the last {cycles} restart cycles of {m} steps \
         took the restart residual only from {from:.6e} to {to:.6e} (less than 0.01 % per \
         cycle); try --side left, --precond ilu0 or a larger --restart"
    )
}

/// Whether a full cycle from restart residual `start` to `end` made no progress.
pub fn is_stagnant(start: f64, end: f64) -> bool {
    end > STAGNATION_RATIO * start
}

/// The stagnation rule of restarted GMRES (and CA-GMRES) on the CPU reference: counts
/// consecutive full cycles without progress and names the stop after [`STAGNATION_CYCLES`].
#[derive(Debug, Default)]
pub(crate) struct StagnationWatch {
    /// Consecutive full cycles without progress.
    cycles: usize,
    /// The restart residual before the first of them.
    from: f64,
}

impl StagnationWatch {
    /// After a cycle from restart residual `start` to `end` (`full`: a whole cycle of `m`
    /// steps, below the iteration limit — where the limit is the reason, as on the GPU):
    /// the stagnation stop at `total` iterations, or `None` to go on.
    pub(crate) fn after_cycle(
        &mut self,
        full: bool,
        start: f64,
        end: f64,
        total: usize,
        m: usize,
    ) -> Option<Stop> {
        if !(full && is_stagnant(start, end)) {
            self.cycles = 0;
            return None;
        }
        if self.cycles == 0 {
            self.from = start;
        }
        self.cycles += 1;
        (self.cycles >= STAGNATION_CYCLES).then(|| Stop {
            restarts: 0,
            replacements: 0,
            iterations: total,
            reason: StopReason::Stagnation,
            detail: stagnation_detail(total, self.from, end, self.cycles, m),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::base::{Method, Precond, Side};
    use crate::cpu::side::testing::{VARIANTS, options, rhs, row_scaled, solve_converged};
    use crate::matrix::generators::random_nonsymmetric;

    #[test]
    fn stagnation_means_less_than_a_hundredth_of_a_percent_per_cycle() {
        assert!(super::is_stagnant(1.0, 0.99995));
        assert!(!super::is_stagnant(1.0, 0.9998));
        assert!(super::is_stagnant(1.0, f64::NAN.max(1.0)));
    }

    #[test]
    fn left_jacobi_rescues_small_restart_on_row_scaled_matrix() {
        // Rows scaled by 1e-3..1e3: GMRES(5) stagnates without preconditioner and with right
        // Jacobi (A D⁻¹ keeps the row scaling), while D⁻¹A has unit rows again.
        let a = row_scaled(&random_nonsymmetric::<f64>(300, 6, 7));
        let b = rhs::<f64>(a.nrows());
        for variant in VARIANTS {
            let with = |precond, side| crate::base::SolveOptions {
                restart: 5,
                ..options(Method::Gmres, variant, precond, side)
            };
            let left = solve_converged(&a, &b, &with(Precond::Jacobi, Side::Left));
            assert!(left.report.iterations < 200, "{}", left.report.iterations);
            for (precond, side) in [(Precond::None, Side::Right), (Precond::Jacobi, Side::Right)] {
                let other = crate::cpu::solve(&a, &b, None, &with(precond, side)).unwrap();
                // It either runs far longer or stops early, by name, because it stagnates.
                assert!(
                    !other.report.converged
                        && (other.report.iterations > 5 * left.report.iterations
                            || other.report.reason == crate::base::StopReason::Stagnation),
                    "{variant} {precond} {side}: {}",
                    other.report.reason_detail
                );
            }
            // ‖D⁻¹r‖/‖D⁻¹b‖ meets rtol before ‖r‖/‖b‖ does here: the true residual guard
            // tightened the left threshold and restarted.
            assert!(left.report.restarts >= 1, "{variant}");
        }
    }
}
