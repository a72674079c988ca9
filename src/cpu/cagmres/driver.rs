//! The CA-GMRES(s, m) driver: restart cycles of blocks (see the module docs of
//! [`super`]), on the common CPU driver [`crate::cpu::run`] (validation, b = 0, the true
//! residual guard, cancellation).

use nalgebra::{DMatrix, DVector};

use super::hessenberg::{extend_hessenberg, least_squares};
use super::leja::Shift;
use super::leja::{newton_shifts, ritz_values};
use super::powers::matrix_powers_with;
use super::tsqr::{Tsqr, TsqrReport, borth};
use super::{Basis, CaOptions, CaReport, CaSolution, CycleInfo};
use crate::base::error::{KrylovError, Result};
use crate::base::{Method, Precond, SolveOptions, Variant};
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
    if opts.side == crate::base::Side::Left && opts.precond != Precond::None {
        return Err(KrylovError::InvalidOption(format!(
            "CA-GMRES applies --precond {} on the right (x = M⁻¹y); --side left is not built \
             for it",
            opts.precond
        )));
    }
    if ca.s > a.nrows() {
        return Err(KrylovError::InvalidOption(format!(
            "CA-GMRES block size s = {} exceeds the matrix order {}",
            ca.s,
            a.nrows()
        )));
    }
    let mut rep = CaReport {
        options: *ca,
        shifts: Vec::new(),
        cycles: Vec::new(),
        scale: operator_scale(a, opts.precond != Precond::None),
        reductions_per_cycle: None,
        syncs_per_cycle: None,
    };
    // `ca` is what runs: the options say so too (their CA fields are validated with them).
    let opts = &SolveOptions {
        s_step: ca.s,
        restart: ca.m,
        basis: ca.basis,
        tsqr: ca.tsqr,
        ..opts.clone()
    };
    let sol = crate::cpu::run(
        a,
        b,
        x0,
        opts,
        Method::CaGmres,
        Variant::Classical,
        |sys, x, hist| cycles(sys, x, hist, ca, &mut rep),
    )?;
    summarise(&mut rep);
    let mut report = sol.report;
    report.notes.insert(
        0,
        format!(
            "CA-GMRES(s = {}, m = {}) CPU reference: {} basis, TSQR {}; iterations count \
             the basis vectors the solution used (`cagmres.cycles` the ones generated)",
            ca.s, ca.m, ca.basis, ca.tsqr
        ),
    );
    // The algorithm's counts (the CPU itself launches nothing): over all cycles run.
    let (red, syncs): (usize, usize) = rep
        .cycles
        .iter()
        .fold((0, 0), |(r, y), c| (r + c.reductions, y + c.syncs));
    if report.iterations > 0 {
        report.reductions_per_iteration = red as f64 / report.iterations as f64;
        report.syncs_per_iteration = syncs as f64 / report.iterations as f64;
    }
    report.cycles = Some(rep.cycles.len());
    if !rep.cycles.is_empty() {
        report.syncs_per_cycle = Some(syncs as f64 / rep.cycles.len() as f64);
    }
    report.cagmres = Some(rep.clone());
    Ok(CaSolution {
        x: sol.x,
        report,
        ca: rep,
    })
}

/// Fills `reductions_per_cycle` and `syncs_per_cycle`: the averages over the CA cycles that
/// ran all m/s blocks.
pub(crate) fn summarise(rep: &mut CaReport) {
    let blocks = rep.options.m / rep.options.s.max(1);
    let full: Vec<&CycleInfo> = rep
        .cycles
        .iter()
        .filter(|c| c.kind == "ca" && c.blocks == blocks)
        .collect();
    if !full.is_empty() {
        let avg = |f: fn(&CycleInfo) -> usize| {
            full.iter().map(|c| f(c) as f64).sum::<f64>() / full.len() as f64
        };
        rep.reductions_per_cycle = Some(avg(|c| c.reductions));
        rep.syncs_per_cycle = Some(avg(|c| c.syncs));
    }
}

/// [`crate::cpu::solve`]'s CA-GMRES arm for any precision: the reference computes in f64
/// (A, b and x0 converted), x is returned in `T`, and the report says so when T is f32. Its
/// CA parameters are [`SolveOptions::ca`].
pub(crate) fn solve_as<T: crate::base::Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
) -> Result<crate::base::Solution<T>> {
    let a64: Csr<f64> = a.cast()?;
    let b64: Vec<f64> = b.iter().map(|v| v.as_f64()).collect();
    let x64: Option<Vec<f64>> = x0.map(|x| x.iter().map(|v| v.as_f64()).collect());
    let sol = solve(&a64, &b64, x64.as_deref(), opts, &opts.ca())?;
    let mut report = sol.report;
    if T::PRECISION != crate::base::Precision::F64 {
        report.precision = T::PRECISION;
        report.notes.push(format!(
            "the CA-GMRES CPU reference computes in f64; x is returned in {}",
            T::PRECISION
        ));
    }
    Ok(crate::base::Solution {
        x: sol.x.iter().map(|&v| T::from_f64(v)).collect(),
        report,
    })
}

/// The monomial basis's scaling σ of the operator the cycles run on: ‖A‖_∞, or with a
/// preconditioner ‖A D⁻¹‖_∞ (D = diag(A); exact for Jacobi, the scale of A·M⁻¹ ≈ I's rows
/// for an incomplete factorisation; ‖A‖_∞ where a diagonal entry is zero). The Newton basis
/// replaces it after its first cycle by the largest |Ritz value| of A·M⁻¹.
pub(crate) fn operator_scale<T: crate::base::Scalar>(a: &Csr<T>, preconditioned: bool) -> f64 {
    if !preconditioned {
        return inf_norm(a);
    }
    let d = a.diagonal();
    if d.iter().any(|v| v.as_f64() == 0.0) {
        return inf_norm(a);
    }
    let norm = (0..a.nrows())
        .map(|i| {
            let (cols, vals) = a.row(i);
            cols.iter()
                .zip(vals)
                .map(|(&j, v)| (v.as_f64() / d[j as usize].as_f64()).abs())
                .sum::<f64>()
        })
        .fold(0.0f64, f64::max);
    if norm > 0.0 && norm.is_finite() {
        norm
    } else {
        1.0
    }
}

/// ‖A‖_∞ (1 for A = 0): the monomial basis's scaling, computed once on the host.
pub(crate) fn inf_norm<T: crate::base::Scalar>(a: &Csr<T>) -> f64 {
    let norm = (0..a.nrows())
        .map(|i| a.row(i).1.iter().map(|v| v.as_f64().abs()).sum::<f64>())
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
    /// from one readback (a non-finite block is an error of its own entry only); `None` when
    /// a block needs the host after all (a Cholesky failed on the device): the cycle is then
    /// run again block by block from its start vector.
    fn collect(
        &mut self,
        _blocks: &[(usize, usize)],
        _tsqr: Tsqr,
    ) -> Result<Option<Vec<Result<BlockResult>>>> {
        Err(KrylovError::Unsupported(
            "this CA-GMRES backend does not defer blocks".into(),
        ))
    }
    /// Called once per block with the history so far (the GPU forwards new entries to its
    /// monitor); returns whether the caller asked to stop.
    fn checkpoint(&mut self, _hist: &[f64]) -> bool {
        false
    }
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

/// The CPU reference's backend: the basis Q as an n × (m + 1) matrix, x, r and A.
struct CpuBackend<'s, 'a> {
    sys: &'s System<'a, f64>,
    x: &'s mut [f64],
    r: Vec<f64>,
    q: DMatrix<f64>,
}

impl CaBackend for CpuBackend<'_, '_> {
    fn restart(&mut self) -> Result<f64> {
        Ok(residual(self.sys, self.x, &mut self.r))
    }

    fn start_basis(&mut self, rho: f64) -> Result<()> {
        let n = self.r.len();
        self.q.set_column(
            0,
            &DVector::from_iterator(n, self.r.iter().map(|v| v / rho)),
        );
        Ok(())
    }

    fn powers(
        &mut self,
        j: usize,
        steps: usize,
        shifts: &[Shift],
        sigma: f64,
    ) -> Result<DMatrix<f64>> {
        let start: Vec<f64> = self.q.column(j).iter().copied().collect();
        // Right preconditioning: the powers of A·M⁻¹ (x = x0 + M⁻¹ Q y).
        let (a, m) = (self.sys.a, &self.sys.m);
        let mut z = vec![0.0; start.len()];
        let p = matrix_powers_with(
            start.len(),
            |x, y| {
                m.apply(x, &mut z);
                a.mul_vec_into(&z, y).map(|_| ())
            },
            &start,
            steps,
            shifts,
            sigma,
        )?;
        if let Some(index) = p.v.iter().position(|v| !v.is_finite()) {
            return Err(KrylovError::NonFinite {
                what: "matrix powers basis",
                index,
            });
        }
        self.q
            .columns_mut(j + 1, steps)
            .copy_from(&p.v.columns(1, steps));
        Ok(p.b)
    }

    fn borth(&mut self, j: usize, steps: usize, tsqr: Tsqr) -> Result<BlockResult> {
        let prev = self.q.columns(0, j + 1).into_owned();
        let w = self.q.columns(j + 1, steps).into_owned();
        let bo = borth(&prev, &w, tsqr)?;
        self.q.columns_mut(j + 1, steps).copy_from(&bo.qr.q);
        Ok(BlockResult {
            c: bo.c,
            r: bo.qr.r,
            report: bo.qr.report,
            reductions: bo.reductions,
        })
    }

    fn update_x(&mut self, y: &[f64]) -> Result<()> {
        let u = self.q.columns(0, y.len()) * DVector::from_column_slice(y);
        let mut z = vec![0.0; u.len()];
        self.sys.m.apply(u.as_slice(), &mut z);
        for (xi, zi) in self.x.iter_mut().zip(z.iter()) {
            *xi += zi;
        }
        Ok(())
    }
}

/// The blocks of one cycle: made on demand (each block's powers, BOrth and TSQR, then the
/// host's decision) or, when the backend [`defers`](CaBackend::defers) the TSQR, all recorded
/// at the cycle's start and read back once, then handed out in the same order.
struct Source {
    queue: Option<std::collections::VecDeque<(DMatrix<f64>, Result<BlockResult>)>>,
    /// Basis vectors recorded by the deferred blocks (the work done, used or not).
    recorded: usize,
    /// The deferred blocks came back needing the host: made again on demand.
    redone: bool,
}

impl Source {
    /// Whether the blocks were recorded ahead and read back at once.
    fn deferred(&self) -> bool {
        self.queue.is_some()
    }

    /// The one readback of a deferred cycle's blocks (also when they were then made again).
    fn extra_syncs(&self) -> usize {
        (self.deferred() || self.redone) as usize
    }

    /// `plan`: the blocks `(j, steps)` the cycle will ask for, if none stops it early.
    fn new<B: CaBackend>(
        be: &mut B,
        plan: &[(usize, usize)],
        tsqr: Tsqr,
        shifts: &[Shift],
        sigma: f64,
    ) -> Result<Source> {
        if plan.is_empty() || !be.defers(tsqr) {
            return Ok(Source {
                queue: None,
                recorded: 0,
                redone: false,
            });
        }
        let mut bs = Vec::with_capacity(plan.len());
        for &(j, steps) in plan {
            bs.push(be.powers(j, steps, shifts, sigma)?);
            be.record_borth(j, steps, tsqr)?;
        }
        let recorded = plan.iter().map(|p| p.1).sum();
        Ok(match be.collect(plan, tsqr)? {
            Some(results) => Source {
                queue: Some(bs.into_iter().zip(results).collect()),
                recorded,
                redone: false,
            },
            // Run the cycle again block by block (its start vector is intact); the deferred
            // work was done and is counted.
            None => Source {
                queue: None,
                recorded,
                redone: true,
            },
        })
    }

    /// The block from basis vector j: its basis change matrix B and its BOrth + TSQR.
    fn next<B: CaBackend>(
        &mut self,
        be: &mut B,
        j: usize,
        steps: usize,
        tsqr: Tsqr,
        shifts: &[Shift],
        sigma: f64,
    ) -> Result<(DMatrix<f64>, BlockResult)> {
        match &mut self.queue {
            Some(q) => {
                let (b, r) = q.pop_front().ok_or_else(|| {
                    KrylovError::Gpu("CA-GMRES: a deferred block was not recorded".into())
                })?;
                Ok((b, r?))
            }
            None => {
                let b = be.powers(j, steps, shifts, sigma)?;
                Ok((b, be.borth(j, steps, tsqr)?))
            }
        }
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
    /// Basis vectors recorded ahead by deferred blocks (0 when blocks are made on demand).
    recorded: usize,
    /// Whether the deferred blocks had to be made again on demand.
    redone: bool,
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
    m: usize,
    sigma: f64,
    rho: f64,
    total: &mut usize,
    hist: &mut Vec<f64>,
) -> Result<Option<Stop>> {
    let plan: Vec<(usize, usize)> = (0..m.min(ctl.max_iter.saturating_sub(*total)))
        .map(|i| (i, 1))
        .collect();
    let mut src = Source::new(be, &plan, Tsqr::Cgs2, &[], sigma)?;
    c.recorded += src.recorded;
    c.redone |= src.redone;
    // A deferred cycle's one readback of all its blocks.
    c.info.syncs += src.extra_syncs();
    for i in 0..m {
        if *total >= ctl.max_iter {
            break;
        }
        if be.checkpoint(hist) {
            return Ok(Some(cancelled(*total)));
        }
        let (_, bo) = src.next(be, i, 1, Tsqr::Cgs2, &[], sigma)?;
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

/// One CA cycle of m/s blocks with the shifts and scaling of `rep` (no shifts: monomial).
#[allow(clippy::too_many_arguments)]
fn ca_cycle<B: CaBackend>(
    be: &mut B,
    ctl: &Control,
    c: &mut Cycle,
    ca: &CaOptions,
    rep: &CaReport,
    rho: f64,
    total: &mut usize,
    hist: &mut Vec<f64>,
) -> Result<Option<Stop>> {
    let mut plan = Vec::new();
    let mut left = ctl.max_iter.saturating_sub(*total);
    for b in 0..ca.m / ca.s {
        let steps = ca.s.min(left);
        if steps == 0 {
            break;
        }
        plan.push((b * ca.s, steps));
        left -= steps;
    }
    let mut src = Source::new(be, &plan, ca.tsqr, &rep.shifts, rep.scale)?;
    c.recorded += src.recorded;
    c.redone |= src.redone;
    c.info.syncs += src.extra_syncs();
    for _ in 0..ca.m / ca.s {
        let steps = ca.s.min(ctl.max_iter.saturating_sub(*total));
        if steps == 0 {
            break;
        }
        if be.checkpoint(hist) {
            return Ok(Some(cancelled(*total)));
        }
        let j = c.k;
        let (b, bo) = src.next(be, j, steps, ca.tsqr, &rep.shifts, rep.scale)?;
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

/// The restart cycles until convergence, a stop, or an error (a non-finite block is
/// reported as `NonFinite`; other backend errors are returned).
pub(crate) fn run_cycles<B: CaBackend>(
    be: &mut B,
    ctl: &Control,
    hist: &mut Vec<f64>,
    ca: &CaOptions,
    rep: &mut CaReport,
) -> Result<Stop> {
    let m = ca.m;
    let mut rho = be.restart()?;
    hist.push(rho);
    if !rho.is_finite() {
        return Ok(Stop::non_finite(0, "<r, r>", rho));
    }
    if ctl.done(rho) {
        return Ok(Stop::converged(0, rho, ctl.b_norm));
    }
    let mut total = 0usize;
    let (mut gap_cycles, mut gap_restarts) = (0usize, 0usize);
    let mut stagnation = StagnationWatch::default();
    let stop = loop {
        if total >= ctl.max_iter {
            break Stop::max_iterations(total, rho, ctl.b_norm);
        }
        let arnoldi = ca.basis == Basis::Newton && rep.shifts.is_empty();
        let mut c = Cycle {
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
                recorded: 0,
            },
            breakdown: None,
            est: rho,
            recorded: 0,
            redone: false,
        };
        be.start_basis(rho)?;
        let cycle_start = rho;
        let early = if arnoldi {
            arnoldi_cycle(be, ctl, &mut c, m, rep.scale, rho, &mut total, hist)
        } else {
            ca_cycle(be, ctl, &mut c, ca, rep, rho, &mut total, hist)
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
        if let Some(stop) = early {
            c.info.recorded = if c.redone {
                c.recorded + c.info.vectors
            } else {
                c.recorded.max(c.info.vectors)
            };
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
                    c.info.recorded = if c.redone {
                        c.recorded + c.info.vectors
                    } else {
                        c.recorded.max(c.info.vectors)
                    };
                    rep.cycles.push(c.info);
                    break Stop::non_finite(total, &format!("Ritz values ({e})"), f64::NAN);
                }
            }
        }
        rho = be.restart()?;
        c.info.columns = c.k;
        c.info.restart_residual = rho;
        let full = c.info.vectors == m || c.info.truncated;
        c.info.recorded = if c.redone {
            c.recorded + c.info.vectors
        } else {
            c.recorded.max(c.info.vectors)
        };
        rep.cycles.push(c.info);
        if !rho.is_finite() {
            break Stop::non_finite(total, "<r, r>", rho);
        }
        if ctl.done(rho) {
            break Stop::converged(total, rho, ctl.b_norm);
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
        if ctl.done(c.est) {
            // The estimate converged, the true residual did not.
            if rho > 0.5 * cycle_start {
                gap_cycles += 1;
            }
            if gap_cycles >= MAX_GAP_RESTARTS || total >= ctl.max_iter {
                break Stop::converged(total, c.est, ctl.b_norm);
            }
            gap_restarts += 1;
        }
        if let Some(stop) =
            stagnation.after_cycle(full && total < ctl.max_iter, cycle_start, rho, total, m)
        {
            break stop;
        }
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

/// The CPU reference's cycles on [`crate::cpu::run`]: a [`CpuBackend`] over `sys` and `x`.
fn cycles(
    sys: &System<'_, f64>,
    x: &mut [f64],
    hist: &mut Vec<f64>,
    ca: &CaOptions,
    rep: &mut CaReport,
) -> Stop {
    let n = sys.n();
    let ctl = Control {
        tau: sys.tau,
        max_iter: sys.max_iter,
        b_norm: sys.b_norm,
    };
    let mut be = CpuBackend {
        sys,
        x,
        r: vec![0.0; n],
        q: DMatrix::zeros(n, ca.m + 1),
    };
    match run_cycles(&mut be, &ctl, hist, ca, rep) {
        Ok(stop) => stop,
        Err(e) => Stop::non_finite(0, &format!("CA-GMRES ({e})"), f64::NAN),
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
