//! Conjugate gradients: classical (Alg. 1 of paper 000, Hestenes–Stiefel) and pipelined
//! (Alg. 2: one fused update kernel and one fused SpMV + inner-product kernel per iteration),
//! each optionally Jacobi-preconditioned (z = D⁻¹r; paper 003 Alg. 1 for the classical form).
//!
//! Both stop on the unpreconditioned ‖r‖₂ and report [`StopReason::NotSpd`] when
//! ⟨p, Ap⟩ ≤ 0 (or ⟨r, D⁻¹r⟩ ≤ 0: a preconditioner that is not positive definite).
//!
//! [`StopReason::NotSpd`]: crate::base::StopReason::NotSpd

use super::precond::CpuPreconditioner;
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
    // M = I: z = r, so ⟨r, z⟩ = ⟨r, r⟩ and the loop skips the apply.
    let identity = sys.m.is_identity();
    // Alg. 1 l.2: p0 = r0 = b − A x0 (preconditioned: z0 = D⁻¹ r0, p0 = z0).
    let mut r = vec![T::zero(); n];
    sys.residual(x, &mut r);
    let mut z = vec![T::zero(); n];
    sys.m.apply(&r, &mut z);
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
        let rz_new = if identity {
            rr
        } else {
            sys.m.apply(&r, &mut z);
            dot(&r, &z)
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
        let src = if identity { &r } else { &z };
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
    let pre = Pre::of(&*sys.m);
    // Alg. 2 l.2: p0 = r0 = b − A x0 (preconditioned: z0 = D⁻¹ r0, p0 = z0).
    let mut r = vec![T::zero(); n];
    sys.residual(x, &mut r);
    let mut z = vec![T::zero(); n];
    sys.m.apply(&r, &mut z);
    let mut p = z.clone();
    let rr = dot(&r, &r);
    let mut rz = if pre.is_identity() { rr } else { dot(&r, &z) };
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
    // M⁻¹Ap, for a preconditioner without a diagonal form only.
    let mut zap = vec![T::zero(); if pre.is_general() { n } else { 0 }];
    sys.spmv(&p, &mut ap);
    let (mut pap, mut apap) = fused_spmv_dots(&p, &ap, &pre, &mut zap);
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
        match pre {
            Pre::Identity | Pre::Diagonal(_) => {
                for j in 0..n {
                    x[j] += alpha * p[j];
                    r[j] -= alpha * ap[j];
                    let zj = match pre {
                        Pre::Diagonal(d) => d[j] * r[j],
                        _ => r[j],
                    };
                    z[j] = zj;
                    p[j] = zj + beta * p[j];
                    rr += r[j] * r[j];
                    rz_new += r[j] * zj;
                }
            }
            Pre::General(m) => {
                // No diagonal form: the update is split around the apply z_i = M⁻¹ r_i (the
                // same operations as the fused loop, in the same order).
                for j in 0..n {
                    x[j] += alpha * p[j];
                    r[j] -= alpha * ap[j];
                }
                m.apply(&r, &mut z);
                for j in 0..n {
                    p[j] = z[j] + beta * p[j];
                    rr += r[j] * r[j];
                    rz_new += r[j] * z[j];
                }
            }
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
        rz = if pre.is_identity() { rr } else { rz_new };
        if rz <= T::zero() {
            return Stop::not_spd(i, "<r, D^-1 r> <= 0: the Jacobi preconditioner is not SPD");
        }
        // l.13: compute and store A p_i;  l.14: ⟨Ap_i, Ap_i⟩ (⟨Ap_i, D⁻¹Ap_i⟩), ⟨p_i, Ap_i⟩.
        sys.spmv(&p, &mut ap);
        (pap, apap) = fused_spmv_dots(&p, &ap, &pre, &mut zap);
        // l.16: α_i = ⟨r_i, r_i⟩/⟨p_i, Ap_i⟩;  l.17: β_i = α_i²⟨Ap_i, Ap_i⟩/⟨r_i, r_i⟩ − 1.
        (alpha, beta) = match alpha_beta(pap, apap, rz, i) {
            Ok(ab) => ab,
            Err(s) => return s,
        };
    }
    Stop::max_iterations(sys.max_iter, res, sys.b_norm)
}

/// How pipelined CG applies M: not at all (M = I), fused into its vector updates (a diagonal
/// M, as the GPU kernels do), or as a separate apply between them.
#[derive(Clone, Copy)]
enum Pre<'a, T> {
    Identity,
    Diagonal(&'a [T]),
    General(&'a dyn CpuPreconditioner<T>),
}

impl<'a, T: Scalar> Pre<'a, T> {
    fn of(m: &'a dyn CpuPreconditioner<T>) -> Self {
        if m.is_identity() {
            Pre::Identity
        } else if let Some(d) = m.inverse_diagonal() {
            Pre::Diagonal(d)
        } else {
            Pre::General(m)
        }
    }

    fn is_identity(&self) -> bool {
        matches!(self, Pre::Identity)
    }

    fn is_general(&self) -> bool {
        matches!(self, Pre::General(_))
    }
}

/// The two inner products of the fused SpMV kernel (l.14): ⟨p, Ap⟩ and ⟨Ap, Ap⟩, or
/// ⟨Ap, M⁻¹Ap⟩ with a preconditioner (`zap` receives M⁻¹Ap when M has no diagonal form).
fn fused_spmv_dots<T: Scalar>(p: &[T], ap: &[T], pre: &Pre<'_, T>, zap: &mut [T]) -> (T, T) {
    let pap = dot(p, ap);
    let apap = match *pre {
        Pre::Diagonal(d) => ap
            .iter()
            .zip(d)
            .fold(T::zero(), |s, (&q, &di)| s + q * di * q),
        Pre::General(m) => {
            m.apply(ap, zap);
            dot(ap, zap)
        }
        Pre::Identity => dot(ap, ap),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::{Method, Precond, SolveOptions, Variant};
    use crate::cpu::precond::Jacobi;
    use crate::matrix::generators::random_spd;

    /// Jacobi without its diagonal form: what a preconditioner such as ILU(0) looks like to
    /// pipelined CG, which must then apply it between its fused loops.
    struct Opaque(Jacobi<f64>);

    impl CpuPreconditioner<f64> for Opaque {
        fn kind(&self) -> Precond {
            Precond::Jacobi
        }
        fn apply(&self, r: &[f64], z: &mut [f64]) {
            self.0.apply(r, z);
        }
    }

    #[test]
    fn pipelined_general_apply_matches_fused_diagonal() {
        let a = random_spd::<f64>(200, 7, 3);
        let b: Vec<f64> = (0..200).map(|i| 1.0 + (i % 5) as f64).collect();
        let opts = SolveOptions {
            method: Method::Cg,
            variant: Variant::Pipelined,
            precond: Precond::Jacobi,
            rtol: 1e-10,
            ..Default::default()
        };
        let fused = crate::cpu::solve(&a, &b, None, &opts).unwrap();
        let general = crate::cpu::run_preconditioned(
            &a,
            &b,
            None,
            &opts,
            Method::Cg,
            Variant::Pipelined,
            |a| Ok(Box::new(Opaque(Jacobi::new(a)))),
            pipelined_core,
        )
        .unwrap();
        assert!(fused.report.converged, "{}", fused.report.reason_detail);
        assert_eq!(fused.report.iterations, general.report.iterations);
        assert_eq!(fused.report.history, general.report.history);
        assert!(
            fused
                .x
                .iter()
                .zip(&general.x)
                .all(|(p, q)| p.to_bits() == q.to_bits())
        );
    }
}
