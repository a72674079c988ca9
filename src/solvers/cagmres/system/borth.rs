//! A CA-GMRES block's orthogonalisation recorded on the device: BOrth's projections, the
//! TSQR variants' launches (Gram–Schmidt, CholQR on the device for deferred cycles, CAQR's
//! leaves), and a deferred block whole. The rest of [`CaSystem`] (storage, the matrix
//! powers, the restart, x's update, reads) is in `system.rs`.

use super::{
    ACC_ADD, ACC_ROWS, ACC_SKIP_LAST, ACC_STORE, CaSystem, NO_X, PYTHAG, T_IDENTITY, T_RSQRT,
    Which, arnoldi_step,
};
use crate::base::scalar::Scalar;
use crate::gpu::kernels::Params;
use crate::solvers::cagmres::layout::Slots;

/// `ca_cholqr`'s `CA_FLAG_PIP`: D = [Q, W]ᵀW in, G = WᵀW − C₂ᵀC₂ factored, C₂·T out.
const CHOLQR_PIP: u32 = 2;

impl<T: Scalar> CaSystem<'_, T> {
    /// A block of a deferred cycle, all on the device: BOrth's two passes and the TSQR, its C,
    /// R (and CholQR2's second R, a CholQR's failure flag) in the block's own slots.
    ///
    /// A block of one vector with a Gram–Schmidt TSQR (an Arnoldi step) runs its second pass
    /// and its normalisation in one reduction ([`Self::record_arnoldi_second_pass`]); with
    /// CholQR and CholQR2 the second pass and the first CholQR share one reduction and one
    /// update ([`Self::record_second_pass_cholqr`]).
    pub(crate) fn record_deferred_block(&self, j: usize, steps: usize, tsqr: crate::base::Tsqr) {
        use crate::base::Tsqr;
        let at = self.lay.slots_at(j, self.s);
        let w0 = j + 1;
        if arnoldi_step(steps, tsqr) {
            self.record_projection(j, 1, 0, at);
            self.record_arnoldi_second_pass(j, at);
            return;
        }
        self.record_projection(j, steps, 0, at);
        match tsqr {
            Tsqr::CholQr | Tsqr::CholQr2 => {
                self.record_second_pass_cholqr(j, steps, at);
                if tsqr == Tsqr::CholQr2 {
                    self.record_dots(w0, steps, w0, steps, self.lay.gram, None);
                    self.record_cholqr(steps, at.r2, at.flag, true);
                    self.record_update(0, 0, w0, steps, 0, self.lay.t, NO_X);
                }
            }
            _ => {
                self.record_projection(j, steps, 1, at);
                self.record_tsqr_launches(w0, steps, tsqr, at);
            }
        }
    }

    /// BOrth's second pass and CholQR's first factorisation of the block W = [j+1, j+1+steps)
    /// in one reduction and one update (4 launches instead of 7, one reduction instead of
    /// two; CPU twin: `cpu::cagmres::tsqr::borth`): D = [Q, W]ᵀW by one `ca_block_dots`
    /// (C₂ = QᵀW added to C), `ca_cholqr` factors G = WᵀW − C₂ᵀC₂ (the Gram matrix of
    /// W − Q·C₂, Pythagoras) into R and T = R⁻¹ and makes C₂·T, and one `ca_block_update`
    /// makes W·T − Q·(C₂T). C = C₁ + C₂ and W = Q·C + Q_new·R as before.
    fn record_second_pass_cholqr(&self, j: usize, steps: usize, at: Slots) {
        let lay = self.lay;
        let w0 = j + 1;
        self.record_dots(
            0,
            w0 + steps,
            w0,
            steps,
            lay.d,
            Some((at.c, ACC_ADD | ACC_ROWS)),
        );
        let p = Params {
            comp: steps as u32,
            slot: lay.d as u32,
            dst: at.r as u32,
            comp_monitor: lay.t as u32,
            den: at.flag as u32,
            num: lay.eps as u32,
            flags: CHOLQR_PIP,
            jacobi: w0 as u32,
            ell_width: lay.ct as u32,
            ..self.params()
        };
        self.record(Which::Cholqr, p, 1);
        self.record_update(0, w0, w0, steps, lay.ct, lay.t, 0);
    }

    /// `ca_cholqr`: R = chol(G) of the Gram matrix at `lay.gram` into `r`, T = R⁻¹ into
    /// `lay.t`, the failure flag at `flag` (kept from the first pass with `keep`: flag
    /// `CA_FLAG_KEEP`).
    fn record_cholqr(&self, steps: usize, r: usize, flag: usize, keep: bool) {
        let lay = self.lay;
        let p = Params {
            comp: steps as u32,
            slot: lay.gram as u32,
            dst: r as u32,
            comp_monitor: lay.t as u32,
            den: flag as u32,
            num: lay.eps as u32,
            flags: keep as u32,
            ..self.params()
        };
        self.record(Which::Cholqr, p, 1);
    }

    /// The launches of a TSQR of the block [w0, w0+steps) that need no host value: all of
    /// MGS/CGS/CGS2 (projections and normalisations on the device, their C, R and norms at
    /// `at`), the Gram matrix of CholQR/CholQR2/SVQR and CAQR's leaves (while warming up also
    /// the launches after the host's step: Q = W·T, CAQR's Q = diag(Q_i)·Q̂).
    pub(crate) fn record_tsqr_launches(
        &self,
        w0: usize,
        steps: usize,
        tsqr: crate::base::Tsqr,
        at: Slots,
    ) {
        use crate::base::Tsqr;
        let (lay, s) = (self.lay, self.s);
        match tsqr {
            Tsqr::Mgs | Tsqr::Cgs | Tsqr::Cgs2 => {
                for k in 0..steps {
                    let col = w0 + k;
                    match tsqr {
                        Tsqr::Mgs => {
                            for l in 0..k {
                                let acc = at.r + l + s * k;
                                self.record_dots(w0 + l, 1, col, 1, lay.d, Some((acc, ACC_STORE)));
                                self.record_update(w0 + l, 1, col, 1, lay.d, 0, T_IDENTITY);
                            }
                        }
                        _ if k > 0 => {
                            let passes = if tsqr == Tsqr::Cgs2 { 2 } else { 1 };
                            for pass in 0..passes {
                                let flag = if pass == 0 { ACC_STORE } else { ACC_ADD };
                                let acc = at.r + s * k;
                                self.record_dots(w0, k, col, 1, lay.d, Some((acc, flag)));
                                self.record_update(w0, k, col, 1, lay.d, 0, T_IDENTITY);
                            }
                        }
                        _ => {}
                    }
                    self.record_dots(col, 1, col, 1, at.nrm + k, None);
                    self.record_update(0, 0, col, 1, 0, at.nrm + k, T_RSQRT | NO_X);
                }
            }
            Tsqr::Caqr => {
                if self.warming.get() {
                    self.record_caqr(Which::Apply, w0, steps);
                }
                self.record_caqr(Which::Leaf, w0, steps);
            }
            _ => {
                if self.warming.get() {
                    self.record_update(0, 0, w0, steps, 0, lay.t, NO_X);
                }
                self.record_dots(w0, steps, w0, steps, lay.gram, None);
            }
        }
    }

    /// CAQR of the block [w0, w0+steps) over [`Self::leaves`] leaves (one workgroup each):
    /// `Which::Leaf` records `ca_tsqr_leaf` (each leaf's Q_i in place, its R_i into the stack),
    /// `Which::Apply` records `ca_tsqr_apply` (Q = diag(Q_i)·Q̂ with the host's Q̂ in the stack).
    fn record_caqr(&self, which: Which, w0: usize, steps: usize) {
        let p = Params {
            groups: self.leaves as u32,
            dst: w0 as u32,
            comp: steps as u32,
            slot: self.lay.stack as u32,
            ..self.params()
        };
        self.record(which, p, self.leaves as u32);
    }

    /// CAQR's last launch, after the host wrote Q̂ into the stack: Q = diag(Q_i)·Q̂.
    pub(crate) fn record_caqr_apply(&self, w0: usize, steps: usize) {
        self.record_caqr(Which::Apply, w0, steps);
    }

    /// One BOrth pass over the block [j+1, j+steps] against q₀ … q_j: C_pass = Q_prevᵀW
    /// (into the scratch D and C: stored on pass 0, added on pass 1), W −= Q_prev C_pass.
    pub(crate) fn record_projection(&self, j: usize, steps: usize, pass: usize, at: Slots) {
        let acc = if pass == 0 { ACC_STORE } else { ACC_ADD };
        let lay = self.lay;
        self.record_dots(0, j + 1, j + 1, steps, lay.d, Some((at.c, acc)));
        self.record_update(0, j + 1, j + 1, steps, lay.d, 0, T_IDENTITY);
    }

    /// An Arnoldi step's second BOrth pass and normalisation of w = q_{j+1} against
    /// q₀ … q_j, 3 launches and one reduction instead of 6 and two: [Q, w]ᵀw in one
    /// `ca_block_dots` (w is the pool vector after q_j), C += Qᵀw, then
    /// w ← (w − Q·Qᵀw)/ν with ν² = wᵀw − ‖Qᵀw‖² at `at.nrm` (`ca_block_update`'s
    /// `CA_PYTHAG`), where a separate normalisation would have put ‖w‖².
    fn record_arnoldi_second_pass(&self, j: usize, at: Slots) {
        let lay = self.lay;
        self.record_dots(
            0,
            j + 2,
            j + 1,
            1,
            lay.d,
            Some((at.c, ACC_ADD | ACC_SKIP_LAST)),
        );
        self.record_update(0, j + 1, j + 1, 1, lay.d, at.nrm, T_IDENTITY | PYTHAG);
    }
}
