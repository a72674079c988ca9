//! The CA-GMRES(s, m) driver: restart cycles of blocks (see the module docs of
//! [`super`]), on the common CPU driver [`crate::cpu::run`] (validation, b = 0, the true
//! residual guard, cancellation).

use nalgebra::{DMatrix, DVector};

use super::hessenberg::{extend_hessenberg, least_squares};
use super::leja::{newton_shifts, ritz_values};
use super::powers::matrix_powers;
use super::tsqr::borth;
use super::{Basis, CaOptions, CaReport, CaSolution, CycleInfo};
use crate::base::error::{KrylovError, Result};
use crate::base::{GramSchmidt, Method, Precond, SolveOptions, Variant};
use crate::cpu::gmres::{MAX_GAP_RESTARTS, StagnationWatch};
use crate::cpu::{Stop, System};
use crate::matrix::Csr;

/// Solves A x = b by CA-GMRES(s, m) in f64 (see [`super`]). Errors: bad `ca`
/// ([`CaOptions::validate`]), s > n, a preconditioner in `opts`, and everything
/// [`crate::cpu::solve`] refuses (A not square, sizes, non-finite input).
pub fn solve(
    a: &Csr<f64>,
    b: &[f64],
    x0: Option<&[f64]>,
    opts: &SolveOptions,
    ca: &CaOptions,
) -> Result<CaSolution> {
    ca.validate()?;
    a.require_square()?;
    if ca.s > a.nrows() {
        return Err(KrylovError::InvalidOption(format!(
            "CA-GMRES block size s = {} exceeds the matrix order {}",
            ca.s,
            a.nrows()
        )));
    }
    if opts.precond != Precond::None {
        return Err(KrylovError::InvalidOption(format!(
            "the CA-GMRES reference is unpreconditioned (got --precond {})",
            opts.precond
        )));
    }
    let mut rep = CaReport {
        options: *ca,
        shifts: Vec::new(),
        cycles: Vec::new(),
        scale: inf_norm(a),
        reductions_per_cycle: None,
        syncs_per_cycle: None,
    };
    let sol = crate::cpu::run(
        a,
        b,
        x0,
        opts,
        Method::Gmres,
        Variant::Classical,
        |sys, x, hist| cycles(sys, x, hist, ca, opts.gs, &mut rep),
    )?;
    let full: Vec<&CycleInfo> = rep
        .cycles
        .iter()
        .filter(|c| c.kind == "ca" && c.blocks == ca.m / ca.s)
        .collect();
    if !full.is_empty() {
        let avg = |f: fn(&CycleInfo) -> usize| {
            full.iter().map(|c| f(c) as f64).sum::<f64>() / full.len() as f64
        };
        rep.reductions_per_cycle = Some(avg(|c| c.reductions));
        rep.syncs_per_cycle = Some(avg(|c| c.syncs));
    }
    let mut report = sol.report;
    report.notes.insert(
        0,
        format!(
            "CA-GMRES(s = {}, m = {}) CPU reference: {:?} basis, TSQR {:?}; iterations count \
             the basis vectors generated",
            ca.s, ca.m, ca.basis, ca.tsqr
        ),
    );
    Ok(CaSolution {
        x: sol.x,
        report,
        ca: rep,
    })
}

/// ‖A‖_∞ (1 for A = 0): the monomial basis's scaling, computed once on the host.
fn inf_norm(a: &Csr<f64>) -> f64 {
    let norm = (0..a.nrows())
        .map(|i| a.row(i).1.iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0f64, f64::max);
    if norm > 0.0 && norm.is_finite() {
        norm
    } else {
        1.0
    }
}

/// r = b − A x and ‖r‖.
fn residual(sys: &System<'_, f64>, x: &[f64], r: &mut [f64]) -> f64 {
    sys.residual(x, r);
    r.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// σ_max/σ_min of `m` (∞ when singular).
fn cond(m: &DMatrix<f64>) -> f64 {
    let sv = m.clone().singular_values();
    let (lo, hi) = sv.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
        (lo.min(v), hi.max(v))
    });
    if lo > 0.0 { hi / lo } else { f64::INFINITY }
}

/// The state of one cycle while it runs.
struct Cycle {
    q: DMatrix<f64>,
    h: DMatrix<f64>,
    /// Columns of H filled.
    k: usize,
    info: CycleInfo,
    /// Set when the Krylov space became invariant (or the block numerically rank deficient).
    breakdown: Option<(usize, f64, f64)>,
    /// The last per-step estimate.
    est: f64,
}

/// One standard Arnoldi (GMRES(m)) cycle with `gs`; counts as in
/// [`super::gmres_counts_per_cycle`].
fn arnoldi_cycle(
    sys: &System<'_, f64>,
    c: &mut Cycle,
    m: usize,
    gs: GramSchmidt,
    rho: f64,
    total: &mut usize,
    hist: &mut Vec<f64>,
) -> Option<Stop> {
    let n = sys.n();
    let mut w = vec![0.0; n];
    for i in 0..m {
        if *total >= sys.max_iter {
            break;
        }
        let qi: Vec<f64> = c.q.column(i).iter().copied().collect();
        sys.spmv(&qi, &mut w);
        let mut wv = DVector::from_vec(std::mem::take(&mut w));
        let w_norm = wv.norm();
        if !w_norm.is_finite() {
            return Some(Stop::non_finite(*total, "A v", w_norm));
        }
        let prev = c.q.columns(0, i + 1).into_owned();
        match gs {
            GramSchmidt::Mgs => {
                for j in 0..=i {
                    let hj = prev.column(j).dot(&wv);
                    c.h[(j, i)] += hj;
                    wv.axpy(-hj, &prev.column(j), 1.0);
                }
                c.info.reductions += i + 1;
            }
            GramSchmidt::Cgs | GramSchmidt::Cgs2 => {
                let passes = if gs == GramSchmidt::Cgs2 { 2 } else { 1 };
                for _ in 0..passes {
                    let hv = prev.transpose() * &wv;
                    wv -= &prev * &hv;
                    for j in 0..=i {
                        c.h[(j, i)] += hv[j];
                    }
                }
                c.info.reductions += passes;
            }
        }
        let hnorm = wv.norm();
        c.info.reductions += 1;
        c.info.syncs += 1;
        c.info.vectors += 1;
        *total += 1;
        c.k = i + 1;
        w = wv.data.into();
        if crate::cpu::is_breakdown::<f64>(hnorm, w_norm) || w_norm == 0.0 {
            c.breakdown = Some((i + 1, hnorm, w_norm));
        } else {
            c.h[(i + 1, i)] = hnorm;
            let qn = DVector::from_iterator(n, w.iter().map(|v| v / hnorm));
            c.q.set_column(i + 1, &qn);
        }
        let (_, est) = least_squares(&c.h, c.k, rho);
        c.est = est[c.k - 1];
        hist.push(c.est);
        if !c.est.is_finite() {
            return Some(Stop::non_finite(*total, "least-squares estimate", c.est));
        }
        if c.breakdown.is_some() || sys.done(c.est) {
            break;
        }
    }
    None
}

/// One CA cycle of m/s blocks with the shifts and scaling of `rep` (no shifts: monomial).
fn ca_cycle(
    sys: &System<'_, f64>,
    c: &mut Cycle,
    ca: &CaOptions,
    rep: &CaReport,
    rho: f64,
    total: &mut usize,
    hist: &mut Vec<f64>,
) -> Result<Option<Stop>> {
    for _ in 0..ca.m / ca.s {
        let steps = ca.s.min(sys.max_iter.saturating_sub(*total));
        if steps == 0 {
            break;
        }
        let j = c.k;
        let start: Vec<f64> = c.q.column(j).iter().copied().collect();
        let p = matrix_powers(sys.a, &start, steps, &rep.shifts, rep.scale)?;
        *total += steps;
        c.info.vectors += steps;
        c.info.blocks += 1;
        let w = p.v.columns(1, steps).into_owned();
        if let Some(bad) = w.iter().find(|v| !v.is_finite()) {
            return Ok(Some(Stop::non_finite(*total, "matrix powers basis", *bad)));
        }
        let prev = c.q.columns(0, j + 1).into_owned();
        let bo = borth(&prev, &w, ca.tsqr)?;
        c.info.reductions += bo.reductions;
        c.info.syncs += bo.qr.report.host_syncs.max(1);
        let r = &bo.qr.r;
        // The basis [q_j, W] = Q⁺R⁺: its condition number.
        let mut rp = DMatrix::zeros(j + 1 + steps, steps + 1);
        rp[(j, 0)] = 1.0;
        rp.view_mut((0, 1), (j + 1, steps)).copy_from(&bo.c);
        rp.view_mut((j + 1, 1), (steps, steps)).copy_from(r);
        c.info.basis_cond = c.info.basis_cond.max(cond(&rp));
        c.info.tsqr.push(bo.qr.report.clone());
        // Columns kept: up to the first numerically zero diagonal entry of R (SVQR, also as
        // a fallback, floors the singular values of W at √ε·σ_max).
        let rmax = (0..steps).fold(0.0f64, |m, l| m.max(r[(l, l)]));
        let tol = if bo.qr.report.used == super::tsqr::Tsqr::Svqr {
            2.0 * f64::EPSILON.sqrt() * rmax
        } else {
            10.0 * steps as f64 * f64::EPSILON * rmax
        };
        let kept = (0..steps)
            .position(|l| !r[(l, l)].is_finite() || r[(l, l)] <= tol)
            .unwrap_or(steps);
        if kept == 0 {
            c.breakdown = Some((j + 1, r[(0, 0)], w.column(0).norm()));
            break;
        }
        c.q.columns_mut(j + 1, kept)
            .copy_from(&bo.qr.q.columns(0, kept));
        let below = extend_hessenberg(
            &mut c.h,
            j,
            &bo.c.columns(0, kept).into_owned(),
            &r.view((0, 0), (kept, kept)).into_owned(),
            &p.b.view((0, 0), (kept + 1, kept)).into_owned(),
        );
        c.info.below_subdiagonal = c.info.below_subdiagonal.max(below);
        let (_, est) = least_squares(&c.h, j + kept, rho);
        if let Some(bad) = est[j..].iter().find(|v| !v.is_finite()) {
            return Ok(Some(Stop::non_finite(
                *total,
                "least-squares estimate",
                *bad,
            )));
        }
        // The cycle ends at the first column whose estimate meets the threshold.
        let hit = est[j..].iter().position(|&e| sys.done(e));
        let used = hit.map_or(kept, |i| i + 1);
        hist.extend_from_slice(&est[j..j + used]);
        c.k = j + used;
        c.est = est[c.k - 1];
        if kept < steps {
            // The block's basis is numerically rank deficient past `kept` columns (an
            // ill-conditioned basis, or an invariant subspace): the cycle ends with what it
            // has and restarts.
            c.info.truncated = true;
        }
        if hit.is_some() || kept < steps {
            break;
        }
    }
    Ok(None)
}

/// The restart cycles until convergence, a stop, or an error (reported as `NonFinite`).
fn cycles(
    sys: &System<'_, f64>,
    x: &mut [f64],
    hist: &mut Vec<f64>,
    ca: &CaOptions,
    gs: GramSchmidt,
    rep: &mut CaReport,
) -> Stop {
    let n = sys.n();
    let m = ca.m;
    let mut r = vec![0.0; n];
    let mut rho = residual(sys, x, &mut r);
    hist.push(rho);
    if !rho.is_finite() {
        return Stop::non_finite(0, "<r, r>", rho);
    }
    if sys.done(rho) {
        return Stop::converged(0, rho, sys.b_norm);
    }
    let mut total = 0usize;
    let (mut gap_cycles, mut gap_restarts) = (0usize, 0usize);
    let mut stagnation = StagnationWatch::default();
    let stop = loop {
        if total >= sys.max_iter {
            break Stop::max_iterations(total, rho, sys.b_norm);
        }
        let arnoldi = ca.basis == Basis::Newton && rep.shifts.is_empty();
        let mut c = Cycle {
            q: DMatrix::zeros(n, m + 1),
            h: DMatrix::zeros(m + 1, m),
            k: 0,
            info: CycleInfo {
                kind: if arnoldi { "arnoldi" } else { "ca" },
                vectors: 0,
                columns: 0,
                blocks: 0,
                reductions: 1,
                syncs: 1,
                basis_cond: 1.0,
                below_subdiagonal: 0.0,
                tsqr: Vec::new(),
                restart_residual: f64::NAN,
                truncated: false,
            },
            breakdown: None,
            est: rho,
        };
        c.q.set_column(0, &DVector::from_iterator(n, r.iter().map(|v| v / rho)));
        let cycle_start = rho;
        let early = if arnoldi {
            arnoldi_cycle(sys, &mut c, m, gs, rho, &mut total, hist)
        } else {
            match ca_cycle(sys, &mut c, ca, rep, rho, &mut total, hist) {
                Ok(s) => s,
                Err(e) => Some(Stop::non_finite(
                    total,
                    &format!("CA-GMRES block ({e})"),
                    f64::NAN,
                )),
            }
        };
        if let Some(stop) = early {
            rep.cycles.push(c.info);
            break stop;
        }
        // x += Q[:, :k] y.
        if c.k > 0 {
            let (y, _) = least_squares(&c.h, c.k, rho);
            let z = c.q.columns(0, c.k) * DVector::from_vec(y);
            for (xi, zi) in x.iter_mut().zip(z.iter()) {
                *xi += zi;
            }
        }
        if arnoldi && c.k > 0 && c.breakdown.is_none() {
            let hk = c.h.view((0, 0), (c.k, c.k)).into_owned();
            match ritz_values(&hk) {
                Ok(ritz) => {
                    rep.shifts = newton_shifts(&ritz, ca.s);
                    // The spectral radius estimate scales the Newton basis.
                    let radius = ritz.iter().fold(0.0f64, |m, z| m.max(z.re.hypot(z.im)));
                    if radius > 0.0 && radius.is_finite() {
                        rep.scale = radius;
                    }
                }
                Err(e) => {
                    rep.cycles.push(c.info);
                    break Stop::non_finite(total, &format!("Ritz values ({e})"), f64::NAN);
                }
            }
        }
        rho = residual(sys, x, &mut r);
        c.info.columns = c.k;
        c.info.restart_residual = rho;
        let full = c.info.vectors == m || c.info.truncated;
        rep.cycles.push(c.info);
        if !rho.is_finite() {
            break Stop::non_finite(total, "<r, r>", rho);
        }
        if sys.done(rho) {
            break Stop::converged(total, rho, sys.b_norm);
        }
        if let Some((col, value, scale)) = c.breakdown {
            let mut s = Stop::breakdown(total, "R_kk", value, scale);
            s.detail = format!(
                "{} (column {col} of the cycle: the new Krylov vector lies in the span of \
                 the basis)",
                s.detail
            );
            break s;
        }
        if sys.done(c.est) {
            // The estimate converged, the true residual did not.
            if rho > 0.5 * cycle_start {
                gap_cycles += 1;
            }
            if gap_cycles >= MAX_GAP_RESTARTS || total >= sys.max_iter {
                break Stop::converged(total, c.est, sys.b_norm);
            }
            gap_restarts += 1;
        }
        if let Some(stop) =
            stagnation.after_cycle(full && total < sys.max_iter, cycle_start, rho, total, m)
        {
            break stop;
        }
    };
    Stop {
        restarts: gap_restarts,
        replacements: gap_restarts,
        ..stop
    }
}

#[cfg(test)]
mod tests {
    use super::super::tsqr::Tsqr;
    use super::*;
    use crate::base::StopReason;
    use crate::matrix::generators::convection_diffusion_2d;

    fn problem() -> (Csr<f64>, Vec<f64>) {
        let a = convection_diffusion_2d::<f64>(10, 5.0);
        let b = (0..a.nrows())
            .map(|i| 1.0 + (i as f64 * 0.3).sin())
            .collect();
        (a, b)
    }

    #[test]
    fn every_tsqr_and_basis_converges_and_the_true_residual_confirms_it() {
        let (a, b) = problem();
        let opts = SolveOptions {
            rtol: 1e-10,
            ..Default::default()
        };
        for tsqr in Tsqr::ALL {
            for basis in [Basis::Monomial, Basis::Newton] {
                let ca = CaOptions {
                    s: 4,
                    m: 12,
                    basis,
                    tsqr,
                };
                let sol = solve(&a, &b, None, &opts, &ca).unwrap();
                let r = &sol.report;
                assert!(r.converged, "{tsqr:?} {basis:?}: {}", r.reason_detail);
                assert!(r.relative_residual <= 1e-10, "{tsqr:?} {basis:?}");
                assert_eq!(
                    r.history.len() - 1,
                    sol.ca.cycles.iter().map(|c| c.columns).sum::<usize>()
                );
                assert!(sol.ca.cycles.iter().all(|c| c.restart_residual.is_finite()));
                // The last estimate and the last restart residual agree to rounding.
                let est = *r.history.last().unwrap();
                let last = sol.ca.cycles.last().unwrap().restart_residual;
                assert!(
                    (est - last).abs() <= 1e-3 * last + 1e-14 * r.b_norm,
                    "{est} {last}"
                );
                assert_eq!(basis == Basis::Newton, !sol.ca.shifts.is_empty());
            }
        }
    }

    #[test]
    fn the_iteration_limit_caps_the_last_block() {
        let (a, b) = problem();
        let opts = SolveOptions {
            rtol: 1e-14,
            max_iter: 10,
            ..Default::default()
        };
        let ca = CaOptions {
            s: 4,
            m: 8,
            basis: Basis::Newton,
            tsqr: Tsqr::CholQr2,
        };
        let sol = solve(&a, &b, None, &opts, &ca).unwrap();
        assert_eq!(sol.report.reason, StopReason::MaxIterations);
        assert_eq!(sol.report.iterations, 10);
        // 8 Arnoldi steps, then one block cut to the 2 steps left.
        assert_eq!(sol.ca.cycles.len(), 2);
        assert_eq!(sol.ca.cycles[1].vectors, 2);
        assert!(sol.ca.reductions_per_cycle.is_none());
    }
}
