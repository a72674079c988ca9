//! The GPU's side of the CA-GMRES cycle logic ([`CaBackend`]): the matrix powers, BOrth and
//! TSQR steps of one block as launches on the [`CaSystem`], the deferred cycles' readbacks,
//! and the checks of what comes back (the cycle logic itself is the CPU reference's,
//! [`crate::cpu::cagmres::run_cycles`]).

use nalgebra::DMatrix;

use super::layout;
use super::system::{self, CaSystem, NO_X, T_RSQRT};
use crate::base::Tsqr;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::cpu::cagmres::leja::Shift;
use crate::cpu::cagmres::powers::{basis_change, step_coefficients};
use crate::cpu::cagmres::tsqr::{
    TsqrReport, cholesky, positive_diagonal, right_upper_inverse, svqr_r,
};
use crate::cpu::cagmres::tsqr::{borth_reductions, fuses_second_pass};
use crate::cpu::cagmres::{BlockResult, CaBackend, Collected};
use crate::solvers::driver::Run;

/// The GPU's side of [`CaBackend`]: the system, the powers coefficients last uploaded, and
/// the run the history is forwarded to.
pub(super) struct GpuBackend<'s, 'e, 'm, T> {
    sys: &'s CaSystem<'e, T>,
    pow: Option<Vec<f64>>,
    run: &'s mut Run<'m>,
    /// A restart was recorded (`record_restart`) and comes back with the next `collect`.
    restart_pending: bool,
    /// Basis vectors past q₀ left by a discarded cycle (`discard`): the only ones of the
    /// basis still from one cycle.
    pub(super) discarded: Option<usize>,
}

impl<'s, 'e, 'm, T: Scalar> GpuBackend<'s, 'e, 'm, T> {
    /// A backend on `sys` forwarding its history to `run`, before any powers coefficients.
    pub(super) fn new(sys: &'s CaSystem<'e, T>, run: &'s mut Run<'m>) -> Self {
        GpuBackend {
            sys,
            pow: None,
            run,
            restart_pending: false,
            discarded: None,
        }
    }

    /// C ((j+1) × steps, leading dimension j+1) from a readback `v` of the cycle buffer from
    /// `lay.c`; a non-finite entry is an error naming the basis.
    fn coefficients(&self, v: &[f64], j: usize, steps: usize) -> Result<DMatrix<f64>> {
        let c = DMatrix::from_fn(j + 1, steps, |i, l| v[i + (j + 1) * l]);
        finite(&c)?;
        Ok(c)
    }

    /// C and R of a Gram–Schmidt TSQR block from a readback `v` of the cycle buffer from
    /// index `from`: C at `at.c` (leading dimension j+1), R's upper part at `at.r` (leading
    /// dimension s), its diagonal the square roots of the norms² at `at.nrm`.
    fn gs_block(
        &self,
        v: &[f64],
        from: usize,
        at: layout::Slots,
        j: usize,
        steps: usize,
    ) -> Result<(DMatrix<f64>, DMatrix<f64>)> {
        let s = self.sys.s;
        let (c0, r0, n0) = (at.c - from, at.r - from, at.nrm - from);
        let c = DMatrix::from_fn(j + 1, steps, |i, l| v[c0 + i + (j + 1) * l]);
        finite(&c)?;
        let r = DMatrix::from_fn(steps, steps, |l, k| match l.cmp(&k) {
            std::cmp::Ordering::Less => v[r0 + l + s * k],
            std::cmp::Ordering::Equal => v[n0 + k].max(0.0).sqrt(),
            std::cmp::Ordering::Greater => 0.0,
        });
        finite(&r)?;
        Ok((c, r))
    }

    /// Q = W T on the device after writing T (an upload; W's launches are submitted first).
    fn apply_t(&self, w0: usize, steps: usize, t: &DMatrix<f64>) -> Result<()> {
        let sys = self.sys;
        sys.write(sys.lay.t, t.as_slice())?;
        sys.record_update(0, 0, w0, steps, 0, sys.lay.t, NO_X);
        Ok(())
    }

    /// R of the Gram matrix `g` by Cholesky, or by SVQR when Cholesky fails (the reason).
    fn factor(g: &DMatrix<f64>, n: usize) -> (DMatrix<f64>, Option<String>) {
        match cholesky(g, n) {
            Ok(r) => (r, None),
            Err(why) => (svqr_r(g), Some(why)),
        }
    }
}

/// Launches of a deferred cycle recorded before they are submitted (without waiting): an
/// Arnoldi cycle of m = 64 is 640 launches, which the GPU waited for while the host recorded
/// and submitted them all at once (a 70-iteration CA(8, 64) solve at n = 1e4 on an H200:
/// 16–18 ms, 14 ms submitting every 40; BENCHMARKS); a submit costs the host 15–40 µs.
const SUBMIT_EVERY: usize = 40;

/// Whether a block orthogonalised by `tsqr` needs no host value before its cycle ends: the
/// Gram–Schmidt TSQRs finish every reduction on the device, CholQR and CholQR2 factor their
/// Gram matrix on the device (`ca_cholqr`; a failed Cholesky sends the cycle back to the
/// host), so a cycle of them is recorded whole and read back once (SVQR's eigen-decomposition
/// and CAQR's stack QR need the host).
pub(super) fn defers(tsqr: Tsqr) -> bool {
    matches!(
        tsqr,
        Tsqr::Mgs | Tsqr::Cgs | Tsqr::Cgs2 | Tsqr::CholQr | Tsqr::CholQr2
    )
}

/// A block's result with its TSQR report (the per-block orthogonality is not measured here).
pub(crate) fn block_result(
    requested: Tsqr,
    used: Tsqr,
    fallback_reason: Option<String>,
    steps: usize,
    c: DMatrix<f64>,
    r: DMatrix<f64>,
) -> BlockResult {
    let report = TsqrReport {
        requested,
        used,
        fallback_reason,
        // Measured by the CPU reference and by `tsqr_block`; a solve reports the
        // orthogonality of its last basis instead (`orthogonality_loss`).
        orth_error: f64::NAN,
        reductions: requested.reductions(steps),
        host_syncs: requested.host_syncs(),
    };
    BlockResult {
        c,
        r,
        reductions: 2 + report.reductions,
        report,
    }
}

pub(crate) fn finite(m: &DMatrix<f64>) -> Result<()> {
    match m.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(KrylovError::NonFinite {
            what: "matrix powers basis",
            index,
        }),
        None => Ok(()),
    }
}

impl<T: Scalar> CaBackend for GpuBackend<'_, '_, '_, T> {
    fn restart(&mut self) -> Result<f64> {
        self.sys.record_residual();
        let rr = self.sys.read(self.sys.lay.rr, 1)?[0];
        Ok(rr.sqrt())
    }

    fn start_basis(&mut self, _rho: f64) -> Result<()> {
        // q₀ = r/√(‖r‖²) with the ‖r‖² the device finished.
        let rr = self.sys.lay.rr;
        self.sys.record_update(0, 0, 0, 1, 0, rr, T_RSQRT | NO_X);
        Ok(())
    }

    fn fuses_restart(&self, tsqr: Tsqr) -> bool {
        defers(tsqr)
    }

    fn record_restart(&mut self) -> Result<()> {
        self.sys.record_residual();
        self.start_basis(f64::NAN)?;
        self.restart_pending = true;
        Ok(())
    }

    fn powers(
        &mut self,
        j: usize,
        steps: usize,
        shifts: &[Shift],
        sigma: f64,
    ) -> Result<DMatrix<f64>> {
        let coef = step_coefficients(steps, shifts, sigma);
        // The coefficients of a cycle are the same for every block: uploaded when they change.
        let known = self
            .pow
            .as_ref()
            .is_some_and(|p| p.len() >= coef.len() && p[..coef.len()] == coef[..]);
        if !known {
            self.sys.write(self.sys.lay.pow, &coef)?;
            self.pow = Some(coef);
        }
        for k in 0..steps {
            let (src, dst) = (j + k, j + k + 1);
            self.sys
                .record_powers(src, dst, layout::powers_prev(j, k), k);
        }
        Ok(basis_change(steps, shifts, sigma))
    }

    fn borth(&mut self, j: usize, steps: usize, tsqr: Tsqr) -> Result<BlockResult> {
        let sys = self.sys;
        let lay = sys.lay;
        let w0 = j + 1;
        let at = lay.eager();
        for pass in 0..2 {
            sys.record_projection(j, steps, pass, at);
        }
        let (mut used, mut fallback_reason) = (tsqr, None);
        let (c, r) = match tsqr {
            Tsqr::Mgs | Tsqr::Cgs | Tsqr::Cgs2 => {
                sys.record_tsqr_launches(w0, steps, tsqr, at);
                let v = sys.read(lay.c, lay.gram - lay.c)?;
                self.gs_block(&v, lay.c, at, j, steps)?
            }
            Tsqr::CholQr | Tsqr::CholQr2 | Tsqr::Svqr => {
                sys.record_tsqr_launches(w0, steps, tsqr, at);
                let v = sys.read(lay.c, lay.gram + steps * steps - lay.c)?;
                let c = self.coefficients(&v, j, steps)?;
                let g0 = lay.gram - lay.c;
                let g = DMatrix::from_fn(steps, steps, |i, l| v[g0 + i + steps * l]);
                finite(&g)?;
                let r1 = if tsqr == Tsqr::Svqr {
                    svqr_r(&g)
                } else {
                    let (r1, why) = Self::factor(&g, sys.n);
                    if let Some(why) = why {
                        used = Tsqr::Svqr;
                        fallback_reason = Some(format!(
                            "{why}: W is numerically rank deficient; CholQR2 starts with the \
                             same factorisation, so SVQR of the same Gram matrix"
                        ));
                    }
                    r1
                };
                self.apply_t(w0, steps, &right_upper_inverse(&r1))?;
                let r = if tsqr == Tsqr::CholQr2 {
                    sys.record_tsqr_launches(w0, steps, tsqr, at);
                    let v = sys.read(lay.gram, steps * steps)?;
                    let g2 = DMatrix::from_fn(steps, steps, |i, l| v[i + steps * l]);
                    finite(&g2)?;
                    let (r2, why) = Self::factor(&g2, sys.n);
                    if let Some(why) = why {
                        used = Tsqr::Svqr;
                        let before = fallback_reason.take().map_or(String::new(), |s| s + "; ");
                        fallback_reason = Some(format!("{before}second pass: {why}: SVQR"));
                    }
                    self.apply_t(w0, steps, &right_upper_inverse(&r2))?;
                    r2 * r1
                } else {
                    r1
                };
                (c, r)
            }
            Tsqr::Caqr => {
                // The leaves on the device; C and the stacked R_i in one readback.
                sys.record_tsqr_launches(w0, steps, tsqr, at);
                let (g, ss) = (sys.leaves, steps * steps);
                let v = sys.read(lay.c, lay.stack + g * ss - lay.c)?;
                let c = self.coefficients(&v, j, steps)?;
                let s0 = lay.stack - lay.c;
                let at =
                    |row: usize, col: usize| s0 + (row / steps) * ss + row % steps + steps * col;
                let stack = DMatrix::from_fn(g * steps, steps, |row, col| v[at(row, col)]);
                finite(&stack)?;
                let qr = stack.qr();
                let (mut qh, mut r) = (qr.q(), qr.r());
                positive_diagonal(&mut qh, &mut r);
                // Q̂ back into the stack in the leaves' layout, then Q = diag(Q_i) Q̂.
                let mut out = vec![0.0; g * ss];
                for row in 0..g * steps {
                    for col in 0..steps {
                        out[at(row, col) - s0] = qh[(row, col)];
                    }
                }
                sys.write(lay.stack, &out)?;
                sys.record_caqr_apply(w0, steps);
                (c, r)
            }
        };
        Ok(block_result(tsqr, used, fallback_reason, steps, c, r))
    }

    fn defers(&self, tsqr: Tsqr) -> bool {
        defers(tsqr)
    }

    fn record_borth(&mut self, j: usize, steps: usize, tsqr: Tsqr) -> Result<()> {
        self.sys.record_deferred_block(j, steps, tsqr);
        // The GPU starts on the cycle while the host records the rest of it.
        self.sys.submit_after(SUBMIT_EVERY)
    }

    fn collect(&mut self, blocks: &[(usize, usize)], tsqr: Tsqr) -> Result<Collected> {
        let sys = self.sys;
        let lay = sys.lay;
        let last = blocks.iter().map(|b| b.0).max().unwrap_or(0);
        let end = lay.blocks + (last + 1) * lay.per_block;
        // With a fused restart ‖r‖² comes in the same readback: from the buffer's start
        // (a few m² entries more than the blocks alone).
        let from = if self.restart_pending {
            lay.rr
        } else {
            lay.blocks
        };
        let v = sys.read(from, end - from)?;
        let rho = std::mem::take(&mut self.restart_pending).then(|| v[lay.rr - from].sqrt());
        let mut out = Vec::with_capacity(blocks.len());
        for &(j, steps) in blocks {
            let at = lay.slots_at(j, sys.s);
            let block = match tsqr {
                Tsqr::CholQr | Tsqr::CholQr2 => {
                    if v[at.flag - from] != 0.0 {
                        // A Cholesky failed on the device: the host redoes the cycle.
                        return Ok(Collected { rho, blocks: None });
                    }
                    let r_at = |base: usize| {
                        DMatrix::from_fn(steps, steps, |l, k| v[base - from + l + steps * k])
                    };
                    self.coefficients(&v[at.c - from..], j, steps)
                        .and_then(|c| {
                            let r1 = r_at(at.r);
                            let r = if tsqr == Tsqr::CholQr2 {
                                r_at(at.r2) * r1
                            } else {
                                r1
                            };
                            finite(&r)?;
                            Ok((c, r))
                        })
                }
                _ => self.gs_block(&v, from, at, j, steps),
            };
            out.push(block.map(|(c, r)| {
                let mut b = block_result(tsqr, tsqr, None, steps, c, r);
                if system::arnoldi_step(steps, tsqr) {
                    // An Arnoldi step: the norm came with BOrth's second pass
                    // (`record_arnoldi_second_pass`), no reduction of its own.
                    b.report.reductions = 0;
                    b.reductions = 2;
                } else if fuses_second_pass(tsqr) {
                    // CholQR's first Gram matrix came with BOrth's second pass
                    // (`record_second_pass_cholqr`), as the CPU reference's `borth` counts.
                    b.report.reductions -= 1;
                    b.reductions = borth_reductions(tsqr, steps);
                }
                b
            }));
        }
        Ok(Collected {
            rho,
            blocks: Some(out),
        })
    }

    fn update_x(&mut self, y: &[f64]) -> Result<()> {
        let sys = self.sys;
        sys.write(sys.lay.y, y)?;
        sys.record_update_x(y.len());
        Ok(())
    }

    fn discard(&mut self, recorded: usize) {
        self.discarded = Some(recorded);
    }

    fn checkpoint(&mut self, hist: &[f64]) -> bool {
        for &h in &hist[self.run.history.len().min(hist.len())..] {
            self.run.push(h);
        }
        self.run.monitor.cancelled()
    }
}
