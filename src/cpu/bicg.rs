//! Biconjugate gradients (paper 001 §3.1), using the explicit transpose Aᵀ.
//!
//! The shadow residual is r̃0 = r0. With Jacobi preconditioning it is the preconditioned BiCG
//! of the Templates book (Barrett et al. 1994, Fig. 2.8): z = D⁻¹r, z̃ = D⁻ᵀr̃ = D⁻¹r̃,
//! ρ = ⟨z, r̃⟩, p = z + βp, p̃ = z̃ + βp̃; r stays the unpreconditioned residual.
//!
//! Breakdowns: `"<r, r~>"` (ρ_{i−1} ≈ 0, the paper's "method fails") and `"<p~, Ap>"`
//! (the denominator of α ≈ 0), both relative to the norms of their operands
//! (see [`super::is_breakdown`]).

use super::{Stop, System, dot, finite_or_stop, is_breakdown, norm2_f64};
use crate::base::scalar::Scalar;

entry_point! {
    /// BiCG (the report says `variant: classical`; BiCG has a single formulation).
    pub fn bicg(opts) => Bicg, Classical, bicg_core
}

fn nrm<T: Scalar>(v: &[T]) -> f64 {
    dot(v, v).sqrt().as_f64()
}

/// The BiCG loop, run by [`bicg`] and by [`super::solve`] with either variant.
pub(super) fn bicg_core<T: Scalar>(sys: &System<'_, T>, x: &mut [T], hist: &mut Vec<f64>) -> Stop {
    let n = sys.n();
    // Setup: the explicit transpose Aᵀ (an O(nnz) counting sort).
    let at = sys.a.transpose();
    // r0 ← b − A x0;  r̃0 = r0.
    let mut r = vec![T::zero(); n];
    sys.residual(x, &mut r);
    let mut rt = r.clone();
    let mut z = vec![T::zero(); n];
    let mut zt = vec![T::zero(); n];
    let mut p = vec![T::zero(); n];
    let mut pt = vec![T::zero(); n];
    let mut q = vec![T::zero(); n];
    let mut qt = vec![T::zero(); n];
    let mut rho_old = T::one();
    let mut res = nrm(&r);
    hist.push(res);
    if !res.is_finite() {
        return Stop::non_finite(0, "<r, r>", res);
    }
    if sys.done(res) {
        return Stop::converged(0, res, sys.b_norm);
    }
    // repeat (i = 1, 2, … in the paper; 0-based here).
    for i in 0..sys.max_iter {
        // z = M⁻¹ r, z̃ = M⁻ᵀ r̃ (copies without preconditioner).
        sys.m.apply(&r, &mut z);
        sys.m.apply_transposed(&rt, &mut zt);
        // ρ_{i−1} ← ⟨r_{i−1}, r̃_{i−1}⟩ (⟨z, r̃⟩ preconditioned);  if ρ = 0: method fails.
        let rho = dot(&z, &rt);
        if let Some(s) = finite_or_stop(rho, i, "<r, r~>") {
            return s;
        }
        let scale = norm2_f64(&z) * norm2_f64(&rt);
        if is_breakdown::<T>(rho.as_f64(), scale) {
            return Stop::breakdown(i, "<r, r~>", rho.as_f64(), scale);
        }
        if i == 0 {
            // p_1 ← r_0, p̃_1 ← r̃_0.
            p.copy_from_slice(&z);
            pt.copy_from_slice(&zt);
        } else {
            // β ← ρ_{i−1}/ρ_{i−2};  p_i ← r_{i−1} + β p_{i−1};  p̃_i ← r̃_{i−1} + β p̃_{i−1}.
            let beta = rho / rho_old;
            super::xpay(&z, beta, &mut p);
            super::xpay(&zt, beta, &mut pt);
        }
        rho_old = rho;
        // q_i ← A p_i;  q̃_i ← Aᵀ p̃_i.
        sys.spmv(&p, &mut q);
        super::spmv(&at, &pt, &mut qt).expect("square matrix");
        // α ← ρ_{i−1}/⟨p̃_i, q_i⟩.
        let ptq = dot(&pt, &q);
        if let Some(s) = finite_or_stop(ptq, i, "<p~, Ap>") {
            return s;
        }
        let scale = norm2_f64(&pt) * norm2_f64(&q);
        if is_breakdown::<T>(ptq.as_f64(), scale) {
            return Stop::breakdown(i, "<p~, Ap>", ptq.as_f64(), scale);
        }
        let alpha = rho / ptq;
        if let Some(s) = finite_or_stop(alpha, i, "alpha") {
            return s;
        }
        // x_i ← x_{i−1} + α p_i;  r_i ← r_{i−1} − α q_i;  r̃_i ← r̃_{i−1} − α q̃_i.
        super::axpy(alpha, &p, x);
        super::axpy(-alpha, &q, &mut r);
        super::axpy(-alpha, &qt, &mut rt);
        // until stopping criteria is reached: ‖r_i‖₂ ≤ threshold.
        res = nrm(&r);
        hist.push(res);
        if !res.is_finite() {
            return Stop::non_finite(i + 1, "<r, r>", res);
        }
        if sys.done(res) {
            return Stop::converged(i + 1, res, sys.b_norm);
        }
    }
    Stop::max_iterations(sys.max_iter, res, sys.b_norm)
}
