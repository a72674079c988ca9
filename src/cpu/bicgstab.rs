//! BiCGStab: classical (Alg. 3 of paper 000, van der Vorst / Saad) and pipelined (Alg. 4:
//! β moved before ω through β_i = −⟨As_i, r0*⟩/⟨Ap_i, r0*⟩, so one host transfer of the four
//! inner products ⟨As, s⟩, ⟨As, As⟩, ⟨As, r0*⟩, ⟨s, s⟩ per iteration).
//!
//! Jacobi preconditioning is applied on the right: the recurrences run on `A D⁻¹` (every
//! "A v" below is `A (D⁻¹ v)`), and the solution update uses the preconditioned directions
//! `D⁻¹p`, `D⁻¹s`, so r stays the true unpreconditioned residual b − Ax.
//!
//! The shadow residual is r0* = r0. Breakdowns (see [`super::is_breakdown`]) are
//! `"<r, r0*>"` (ρ_i ≈ 0), `"<Ap, r0*>"` (the denominator of α ≈ 0) and `"omega"`
//! (⟨As, s⟩ ≈ 0 or As = 0, so ω = 0 and the next β divides by it).

use super::{Stop, System, dot, finite_or_stop, is_breakdown, norm2_f64};
use crate::base::scalar::Scalar;

entry_point! {
    /// Classical BiCGStab (Alg. 3), right-preconditioned with `Precond::Jacobi`.
    pub fn classical(opts) => Bicgstab, Classical, classical_core
}

entry_point! {
    /// Pipelined BiCGStab (Alg. 4), right-preconditioned with `Precond::Jacobi`.
    pub fn pipelined(opts) => Bicgstab, Pipelined, pipelined_core
}

fn nrm<T: Scalar>(v: T) -> f64 {
    v.as_f64().max(0.0).sqrt()
}

/// Working vectors shared by both variants.
struct Work<T> {
    r: Vec<T>,
    rstar: Vec<T>,
    p: Vec<T>,
    /// M⁻¹p (an alias of p without preconditioner, kept as a copy for clarity).
    phat: Vec<T>,
    /// A M⁻¹ p.
    ap: Vec<T>,
    s: Vec<T>,
    shat: Vec<T>,
    /// A M⁻¹ s.
    as_: Vec<T>,
}

impl<T: Scalar> Work<T> {
    /// Alg. 3/4 l.1–3: p0 = r0 = b − A x0, r0* = r0.
    fn new(sys: &System<'_, T>, x: &[T]) -> Self {
        let n = sys.n();
        let mut r = vec![T::zero(); n];
        sys.residual(x, &mut r);
        Work {
            rstar: r.clone(),
            p: r.clone(),
            r,
            phat: vec![T::zero(); n],
            ap: vec![T::zero(); n],
            s: vec![T::zero(); n],
            shat: vec![T::zero(); n],
            as_: vec![T::zero(); n],
        }
    }

    /// Alg. 3/4 l.1–4: the working vectors ([`Work::new`]), ‖r0*‖ (in f64, only to scale the
    /// breakdown tests, so that it cannot overflow), ρ0 = ⟨r0, r0*⟩ and ‖r0‖ (pushed to the
    /// history). `Err` is the stop when ρ0 is not finite or x0 already meets the threshold.
    fn start(
        sys: &System<'_, T>,
        x: &[T],
        hist: &mut Vec<f64>,
    ) -> Result<(Self, f64, T, f64), Stop> {
        let w = Work::new(sys, x);
        let rstar_norm = norm2_f64(&w.rstar);
        // l.4: ⟨r0, r0*⟩.
        let rho = dot(&w.r, &w.rstar);
        let res = nrm(dot(&w.r, &w.r));
        hist.push(res);
        if let Some(s) = finite_or_stop(rho, 0, "<r, r0*>") {
            return Err(s);
        }
        if sys.done(res) {
            return Err(Stop::converged(0, res, sys.b_norm));
        }
        Ok((w, rstar_norm, rho, res))
    }

    /// Alg. 3/4 l.6–8 of iteration `i`, with ρ_i = `rho`, ‖r_i‖ = `res`: the breakdown test
    /// of ρ_i, A p_i ([`Work::apply_ap`]), ⟨Ap_i, r0*⟩ (finite and not a breakdown) and
    /// α_i = ⟨r_i, r0*⟩/⟨Ap_i, r0*⟩ (finite). Returns (α_i, ⟨Ap_i, r0*⟩), or the stop.
    fn alpha_step(
        &mut self,
        sys: &System<'_, T>,
        i: usize,
        rho: T,
        res: f64,
        rstar_norm: f64,
    ) -> Result<(T, T), Stop> {
        if is_breakdown::<T>(rho.as_f64(), res * rstar_norm) {
            return Err(Stop::breakdown(
                i,
                "<r, r0*>",
                rho.as_f64(),
                res * rstar_norm,
            ));
        }
        // l.6: compute and store A p_i.
        self.apply_ap(sys);
        // l.7: ⟨Ap_i, r0*⟩ (‖Ap_i‖ scales its breakdown test).
        let apr = dot(&self.ap, &self.rstar);
        let ap_norm = norm2_f64(&self.ap);
        if let Some(s) = finite_or_stop(apr, i, "<Ap, r0*>") {
            return Err(s);
        }
        if is_breakdown::<T>(apr.as_f64(), ap_norm * rstar_norm) {
            return Err(Stop::breakdown(
                i,
                "<Ap, r0*>",
                apr.as_f64(),
                ap_norm * rstar_norm,
            ));
        }
        // l.8: α_i = ⟨r_i, r0*⟩/⟨Ap_i, r0*⟩.
        let alpha = rho / apr;
        if let Some(s) = finite_or_stop(alpha, i, "alpha") {
            return Err(s);
        }
        Ok((alpha, apr))
    }

    /// "Compute and store A p_i" = A (M⁻¹ p_i).
    fn apply_ap(&mut self, sys: &System<'_, T>) {
        sys.m.apply(&self.p, &mut self.phat);
        sys.spmv(&self.phat, &mut self.ap);
    }

    /// "Compute and store A s_i" = A (M⁻¹ s_i).
    fn apply_as(&mut self, sys: &System<'_, T>) {
        sys.m.apply(&self.s, &mut self.shat);
        sys.spmv(&self.shat, &mut self.as_);
    }
}

/// The ω breakdown test of iteration `i` (before ω_i = ⟨As_i, s_i⟩/⟨As_i, As_i⟩): the stop
/// when ⟨As_i, As_i⟩ is not finite, or As_i = 0, or ⟨As_i, s_i⟩ is numerically zero relative
/// to ‖As_i‖·‖s_i‖ (`s_norm`).
fn omega_breakdown<T: Scalar>(i: usize, as_s: T, as_as: T, s_norm: f64) -> Option<Stop> {
    if let Some(s) = finite_or_stop(as_as, i, "<As, As>") {
        return Some(s);
    }
    if as_as <= T::zero() || is_breakdown::<T>(as_s.as_f64(), nrm(as_as) * s_norm) {
        return Some(Stop::breakdown(
            i,
            "omega",
            as_s.as_f64(),
            nrm(as_as) * s_norm,
        ));
    }
    None
}

// Element loops are written per index, as the fused GPU kernels run them.
#[allow(clippy::needless_range_loop)]
fn classical_core<T: Scalar>(sys: &System<'_, T>, x: &mut [T], hist: &mut Vec<f64>) -> Stop {
    let n = sys.n();
    // l.1–4: p0 = r0 = b − A x0, r0* = r0, ⟨r0, r0*⟩.
    let (mut w, rstar_norm, mut rho, mut res) = match Work::start(sys, x, hist) {
        Ok(start) => start,
        Err(stop) => return stop,
    };
    // l.5: for i = 0 to convergence.
    for i in 0..sys.max_iter {
        // l.6: compute and store A p_i;  l.7: ⟨Ap_i, r0*⟩;  l.8: α_i = ⟨r_i, r0*⟩/⟨Ap_i, r0*⟩.
        let (alpha, _) = match w.alpha_step(sys, i, rho, res, rstar_norm) {
            Ok(step) => step,
            Err(stop) => return stop,
        };
        // l.9: s_i = r_i − α_i Ap_i.
        for j in 0..n {
            w.s[j] = w.r[j] - alpha * w.ap[j];
        }
        // Early exit on the half step: ‖s_i‖ small means x_i + α_i M⁻¹p_i is the solution.
        let s_norm = nrm(dot(&w.s, &w.s));
        if sys.done(s_norm) {
            super::axpy(alpha, &w.phat, x);
            hist.push(s_norm);
            return Stop::converged(i + 1, s_norm, sys.b_norm);
        }
        // l.10: compute and store A s_i.
        w.apply_as(sys);
        // l.11: ⟨As_i, s_i⟩, ⟨As_i, As_i⟩.
        let as_s = dot(&w.as_, &w.s);
        let as_as = dot(&w.as_, &w.as_);
        if let Some(s) = omega_breakdown(i, as_s, as_as, s_norm) {
            return s;
        }
        // l.12: ω_i = ⟨As_i, s_i⟩/⟨As_i, As_i⟩.
        let omega = as_s / as_as;
        // l.13: x_{i+1} = x_i + α_i p_i + ω_i s_i (the preconditioned directions M⁻¹p, M⁻¹s).
        for j in 0..n {
            x[j] += alpha * w.phat[j] + omega * w.shat[j];
        }
        // l.14: r_{i+1} = s_i − ω_i As_i.
        for j in 0..n {
            w.r[j] = w.s[j] - omega * w.as_[j];
        }
        res = nrm(dot(&w.r, &w.r));
        hist.push(res);
        if !res.is_finite() {
            return Stop::non_finite(i + 1, "<r, r>", res);
        }
        if sys.done(res) {
            return Stop::converged(i + 1, res, sys.b_norm);
        }
        // l.15: ⟨r_{i+1}, r0*⟩.
        let rho_new = dot(&w.r, &w.rstar);
        // l.16: β_i = ⟨r_{i+1}, r0*⟩/⟨r_i, r0*⟩ × α_i/ω_i.
        let beta = (rho_new / rho) * (alpha / omega);
        if let Some(s) = finite_or_stop(beta, i + 1, "beta") {
            return s;
        }
        rho = rho_new;
        // l.17: p_{i+1} = r_{i+1} + β_i (p_i − ω_i Ap_i).
        for j in 0..n {
            w.p[j] = w.r[j] + beta * (w.p[j] - omega * w.ap[j]);
        }
    }
    Stop::max_iterations(sys.max_iter, res, sys.b_norm)
}

/// Pipelined BiCGStab (Alg. 4). Per iteration the GPU runs: (1) SpMV A p fused with the
/// first stage of ⟨Ap, r0*⟩ (and ⟨Ap, Ap⟩ for the breakdown test); (2) s = r − αp fused with
/// ⟨s, s⟩; (3) SpMV A s fused with ⟨As, s⟩, ⟨As, As⟩, ⟨As, r0*⟩; one host transfer; (4) the
/// x, r, p update fused with ⟨r, r0*⟩ (and ⟨r, r⟩, read only to confirm convergence).
///
/// The monitored residual is the paper's ⟨r_{i+1}, r_{i+1}⟩ = ⟨s, s⟩ − 2ω⟨s, As⟩ + ω²⟨As, As⟩
/// (available at the host transfer, before the update). It cancels badly when
/// ‖r_{i+1}‖ ≪ ‖s_i‖, so when it claims convergence the directly reduced ⟨r, r⟩ of the
/// update kernel confirms it (and replaces it in the history); otherwise iterations go on.
#[allow(clippy::needless_range_loop)]
fn pipelined_core<T: Scalar>(sys: &System<'_, T>, x: &mut [T], hist: &mut Vec<f64>) -> Stop {
    let n = sys.n();
    // l.1–4: p0 = r0 = b − A x0, r0* = r0, ⟨r0, r0*⟩.
    let (mut w, rstar_norm, mut rho, mut res) = match Work::start(sys, x, hist) {
        Ok(start) => start,
        Err(stop) => return stop,
    };
    // l.5: for i = 0 to convergence.
    for i in 0..sys.max_iter {
        // l.6: compute and store A p_i;  l.7: ⟨Ap_i, r0*⟩ (fused, with ⟨Ap_i, Ap_i⟩);
        // l.8: α_i = ⟨r_i, r0*⟩/⟨Ap_i, r0*⟩ (each GPU workgroup recomputes it).
        let (alpha, apr) = match w.alpha_step(sys, i, rho, res, rstar_norm) {
            Ok(step) => step,
            Err(stop) => return stop,
        };
        // l.9: s_i = r_i − α_i Ap_i, fused with ⟨s_i, s_i⟩.
        let mut ss = T::zero();
        for j in 0..n {
            w.s[j] = w.r[j] - alpha * w.ap[j];
            ss += w.s[j] * w.s[j];
        }
        // l.10: compute and store As_i;  l.11: ⟨As_i, s_i⟩, ⟨As_i, As_i⟩;  l.12: ⟨As_i, r0*⟩.
        w.apply_as(sys);
        let as_s = dot(&w.as_, &w.s);
        let as_as = dot(&w.as_, &w.as_);
        let as_r = dot(&w.as_, &w.rstar);
        // --- host transfer of ⟨s, s⟩, ⟨As, s⟩, ⟨As, As⟩, ⟨As, r0*⟩ ---
        let s_norm = nrm(ss);
        if sys.done(s_norm) {
            // Half step already converged: x_{i+1} = x_i + α_i M⁻¹p_i.
            super::axpy(alpha, &w.phat, x);
            hist.push(s_norm);
            return Stop::converged(i + 1, s_norm, sys.b_norm);
        }
        if let Some(s) = omega_breakdown(i, as_s, as_as, s_norm) {
            return s;
        }
        // l.13: β_i = −⟨As_i, r0*⟩/⟨Ap_i, r0*⟩.
        let beta = -as_r / apr;
        // l.14: ω_i = ⟨As_i, s_i⟩/⟨As_i, As_i⟩.
        let omega = as_s / as_as;
        if let Some(s) = finite_or_stop(beta, i, "beta") {
            return s;
        }
        // Residual monitor: ⟨r_{i+1}, r_{i+1}⟩ = ⟨s, s⟩ − 2ω⟨s, As⟩ + ω²⟨As, As⟩.
        let rr_est = ss - (omega + omega) * as_s + omega * omega * as_as;
        // l.15: x_{i+1} = x_i + α_i p_i + ω_i s_i;  l.16: r_{i+1} = s_i − ω_i As_i;
        // l.19: p_{i+1} = r_{i+1} + β_i (p_i − ω_i Ap_i);  l.20: ⟨r_{i+1}, r0*⟩ — one kernel.
        let mut rho_new = T::zero();
        let mut rr = T::zero();
        for j in 0..n {
            x[j] += alpha * w.phat[j] + omega * w.shat[j];
            w.r[j] = w.s[j] - omega * w.as_[j];
            w.p[j] = w.r[j] + beta * (w.p[j] - omega * w.ap[j]);
            rho_new += w.r[j] * w.rstar[j];
            rr += w.r[j] * w.r[j];
        }
        rho = rho_new;
        res = nrm(rr_est);
        if !rr_est.is_finite() {
            hist.push(res);
            return Stop::non_finite(i + 1, "<r, r>", rr_est.as_f64());
        }
        if sys.done(res) {
            // Confirm the cancelling estimate with the directly reduced ⟨r, r⟩.
            res = nrm(rr);
            hist.push(res);
            if sys.done(res) {
                return Stop::converged(i + 1, res, sys.b_norm);
            }
        } else {
            hist.push(res);
        }
        if let Some(s) = finite_or_stop(rho, i + 1, "<r, r0*>") {
            return s;
        }
    }
    Stop::max_iterations(sys.max_iter, res, sys.b_norm)
}
