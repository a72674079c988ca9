//! Conjugate gradients: classical (Alg. 1 of paper 000, Hestenes–Stiefel) and pipelined
//! (Alg. 2: one fused update kernel and one fused SpMV + inner-product kernel per iteration),
//! each optionally Jacobi-preconditioned (z = D⁻¹r; paper 003 Alg. 1 for the classical form).
//!
//! Both stop on the unpreconditioned ‖r‖₂ and report [`StopReason::NotSpd`] when
//! ⟨p, Ap⟩ ≤ 0 (or ⟨r, D⁻¹r⟩ ≤ 0: a preconditioner that is not positive definite).
//!
//! [`StopReason::NotSpd`]: crate::base::StopReason::NotSpd

use super::{Stop, System, dot, finite_or_stop};
use crate::base::scalar::Scalar;

entry_point! {
    /// Classical CG (Alg. 1), standard PCG with `Precond::Jacobi`.
    pub fn classical_cg(opts) => Cg, Classical, classical_core
}

entry_point! {
    /// Pipelined CG (Alg. 2), with the Jacobi-preconditioned form derived below.
    pub fn pipelined_cg(opts) => Cg, Pipelined, pipelined_core
}

/// ‖r0‖₂ = √⟨r0, r0⟩ (`rr`), pushed to the history; `Err` is the stop when ⟨r0, r0⟩ is not
/// finite or x0 already meets the threshold.
fn initial_residual<T: Scalar>(
    sys: &System<'_, T>,
    rr: T,
    hist: &mut Vec<f64>,
) -> Result<f64, Stop> {
    let res = rr.sqrt().as_f64();
    hist.push(res);
    if let Some(s) = finite_or_stop(rr, 0, "<r, r>") {
        return Err(s);
    }
    if sys.done(res) {
        return Err(Stop::converged(0, res, sys.b_norm));
    }
    Ok(res)
}

fn classical_core<T: Scalar>(sys: &System<'_, T>, x: &mut [T], hist: &mut Vec<f64>) -> Stop {
    let n = sys.n();
    // Alg. 1 l.2: p0 = r0 = b − A x0 (preconditioned: z0 = D⁻¹ r0, p0 = z0).
    let mut r = vec![T::zero(); n];
    sys.residual(x, &mut r);
    let mut z = vec![T::zero(); n];
    sys.precond(&r, &mut z);
    let mut p = z.clone();
    let mut ap = vec![T::zero(); n];
    // ⟨r, z⟩ (= ⟨r, r⟩ without preconditioner).
    let mut rz = dot(&r, &z);
    let rr = dot(&r, &r);
    let mut res = match initial_residual(sys, rr, hist) {
        Ok(res) => res,
        Err(stop) => return stop,
    };
    if rz <= T::zero() {
        return Stop::not_spd(0, "<r, D^-1 r> <= 0: the Jacobi preconditioner is not SPD");
    }
    // Alg. 1 l.5: for i = 0 to convergence.
    for i in 0..sys.max_iter {
        // l.7: compute and store A p_i.
        sys.spmv(&p, &mut ap);
        // l.8: ⟨p_i, A p_i⟩.
        let pap = dot(&p, &ap);
        if let Some(s) = finite_or_stop(pap, i, "<p, Ap>") {
            return s;
        }
        if pap <= T::zero() {
            return Stop::not_spd(i, &format!("<p, Ap> = {:.3e} <= 0", pap.as_f64()));
        }
        // l.9: α_i = ⟨r_i, r_i⟩ / ⟨p_i, A p_i⟩ (⟨r, z⟩ with preconditioner).
        let alpha = rz / pap;
        if let Some(s) = finite_or_stop(alpha, i, "alpha") {
            return s;
        }
        // l.10: x_{i+1} = x_i + α_i p_i;  l.11: r_{i+1} = r_i − α_i A p_i.
        super::axpy(alpha, &p, x);
        super::axpy(-alpha, &ap, &mut r);
        // l.13: ⟨r_{i+1}, r_{i+1}⟩ (the stopping test), and z = D⁻¹ r, ⟨r, z⟩.
        let rr = dot(&r, &r);
        res = rr.sqrt().as_f64();
        hist.push(res);
        if let Some(s) = finite_or_stop(rr, i + 1, "<r, r>") {
            return s;
        }
        if sys.done(res) {
            return Stop::converged(i + 1, res, sys.b_norm);
        }
        let rz_new = if sys.inv_diag.is_some() {
            sys.precond(&r, &mut z);
            dot(&r, &z)
        } else {
            rr
        };
        if rz_new <= T::zero() {
            return Stop::not_spd(
                i + 1,
                "<r, D^-1 r> <= 0: the Jacobi preconditioner is not SPD",
            );
        }
        // l.14: β_i = ⟨r_{i+1}, r_{i+1}⟩ / ⟨r_i, r_i⟩.
        let beta = rz_new / rz;
        rz = rz_new;
        // l.15: p_{i+1} = r_{i+1} + β_i p_i (z_{i+1} with preconditioner).
        let src = if sys.inv_diag.is_some() { &z } else { &r };
        super::xpay(src, beta, &mut p);
    }
    Stop::max_iterations(sys.max_iter, res, sys.b_norm)
}

/// Pipelined CG. Unpreconditioned it is Alg. 2 verbatim, with
/// β_i = α_i²⟨Ap_i, Ap_i⟩/⟨r_i, r_i⟩ − 1 (eq. 3: ⟨r_{i+1}, r_{i+1}⟩ = α²⟨Ap, Ap⟩ − ⟨r, r⟩
/// because ⟨r_i, Ap_i⟩ = ⟨p_i, Ap_i⟩).
///
/// Jacobi-preconditioned (z = D⁻¹r, p_0 = z_0, p_{i+1} = z_{i+1} + β_i p_i): from
/// z_{i+1} = z_i − α D⁻¹Ap_i and ⟨z_i, Ap_i⟩ = ⟨p_i, Ap_i⟩,
/// ⟨r_{i+1}, z_{i+1}⟩ = ⟨r, z⟩ − 2α⟨p, Ap⟩ + α²⟨Ap, D⁻¹Ap⟩ = α²⟨Ap, D⁻¹Ap⟩ − ⟨r, z⟩, so
/// β_i = α_i²⟨Ap_i, D⁻¹Ap_i⟩/⟨r_i, z_i⟩ − 1 and the fused SpMV kernel reduces ⟨Ap, D⁻¹Ap⟩
/// and ⟨p, Ap⟩; the fused update kernel writes x, r, z, p and reduces ⟨r, r⟩ and ⟨r, z⟩.
fn pipelined_core<T: Scalar>(sys: &System<'_, T>, x: &mut [T], hist: &mut Vec<f64>) -> Stop {
    let n = sys.n();
    let pre = sys.inv_diag.as_deref();
    // Alg. 2 l.2: p0 = r0 = b − A x0 (preconditioned: z0 = D⁻¹ r0, p0 = z0).
    let mut r = vec![T::zero(); n];
    sys.residual(x, &mut r);
    let mut z = vec![T::zero(); n];
    sys.precond(&r, &mut z);
    let mut p = z.clone();
    let rr = dot(&r, &r);
    let mut rz = if pre.is_some() { dot(&r, &z) } else { rr };
    let mut res = match initial_residual(sys, rr, hist) {
        Ok(res) => res,
        Err(stop) => return stop,
    };
    if sys.max_iter == 0 {
        return Stop::max_iterations(0, res, sys.b_norm);
    }
    if rz <= T::zero() {
        return Stop::not_spd(0, "<r, D^-1 r> <= 0: the Jacobi preconditioner is not SPD");
    }
    // l.3: compute and store A p0 (with ⟨p0, Ap0⟩ and ⟨Ap0, Ap0⟩ or ⟨Ap0, D⁻¹Ap0⟩ fused).
    let mut ap = vec![T::zero(); n];
    sys.spmv(&p, &mut ap);
    let (mut pap, mut apap) = fused_spmv_dots(&p, &ap, pre);
    // l.4: α0 = ⟨r0, r0⟩/⟨p0, Ap0⟩;  l.5: β0 = α0²⟨Ap0, Ap0⟩/⟨r0, r0⟩ − 1.
    let (mut alpha, mut beta) = match alpha_beta(pap, apap, rz, 0) {
        Ok(ab) => ab,
        Err(s) => return s,
    };
    // l.6: for i = 1 to convergence.
    for i in 1..=sys.max_iter {
        // l.10–12 (one fused kernel, which also reduces ⟨r_i, r_i⟩ and ⟨r_i, z_i⟩ for l.15):
        //   x_i = x_{i−1} + α_{i−1} p_{i−1};  r_i = r_{i−1} − α_{i−1} Ap_{i−1};
        //   (z_i = D⁻¹ r_i);  p_i = r_i + β_{i−1} p_{i−1}  (z_i + β p with preconditioner).
        let mut rr = T::zero();
        let mut rz_new = T::zero();
        for j in 0..n {
            x[j] += alpha * p[j];
            r[j] -= alpha * ap[j];
            let zj = match pre {
                Some(d) => d[j] * r[j],
                None => r[j],
            };
            z[j] = zj;
            p[j] = zj + beta * p[j];
            rr += r[j] * r[j];
            rz_new += r[j] * zj;
        }
        // l.15: ⟨r_i, r_i⟩ (the stopping test).
        res = rr.sqrt().as_f64();
        hist.push(res);
        if let Some(s) = finite_or_stop(rr, i, "<r, r>") {
            return s;
        }
        if sys.done(res) {
            return Stop::converged(i, res, sys.b_norm);
        }
        if i == sys.max_iter {
            break;
        }
        rz = if pre.is_some() { rz_new } else { rr };
        if rz <= T::zero() {
            return Stop::not_spd(i, "<r, D^-1 r> <= 0: the Jacobi preconditioner is not SPD");
        }
        // l.13: compute and store A p_i;  l.14: ⟨Ap_i, Ap_i⟩ (⟨Ap_i, D⁻¹Ap_i⟩), ⟨p_i, Ap_i⟩.
        sys.spmv(&p, &mut ap);
        (pap, apap) = fused_spmv_dots(&p, &ap, pre);
        // l.16: α_i = ⟨r_i, r_i⟩/⟨p_i, Ap_i⟩;  l.17: β_i = α_i²⟨Ap_i, Ap_i⟩/⟨r_i, r_i⟩ − 1.
        (alpha, beta) = match alpha_beta(pap, apap, rz, i) {
            Ok(ab) => ab,
            Err(s) => return s,
        };
    }
    Stop::max_iterations(sys.max_iter, res, sys.b_norm)
}

/// The two inner products of the fused SpMV kernel (l.14): ⟨p, Ap⟩ and ⟨Ap, Ap⟩, or
/// ⟨Ap, D⁻¹Ap⟩ with Jacobi preconditioning.
fn fused_spmv_dots<T: Scalar>(p: &[T], ap: &[T], pre: Option<&[T]>) -> (T, T) {
    let pap = dot(p, ap);
    let apap = match pre {
        Some(d) => ap
            .iter()
            .zip(d)
            .fold(T::zero(), |s, (&q, &di)| s + q * di * q),
        None => dot(ap, ap),
    };
    (pap, apap)
}

/// l.16–17: α = ⟨r, z⟩/⟨p, Ap⟩, β = α²⟨Ap, M⁻¹Ap⟩/⟨r, z⟩ − 1, with the NotSpd and
/// non-finite checks.
fn alpha_beta<T: Scalar>(pap: T, apap: T, rz: T, i: usize) -> std::result::Result<(T, T), Stop> {
    if let Some(s) = finite_or_stop(pap, i, "<p, Ap>") {
        return Err(s);
    }
    if let Some(s) = finite_or_stop(apap, i, "<Ap, Ap>") {
        return Err(s);
    }
    if pap <= T::zero() {
        return Err(Stop::not_spd(
            i,
            &format!("<p, Ap> = {:.3e} <= 0", pap.as_f64()),
        ));
    }
    let alpha = rz / pap;
    let beta = alpha * alpha * apap / rz - T::one();
    if let Some(s) = finite_or_stop(alpha, i, "alpha") {
        return Err(s);
    }
    if let Some(s) = finite_or_stop(beta, i, "beta") {
        return Err(s);
    }
    Ok((alpha, beta))
}
