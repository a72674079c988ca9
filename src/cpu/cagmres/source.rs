//! The blocks of one CA-GMRES cycle as the cycle logic ([`super::cycles`]) takes them: made
//! on demand, or recorded ahead on a backend that defers them and read back at once
//! ([`Source`]), and how many to record ahead ([`ahead_blocks`]).

use nalgebra::DMatrix;

use super::cycles::{BlockResult, CaBackend};
use super::leja::Shift;
use super::tsqr::Tsqr;
use crate::base::error::{KrylovError, Result};

/// The blocks of one cycle: made on demand (each block's powers, BOrth and TSQR, then the
/// host's decision) or, when the backend [`defers`](CaBackend::defers) the TSQR, recorded
/// ahead and read back at once, then handed out in the same order. A cycle predicted to
/// converge early records only its first blocks ([`ahead_blocks`]); should it need more,
/// the rest is recorded and read back when the first ones run out.
pub(super) struct Source {
    /// The cycle's TSQR, Newton shifts and scaling: every block of it is made with them.
    tsqr: Tsqr,
    shifts: Vec<Shift>,
    sigma: f64,
    queue: Option<std::collections::VecDeque<(DMatrix<f64>, Result<BlockResult>)>>,
    /// Blocks of the plan not recorded yet.
    rest: Vec<(usize, usize)>,
    /// Basis vectors recorded by deferred blocks (the work done, used or not).
    pub(super) recorded: usize,
    /// Basis vectors made on demand.
    pub(super) eager: usize,
    /// Readbacks of deferred blocks.
    pub(super) collects: usize,
}

impl Source {
    /// Whether the blocks come from a deferred readback.
    pub(super) fn deferred(&self) -> bool {
        self.queue.is_some()
    }

    /// Blocks made on demand from the start, with `tsqr`, `shifts` and `sigma`.
    pub(super) fn on_demand(tsqr: Tsqr, shifts: &[Shift], sigma: f64) -> Source {
        Source {
            tsqr,
            shifts: shifts.to_vec(),
            sigma,
            queue: None,
            rest: Vec::new(),
            recorded: 0,
            eager: 0,
            collects: 0,
        }
    }

    /// `plan`: the blocks `(j, steps)` the cycle will ask for, if none stops it early, of
    /// which the first `ahead` are recorded at once.
    pub(super) fn new<B: CaBackend>(
        be: &mut B,
        plan: &[(usize, usize)],
        ahead: usize,
        tsqr: Tsqr,
        shifts: &[Shift],
        sigma: f64,
    ) -> Result<Source> {
        let mut src = Self::on_demand(tsqr, shifts, sigma);
        if !plan.is_empty() && be.defers(tsqr) {
            src.record(be, plan, ahead)?;
        }
        Ok(src)
    }

    /// The restart, q₀ and the cycle's first `ahead` blocks recorded together and read back
    /// once (the backend [`fuses_restart`](CaBackend::fuses_restart) for `tsqr`; `plan` not
    /// empty): ‖r‖ and the blocks.
    pub(super) fn after_restart<B: CaBackend>(
        be: &mut B,
        plan: &[(usize, usize)],
        ahead: usize,
        tsqr: Tsqr,
        shifts: &[Shift],
        sigma: f64,
    ) -> Result<(f64, Source)> {
        be.record_restart()?;
        let mut src = Self::on_demand(tsqr, shifts, sigma);
        let rho = src.record(be, plan, ahead)?;
        let rho = rho.ok_or_else(|| {
            KrylovError::Gpu("CA-GMRES: the fused restart residual was not read back".into())
        })?;
        Ok((rho, src))
    }

    /// Records the first `ahead` (at least one) blocks of `plan`, keeps the others for later,
    /// and reads the recorded ones back once; returns what [`CaBackend::collect`] read of a
    /// recorded restart.
    fn record<B: CaBackend>(
        &mut self,
        be: &mut B,
        plan: &[(usize, usize)],
        ahead: usize,
    ) -> Result<Option<f64>> {
        let (tsqr, sigma) = (self.tsqr, self.sigma);
        let (now, later) = plan.split_at(ahead.clamp(1, plan.len()));
        let mut bs = Vec::with_capacity(now.len());
        for &(j, steps) in now {
            bs.push(be.powers(j, steps, &self.shifts, sigma)?);
            be.record_borth(j, steps, tsqr)?;
        }
        self.recorded += now.iter().map(|p| p.1).sum::<usize>();
        self.rest = later.to_vec();
        self.collects += 1;
        let got = be.collect(now, tsqr)?;
        // `None`: a block needs the host after all; the blocks are made on demand from the
        // first of these (its start vector is intact), the deferred work counted.
        self.queue = got
            .blocks
            .map(|results| bs.into_iter().zip(results).collect());
        if self.queue.is_none() {
            self.rest.clear();
        }
        Ok(got.rho)
    }

    /// The block from basis vector j: its basis change matrix B and its BOrth + TSQR.
    pub(super) fn next<B: CaBackend>(
        &mut self,
        be: &mut B,
        j: usize,
        steps: usize,
    ) -> Result<(DMatrix<f64>, BlockResult)> {
        if self.queue.as_ref().is_some_and(|q| q.is_empty()) && !self.rest.is_empty() {
            // The cycle outran the blocks recorded ahead: the rest of its plan.
            let rest = std::mem::take(&mut self.rest);
            self.record(be, &rest, rest.len())?;
        }
        match &mut self.queue {
            Some(q) => {
                let (b, r) = q.pop_front().ok_or_else(|| {
                    KrylovError::Gpu("CA-GMRES: a deferred block was not recorded".into())
                })?;
                Ok((b, r?))
            }
            None => {
                self.eager += steps;
                let b = be.powers(j, steps, &self.shifts, self.sigma)?;
                Ok((b, be.borth(j, steps, self.tsqr)?))
            }
        }
    }
}

/// What [`ahead_blocks`] needs of the cycle before: ‖r‖ at its start, its last estimate,
/// the columns it used.
#[derive(Debug, Clone, Copy)]
pub(super) struct Previous {
    pub start: f64,
    pub est: f64,
    pub columns: usize,
}

/// How many blocks of a cycle's `plan` to record ahead: all of them, unless the cycle
/// before (`prev`) converged fast enough that this one should meet the threshold early. The
/// prediction extrapolates the last cycle's average rate per basis vector from its last
/// estimate, with a margin of twice the vectors plus one block: GMRES converges faster
/// late in a cycle than early, and a short prediction costs one more round trip, not a
/// wrong result.
pub(super) fn ahead_blocks(plan: &[(usize, usize)], prev: Option<Previous>, tau: f64) -> usize {
    let all = plan.len();
    let Some(Previous {
        start,
        est,
        columns,
    }) = prev
    else {
        return all;
    };
    if columns == 0 || !(est > tau && est < start && start.is_finite() && tau > 0.0) {
        return all;
    }
    let rate = (est / start).ln() / columns as f64;
    let need = (tau / est).ln() / rate;
    if !need.is_finite() || need <= 0.0 {
        return all;
    }
    let mut vectors = 0usize;
    let want = 2.0 * need;
    for (i, &(_, steps)) in plan.iter().enumerate() {
        if vectors as f64 >= want {
            // One block more than the prediction's.
            return (i + 1).min(all);
        }
        vectors += steps;
    }
    all
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
