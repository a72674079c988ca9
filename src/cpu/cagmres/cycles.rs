//! The CA-GMRES cycle logic, written once for the CPU reference and the GPU: restart
//! cycles of blocks (see [`super`]) over a [`CaBackend`] that does the n-length work, with
//! the blocks of a cycle made on demand or recorded ahead and read back once ([`Source`]).

use nalgebra::DMatrix;

use super::hessenberg::{extend_hessenberg, least_squares};
use super::leja::Shift;
use super::leja::{newton_shifts, ritz_values};
use super::source::{Previous, Source, ahead_blocks};
use super::tsqr::{Tsqr, TsqrReport};
use super::{Basis, CaOptions, CaReport, CycleInfo};
use crate::base::error::{KrylovError, Result};
use crate::cpu::Stop;
use crate::cpu::gmres::{MAX_GAP_RESTARTS, StagnationWatch};

/// σ_max/σ_min of `m` (∞ when singular).
pub(crate) fn cond(m: &DMatrix<f64>) -> f64 {
    let sv = m.clone().singular_values();
    let (lo, hi) = sv.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
        (lo.min(v), hi.max(v))
    });
    if lo > 0.0 { hi / lo } else { f64::INFINITY }
}

/// One block's BOrth + TSQR as the cycle logic needs it: W = Q_prev C + Q R.
#[derive(Debug, Clone)]
pub(crate) struct BlockResult {
    /// (j+1) × steps projection coefficients (both BOrth passes summed).
    pub c: DMatrix<f64>,
    /// steps × steps upper triangular R of the TSQR (non-negative diagonal).
    pub r: DMatrix<f64>,
    pub report: TsqrReport,
    /// Global reductions of the block: 2 (BOrth) + the TSQR's.
    pub reductions: usize,
}

/// The n-length work of CA-GMRES: nalgebra on the host ([`CpuBackend`]) or kernels on the
/// GPU (`solvers::cagmres`). The cycle logic ([`run_cycles`]) is written once over it, so
/// both take the same decisions from the same small matrices.
pub(crate) trait CaBackend {
    /// r = b − A x and ‖r‖ (one reduction, one host sync).
    fn restart(&mut self) -> Result<f64>;
    /// q₀ = r/ρ: the first basis vector of a cycle.
    fn start_basis(&mut self, rho: f64) -> Result<()>;
    /// The matrix powers from basis vector j into basis vectors j+1 ..= j+steps
    /// ([`matrix_powers`] with `shifts` and `sigma`); returns the basis change matrix B.
    fn powers(
        &mut self,
        j: usize,
        steps: usize,
        shifts: &[Shift],
        sigma: f64,
    ) -> Result<DMatrix<f64>>;
    /// BOrth of basis vectors j+1 ..= j+steps against 0 ..= j and the TSQR of the
    /// remainder, in place ([`borth`]). A non-finite block is a `NonFinite` error.
    fn borth(&mut self, j: usize, steps: usize, tsqr: Tsqr) -> Result<BlockResult>;
    /// x += Q[:, :k] y (k = y.len()).
    fn update_x(&mut self, y: &[f64]) -> Result<()>;
    /// Whether blocks orthogonalised by `tsqr` need no host value until their cycle ends (every
    /// reduction of BOrth and of the TSQR finished on the device): then a cycle's blocks are
    /// recorded first ([`Self::record_borth`]) and read back once ([`Self::collect`]),
    /// and the cycle logic takes the same decisions from them afterwards.
    fn defers(&self, _tsqr: Tsqr) -> bool {
        false
    }
    /// [`Self::borth`] recorded without reading anything back (for [`Self::defers`]).
    fn record_borth(&mut self, _j: usize, _steps: usize, _tsqr: Tsqr) -> Result<()> {
        Err(KrylovError::Unsupported(
            "this CA-GMRES backend does not defer blocks".into(),
        ))
    }
    /// The results of the blocks `(j, steps)` recorded by [`Self::record_borth`], in order,
    /// from one readback (a non-finite block is an error of its own entry only), with the
    /// restart residual when [`Self::record_restart`] was recorded before them; `blocks` is
    /// `None` when a block needs the host after all (a Cholesky failed on the device): those
    /// blocks are then made again one by one, from the first of them (its start vector is
    /// intact).
    fn collect(&mut self, _blocks: &[(usize, usize)], _tsqr: Tsqr) -> Result<Collected> {
        Err(KrylovError::Unsupported(
            "this CA-GMRES backend does not defer blocks".into(),
        ))
    }
    /// Whether the restart before a cycle whose blocks [`defer`](Self::defers) can be
    /// recorded with them ([`Self::record_restart`]) and read back with them: one host round
    /// trip per cycle instead of two.
    fn fuses_restart(&self, _tsqr: Tsqr) -> bool {
        false
    }
    /// [`Self::restart`] and [`Self::start_basis`] recorded without reading anything back:
    /// q₀ = r/‖r‖ with the ‖r‖ the device finished; ‖r‖ comes back with the next
    /// [`Self::collect`].
    fn record_restart(&mut self) -> Result<()> {
        Err(KrylovError::Unsupported(
            "this CA-GMRES backend does not fuse the restart".into(),
        ))
    }
    /// The blocks recorded with a fused restart are not used (that restart residual ended
    /// the solve): the basis now holds the first `recorded` vectors of a cycle that did not
    /// run, not the last cycle's.
    fn discard(&mut self, _recorded: usize) {}
    /// Called once per block with the history so far (the GPU forwards new entries to its
    /// monitor); returns whether the caller asked to stop.
    fn checkpoint(&mut self, _hist: &[f64]) -> bool {
        false
    }
}

/// What [`CaBackend::collect`] reads back at once.
pub(crate) struct Collected {
    /// ‖r‖ of the restart recorded before the blocks ([`CaBackend::record_restart`]).
    pub rho: Option<f64>,
    /// The blocks' results; `None` when the cycle must be made again on demand.
    pub blocks: Option<Vec<Result<BlockResult>>>,
}

/// What the cycle logic needs to know about the system besides the backend.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Control {
    /// The absolute threshold on ‖r‖.
    pub tau: f64,
    pub max_iter: usize,
    pub b_norm: f64,
}

impl Control {
    fn done(&self, v: f64) -> bool {
        v <= self.tau
    }
}

/// The state of one cycle while it runs.
struct Cycle {
    h: DMatrix<f64>,
    /// Columns of H filled.
    k: usize,
    info: CycleInfo,
    /// Set when the Krylov space became invariant (or the block numerically rank deficient).
    breakdown: Option<(usize, f64, f64)>,
    /// The last per-step estimate.
    est: f64,
}

/// ‖column l of W‖ before BOrth + TSQR, from W = Q_prev C + Q R (Pythagoras: no reduction).
fn block_column_norm(c: &DMatrix<f64>, r: &DMatrix<f64>, l: usize) -> f64 {
    (c.column(l).norm_squared() + r.column(l).norm_squared()).sqrt()
}

/// One standard Arnoldi (GMRES(m)) cycle with classical Gram–Schmidt twice: each step is a
/// block of one vector (the monomial matrix powers' one SpMV, BOrth's two projections, the
/// norm), so its counts are those of [`super::gmres_counts_per_cycle`] with CGS2: 3
/// reductions and 1 host sync per step. H's column i is σ·[C; R].
#[allow(clippy::too_many_arguments)]
fn arnoldi_cycle<B: CaBackend>(
    be: &mut B,
    ctl: &Control,
    c: &mut Cycle,
    src: &mut Source,
    m: usize,
    sigma: f64,
    rho: f64,
    total: &mut usize,
    hist: &mut Vec<f64>,
) -> Result<Option<Stop>> {
    for i in 0..m {
        if *total >= ctl.max_iter {
            break;
        }
        if be.checkpoint(hist) {
            return Ok(Some(cancelled(*total)));
        }
        let (_, bo) = src.next(be, i, 1)?;
        c.info.reductions += bo.reductions;
        c.info.syncs += (!src.deferred()) as usize;
        c.info.vectors += 1;
        *total += 1;
        c.k = i + 1;
        let (hnorm, w_norm) = (
            sigma * bo.r[(0, 0)],
            sigma * block_column_norm(&bo.c, &bo.r, 0),
        );
        for j in 0..=i {
            c.h[(j, i)] = sigma * bo.c[(j, 0)];
        }
        if crate::cpu::is_breakdown::<f64>(hnorm, w_norm) || w_norm == 0.0 {
            c.breakdown = Some((i + 1, hnorm, w_norm));
        } else {
            c.h[(i + 1, i)] = hnorm;
        }
        let (_, est) = least_squares(&c.h, c.k, rho);
        c.est = est[c.k - 1];
        hist.push(c.est);
        if !c.est.is_finite() {
            return Ok(Some(Stop::non_finite(
                *total,
                "least-squares estimate",
                c.est,
            )));
        }
        if c.breakdown.is_some() || ctl.done(c.est) {
            break;
        }
    }
    Ok(None)
}

fn cancelled(iterations: usize) -> Stop {
    Stop {
        iterations,
        reason: crate::base::StopReason::Cancelled,
        detail: format!("cancelled at iteration {iterations}"),
        restarts: 0,
        replacements: 0,
    }
}

/// One CA cycle of m/s blocks, made by `src` with the cycle's shifts and scaling (no shifts:
/// monomial).
#[allow(clippy::too_many_arguments)]
fn ca_cycle<B: CaBackend>(
    be: &mut B,
    ctl: &Control,
    c: &mut Cycle,
    src: &mut Source,
    ca: &CaOptions,
    rho: f64,
    total: &mut usize,
    hist: &mut Vec<f64>,
) -> Result<Option<Stop>> {
    for _ in 0..ca.m / ca.s {
        let steps = ca.s.min(ctl.max_iter.saturating_sub(*total));
        if steps == 0 {
            break;
        }
        if be.checkpoint(hist) {
            return Ok(Some(cancelled(*total)));
        }
        let j = c.k;
        let (b, bo) = src.next(be, j, steps)?;
        *total += steps;
        c.info.vectors += steps;
        c.info.blocks += 1;
        c.info.reductions += bo.reductions;
        if !src.deferred() {
            c.info.syncs += bo.report.host_syncs.max(1);
        }
        let r = &bo.r;
        // The basis [q_j, W] = Q⁺R⁺: its condition number.
        let mut rp = DMatrix::zeros(j + 1 + steps, steps + 1);
        rp[(j, 0)] = 1.0;
        rp.view_mut((0, 1), (j + 1, steps)).copy_from(&bo.c);
        rp.view_mut((j + 1, 1), (steps, steps)).copy_from(r);
        c.info.basis_cond = c.info.basis_cond.max(cond(&rp));
        c.info.tsqr.push(bo.report.clone());
        // Columns kept: up to the first numerically zero diagonal entry of R (SVQR, also as
        // a fallback, floors the singular values of W at √ε·σ_max).
        let rmax = (0..steps).fold(0.0f64, |m, l| m.max(r[(l, l)]));
        let tol = if bo.report.used == Tsqr::Svqr {
            2.0 * f64::EPSILON.sqrt() * rmax
        } else {
            10.0 * steps as f64 * f64::EPSILON * rmax
        };
        let kept = (0..steps)
            .position(|l| !r[(l, l)].is_finite() || r[(l, l)] <= tol)
            .unwrap_or(steps);
        if kept == 0 {
            c.breakdown = Some((j + 1, r[(0, 0)], block_column_norm(&bo.c, r, 0)));
            break;
        }
        let below = extend_hessenberg(
            &mut c.h,
            j,
            &bo.c.columns(0, kept).into_owned(),
            &r.view((0, 0), (kept, kept)).into_owned(),
            &b.view((0, 0), (kept + 1, kept)).into_owned(),
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
        let hit = est[j..].iter().position(|&e| ctl.done(e));
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

/// The blocks `(j, steps)` of the next cycle with `left` iterations left: m blocks of one
/// vector for an Arnoldi cycle, m/s blocks of s otherwise (the last one shorter, or fewer
/// blocks, near `max_iter`).
fn cycle_plan(arnoldi: bool, ca: &CaOptions, left: usize) -> Vec<(usize, usize)> {
    if arnoldi {
        return (0..ca.m.min(left)).map(|i| (i, 1)).collect();
    }
    let mut plan = Vec::new();
    let mut left = left;
    for b in 0..ca.m / ca.s {
        let steps = ca.s.min(left);
        if steps == 0 {
            break;
        }
        plan.push((b * ca.s, steps));
        left -= steps;
    }
    plan
}

/// A cycle that ran, waiting for the restart residual after it.
struct Ended {
    info: CycleInfo,
    /// ‖r‖ at the cycle's start (stagnation).
    start: f64,
    /// The cycle's last least-squares estimate.
    est: f64,
    breakdown: Option<(usize, f64, f64)>,
    /// Whether it generated all m vectors (or stopped on a rank-deficient block).
    full: bool,
}

/// The restart cycles until convergence, a stop, or an error (a non-finite block is
/// reported as `NonFinite`; other backend errors are returned).
///
/// Where the backend [`fuses_restart`](CaBackend::fuses_restart), the restart residual after
/// a cycle is recorded with the next cycle's blocks and read back with them, and the host
/// then decides on that residual first: one round trip per cycle. It does so unless the
/// cycle's own estimate already met the threshold or it broke down (the restart is then
/// most likely the last, and is read alone). When the residual ends the solve anyway (it met
/// the threshold although the estimate had not, stagnation, a non-finite value), the next
/// cycle's recorded blocks are discarded: work done, counted in the ended cycle's
/// `recorded`.
pub(crate) fn run_cycles<B: CaBackend>(
    be: &mut B,
    ctl: &Control,
    hist: &mut Vec<f64>,
    ca: &CaOptions,
    rep: &mut CaReport,
) -> Result<Stop> {
    let m = ca.m;
    let mut total = 0usize;
    let (mut gap_cycles, mut gap_restarts) = (0usize, 0usize);
    let mut stagnation = StagnationWatch::default();
    let mut ended: Option<Ended> = None;
    let stop = loop {
        let arnoldi = ca.basis == Basis::Newton && rep.shifts.is_empty();
        let tsqr = if arnoldi { Tsqr::Cgs2 } else { ca.tsqr };
        let plan = cycle_plan(arnoldi, ca, ctl.max_iter.saturating_sub(total));
        let settled = ended
            .as_ref()
            .is_some_and(|e| e.breakdown.is_some() || ctl.done(e.est));
        let fused = !plan.is_empty() && !settled && be.fuses_restart(tsqr);
        let prev = ended.as_ref().map(|e| Previous {
            start: e.start,
            est: e.est,
            columns: e.info.columns,
        });
        let ahead = ahead_blocks(&plan, prev, ctl.tau);
        let (rho, fused_src) = if fused {
            let (rho, src) = Source::after_restart(be, &plan, ahead, tsqr, &rep.shifts, rep.scale)?;
            (rho, Some(src))
        } else {
            (be.restart()?, None)
        };
        // The restart residual settles the cycle before it (or the initial guess).
        match ended.take() {
            None => {
                hist.push(rho);
                if !rho.is_finite() {
                    break Stop::non_finite(0, "<r, r>", rho);
                }
                if ctl.done(rho) {
                    break Stop::converged(0, rho, ctl.b_norm);
                }
            }
            Some(mut e) => {
                e.info.restart_residual = rho;
                let stop = settle(
                    ctl,
                    &e,
                    rho,
                    total,
                    m,
                    &mut gap_cycles,
                    &mut gap_restarts,
                    &mut stagnation,
                );
                if let (Some(_), Some(src)) = (&stop, &fused_src) {
                    e.info.recorded += src.recorded;
                    be.discard(src.recorded);
                }
                rep.cycles.push(e.info);
                if let Some(stop) = stop {
                    break stop;
                }
            }
        }
        if total >= ctl.max_iter {
            break Stop::max_iterations(total, rho, ctl.b_norm);
        }
        let mut c = Cycle {
            h: DMatrix::zeros(m + 1, m),
            k: 0,
            info: CycleInfo {
                kind: if arnoldi { "arnoldi" } else { "ca" },
                vectors: 0,
                columns: 0,
                blocks: 0,
                reductions: 1,
                // The restart's own readback, unless it came back with the blocks.
                syncs: (!fused) as usize,
                basis_cond: 1.0,
                below_subdiagonal: 0.0,
                tsqr: Vec::new(),
                restart_residual: f64::NAN,
                truncated: false,
                recorded: 0,
            },
            breakdown: None,
            est: rho,
        };
        let mut src = match fused_src {
            Some(src) => src,
            None => {
                be.start_basis(rho)?;
                Source::new(be, &plan, ahead, tsqr, &rep.shifts, rep.scale)?
            }
        };
        let early = if arnoldi {
            arnoldi_cycle(
                be, ctl, &mut c, &mut src, m, rep.scale, rho, &mut total, hist,
            )
        } else {
            ca_cycle(be, ctl, &mut c, &mut src, ca, rho, &mut total, hist)
        };
        let early = match early {
            Ok(s) => s,
            Err(KrylovError::NonFinite { what, .. }) => {
                Some(Stop::non_finite(total, what, f64::NAN))
            }
            Err(e) => Some(Stop::non_finite(
                total,
                &format!("CA-GMRES block ({e})"),
                f64::NAN,
            )),
        };
        // The deferred readbacks (one, the first fused with the restart's; two when the
        // cycle outran its blocks recorded ahead), and all the vectors computed.
        c.info.syncs += src.collects;
        c.info.recorded = src.recorded + src.eager;
        if let Some(stop) = early {
            rep.cycles.push(c.info);
            break stop;
        }
        // x += Q[:, :k] y.
        if c.k > 0 {
            let (y, _) = least_squares(&c.h, c.k, rho);
            be.update_x(&y)?;
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
        c.info.columns = c.k;
        let full = c.info.vectors == m || c.info.truncated;
        ended = Some(Ended {
            info: c.info,
            start: rho,
            est: c.est,
            breakdown: c.breakdown,
            full,
        });
    };
    // `iterations` are the basis vectors the solution used (one history entry each, as GMRES
    // counts its steps); a block whose estimate met the threshold early generated more.
    let used = hist.len().saturating_sub(1);
    let mut detail = stop.detail.clone();
    if used != total {
        detail = format!(
            "{} ({total} basis vectors generated, {used} used)",
            detail.replace(&format!("iteration {total}"), &format!("iteration {used}"))
        );
    }
    Ok(Stop {
        iterations: used,
        detail,
        restarts: gap_restarts,
        replacements: gap_restarts,
        ..stop
    })
}

/// What the restart residual `rho` after cycle `e` decides: a stop, or `None` to go on.
#[allow(clippy::too_many_arguments)]
fn settle(
    ctl: &Control,
    e: &Ended,
    rho: f64,
    total: usize,
    m: usize,
    gap_cycles: &mut usize,
    gap_restarts: &mut usize,
    stagnation: &mut StagnationWatch,
) -> Option<Stop> {
    if !rho.is_finite() {
        return Some(Stop::non_finite(total, "<r, r>", rho));
    }
    if ctl.done(rho) {
        return Some(Stop::converged(total, rho, ctl.b_norm));
    }
    if let Some((col, value, scale)) = e.breakdown {
        let mut s = Stop::breakdown(total, "R_kk", value, scale);
        s.detail = format!(
            "{} (column {col} of the cycle: the new Krylov vector lies in the span of the \
             basis)",
            s.detail
        );
        return Some(s);
    }
    if ctl.done(e.est) {
        // The estimate converged, the true residual did not.
        if rho > 0.5 * e.start {
            *gap_cycles += 1;
        }
        if *gap_cycles >= MAX_GAP_RESTARTS || total >= ctl.max_iter {
            return Some(Stop::converged(total, e.est, ctl.b_norm));
        }
        *gap_restarts += 1;
    }
    stagnation.after_cycle(e.full && total < ctl.max_iter, e.start, rho, total, m)
}
