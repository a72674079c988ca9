//! BiCGStab: classical (Alg. 3 of paper 000, van der Vorst / Saad) and pipelined (Alg. 4:
//! β moved before ω through β_i = −⟨As_i, r0*⟩/⟨Ap_i, r0*⟩, so one host transfer of the four
//! inner products ⟨As, s⟩, ⟨As, As⟩, ⟨As, r0*⟩, ⟨s, s⟩ per iteration).
//!
//! **Side of the preconditioner** (`opts.side`, see [`super::side`]):
//!
//! * `Side::Right`, the default: the recurrences run on `A M⁻¹` (every "A v" below is
//!   `A (M⁻¹v)`), and the solution update uses the preconditioned directions `M⁻¹p`, `M⁻¹s`,
//!   so r stays the true unpreconditioned residual b − Ax, monitored (and recorded in the
//!   history) against max(rtol·‖b‖, atol).
//! * `Side::Left`: the standard recurrences on the operator `M⁻¹A` and right-hand side
//!   `M⁻¹b`: r̂0 = M⁻¹(b − A x0), every "A v" below is `M⁻¹(A v)`, and the update uses p and
//!   s themselves. The tracked residual is r̂ = M⁻¹(b − Ax), monitored (and recorded) against
//!   τ_L = max(rtol·‖M⁻¹b‖, atol) (the convention of SciPy's and PETSc's left-preconditioned
//!   GMRES). A claim is confirmed with the true ‖b − Ax‖; if that misses the threshold, τ_L is
//!   tightened and BiCGStab restarts from the current x (r̂, r0* and p from the fresh
//!   preconditioned residual), at most [`MAX_GUARD_RESTARTS`](super::side::MAX_GUARD_RESTARTS)
//!   times, counted in the report's restarts; then the claim goes to the driver, which reports
//!   the residual gap.
//!
//! With M = I (`Precond::None`) both sides are the same run, bit for bit.
//!
//! The shadow residual is r0* = r0. Breakdowns (see [`super::is_breakdown`]) are
//! `"<r, r0*>"` (ρ_i ≈ 0), `"<Ap, r0*>"` (the denominator of α ≈ 0) and `"omega"`
//! (⟨As, s⟩ ≈ 0 or As = 0, so ω = 0 and the next β divides by it).

use super::side::{Target, on_side};
use super::{Stop, System, dot, finite_or_stop, is_breakdown, norm2_f64};
use crate::base::scalar::Scalar;

entry_point! {
    /// Classical BiCGStab (Alg. 3), preconditioned on the side `opts.side` (right by default).
    pub fn classical(opts) => Bicgstab, Classical, move |sys, x, h| {
        on_side(sys, x, h, opts.side, opts.rtol, opts.atol, |x, h, target| {
            classical_core(sys, x, h, target)
        })
    }
}

entry_point! {
    /// Pipelined BiCGStab (Alg. 4), preconditioned on the side `opts.side` (right by default).
    pub fn pipelined(opts) => Bicgstab, Pipelined, move |sys, x, h| {
        on_side(sys, x, h, opts.side, opts.rtol, opts.atol, |x, h, target| {
            pipelined_core(sys, x, h, target)
        })
    }
}

fn nrm<T: Scalar>(v: T) -> f64 {
    v.as_f64().max(0.0).sqrt()
}

/// Working vectors shared by both variants.
struct Work<T> {
    /// The side and threshold the recurrences run on.
    target: Target,
    /// b − Ax (right) or r̂ = M⁻¹(b − Ax) (left).
    r: Vec<T>,
    rstar: Vec<T>,
    p: Vec<T>,
    /// The direction x moves along: M⁻¹p (right; a copy of p without preconditioner, kept for
    /// clarity) or p (left, a copy).
    phat: Vec<T>,
    /// A M⁻¹ p (right) or M⁻¹A p (left).
    ap: Vec<T>,
    s: Vec<T>,
    /// M⁻¹s (right) or s (left), as `phat`.
    shat: Vec<T>,
    /// A M⁻¹ s (right) or M⁻¹A s (left).
    as_: Vec<T>,
}

impl<T: Scalar> Work<T> {
    /// Alg. 3/4 l.1–3: p0 = r0 = b − A x0 (left: M⁻¹(b − A x0)), r0* = r0.
    fn new(sys: &System<'_, T>, x: &[T], target: Target) -> Self {
        let n = sys.n();
        let mut r = vec![T::zero(); n];
        let mut s = vec![T::zero(); n];
        target.residual(sys, x, &mut r, &mut s);
        Work {
            target,
            rstar: r.clone(),
            p: r.clone(),
            r,
            phat: vec![T::zero(); n],
            ap: vec![T::zero(); n],
            s,
            shat: vec![T::zero(); n],
            as_: vec![T::zero(); n],
        }
    }

    /// Alg. 3/4 l.1–4: the working vectors ([`Work::new`]), ‖r0*‖ (in f64, only to scale the
    /// breakdown tests, so that it cannot overflow), ρ0 = ⟨r0, r0*⟩ and ‖r0‖ (pushed to the
    /// history). `Err` is the stop when ρ0 is not finite or x0 already meets the threshold.
    /// A resumed run (after the left guard) replaces the last history entry with ‖r0‖ and
    /// runs at least one iteration.
    fn start(
        sys: &System<'_, T>,
        x: &[T],
        hist: &mut Vec<f64>,
        target: Target,
    ) -> Result<(Self, f64, T, f64), Stop> {
        let w = Work::new(sys, x, target);
        let rstar_norm = norm2_f64(&w.rstar);
        // l.4: ⟨r0, r0*⟩.
        let rho = dot(&w.r, &w.rstar);
        let res = nrm(dot(&w.r, &w.r));
        target.record_start(hist, res);
        if let Some(s) = finite_or_stop(rho, target.first_iter, "<r, r0*>") {
            return Err(s);
        }
        if !target.resumed && target.done(res) {
            return Err(Stop::converged(target.first_iter, res, target.scale));
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

    /// "Compute and store A p_i" = A (M⁻¹ p_i) (right, phat = M⁻¹p_i) or M⁻¹(A p_i) (left,
    /// phat = p_i).
    fn apply_ap(&mut self, sys: &System<'_, T>) {
        self.target
            .operator(sys, &self.p, &mut self.ap, &mut self.phat);
        if self.target.left {
            self.phat.copy_from_slice(&self.p);
        }
    }

    /// "Compute and store A s_i" = A (M⁻¹ s_i) (right, shat = M⁻¹s_i) or M⁻¹(A s_i) (left,
    /// shat = s_i).
    fn apply_as(&mut self, sys: &System<'_, T>) {
        self.target
            .operator(sys, &self.s, &mut self.as_, &mut self.shat);
        if self.target.left {
            self.shat.copy_from_slice(&self.s);
        }
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
fn classical_core<T: Scalar>(
    sys: &System<'_, T>,
    x: &mut [T],
    hist: &mut Vec<f64>,
    target: Target,
) -> Stop {
    let n = sys.n();
    // l.1–4: p0 = r0 = b − A x0, r0* = r0, ⟨r0, r0*⟩.
    let (mut w, rstar_norm, mut rho, mut res) = match Work::start(sys, x, hist, target) {
        Ok(start) => start,
        Err(stop) => return stop,
    };
    // l.5: for i = 0 to convergence.
    for i in target.first_iter..sys.max_iter {
        // l.6: compute and store A p_i;  l.7: ⟨Ap_i, r0*⟩;  l.8: α_i = ⟨r_i, r0*⟩/⟨Ap_i, r0*⟩.
        let (alpha, _) = match w.alpha_step(sys, i, rho, res, rstar_norm) {
            Ok(step) => step,
            Err(stop) => return stop,
        };
        // l.9: s_i = r_i − α_i Ap_i.
        for j in 0..n {
            w.s[j] = w.r[j] - alpha * w.ap[j];
        }
        // Early exit on the half step: ‖s_i‖ small means x_i + α_i p̂_i (p̂ = phat) is the
        // solution.
        let s_norm = nrm(dot(&w.s, &w.s));
        if target.done(s_norm) {
            super::axpy(alpha, &w.phat, x);
            hist.push(s_norm);
            return Stop::converged(i + 1, s_norm, target.scale);
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
        // l.13: x_{i+1} = x_i + α_i p_i + ω_i s_i (right: the preconditioned directions M⁻¹p, M⁻¹s).
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
        if target.done(res) {
            return Stop::converged(i + 1, res, target.scale);
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
    Stop::max_iterations(sys.max_iter, res, target.scale)
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
fn pipelined_core<T: Scalar>(
    sys: &System<'_, T>,
    x: &mut [T],
    hist: &mut Vec<f64>,
    target: Target,
) -> Stop {
    let n = sys.n();
    // l.1–4: p0 = r0 = b − A x0, r0* = r0, ⟨r0, r0*⟩.
    let (mut w, rstar_norm, mut rho, mut res) = match Work::start(sys, x, hist, target) {
        Ok(start) => start,
        Err(stop) => return stop,
    };
    // l.5: for i = 0 to convergence.
    for i in target.first_iter..sys.max_iter {
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
        if target.done(s_norm) {
            // Half step already converged: x_{i+1} = x_i + α_i p̂_i (right: M⁻¹p_i, left: p_i).
            super::axpy(alpha, &w.phat, x);
            hist.push(s_norm);
            return Stop::converged(i + 1, s_norm, target.scale);
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
        if target.done(res) {
            // Confirm the cancelling estimate with the directly reduced ⟨r, r⟩.
            res = nrm(rr);
            hist.push(res);
            if target.done(res) {
                return Stop::converged(i + 1, res, target.scale);
            }
        } else {
            hist.push(res);
        }
        if let Some(s) = finite_or_stop(rho, i + 1, "<r, r0*>") {
            return s;
        }
    }
    Stop::max_iterations(sys.max_iter, res, target.scale)
}

#[cfg(test)]
mod tests {
    use crate::base::{Method, Precond, Side};
    use crate::cpu::side::testing::{VARIANTS, options, rhs, row_scaled, solve_converged};
    use crate::matrix::generators::{ConvectionField, convection_diffusion_3d};

    #[test]
    fn left_jacobi_converges_on_row_scaled_matrix() {
        // Rows scaled by 1e-3..1e3: D⁻¹A has unit rows again.
        let a = row_scaled(&convection_diffusion_3d::<f64>(8, 0.1, ConvectionField::X));
        let b = rhs::<f64>(a.nrows());
        for variant in VARIANTS {
            let opts = options(Method::Bicgstab, variant, Precond::Jacobi, Side::Left);
            let left = solve_converged(&a, &b, &opts);
            assert!(left.report.iterations < 100, "{}", left.report.iterations);
        }
    }
}
