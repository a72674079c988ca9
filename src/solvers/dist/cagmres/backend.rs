//! The distributed side of [`CaBackend`]: the n-length work of a CA-GMRES cycle on every
//! device's rows, the host adding each block's inner products over the devices (see `mod.rs`).

use std::time::Instant;

use nalgebra::DMatrix;

use super::super::block::BlockCore;
use super::super::mpk::{DeepHalo, MpkDevice};
use super::super::{Host, PhaseLaunches, Run};
use crate::base::Tsqr;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::cpu::cagmres::leja::Shift;
use crate::cpu::cagmres::powers::{basis_change, step_coefficients};
use crate::cpu::cagmres::tsqr::{
    borth_reductions, cholesky, fuses_second_pass, right_upper_inverse, svqr_r,
};
use crate::cpu::cagmres::{BlockResult, CaBackend};
use crate::solvers::cagmres::layout::powers_prev;
use crate::solvers::cagmres::system::{
    CaSystem, NO_X, T_IDENTITY, arnoldi_step, distance_from_identity,
};
use crate::solvers::cagmres::{block_result, finite};

use super::{CaLaunches, supports};

/// Mirrors `struct DistCa` of `shaders/dist/dist_ca_load.wgsl` and `dist_ca_powers.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct DistCa {
    n: u32,
    src: u32,
    prev: u32,
    dst: u32,
    flags: u32,
    pad: [u32; 3],
}

/// `dist_ca_load`: scale the loaded vector by D⁻¹ (`CA_DIST_DINV`).
const LOAD_DINV: u32 = 1;

/// The distributed side of [`CaBackend`].
pub(super) struct DistBackend<'b, 'a, 'e, 'm, T> {
    pub(super) host: &'b mut Host<'a, T>,
    pub(super) cores: &'b [BlockCore<T>],
    pub(super) systems: &'b [CaSystem<'e, T>],
    pub(super) launches: &'b [CaLaunches],
    /// The matrix powers from one exchange per block (paper 002 Fig. 4), where built.
    pub(super) deep: Option<(&'b DeepHalo, &'b [MpkDevice])>,
    pub(super) run: &'b mut Run<'m>,
    pub(super) jacobi: bool,
    /// Global rows (the Cholesky's pivot tolerance).
    pub(super) n: usize,
    /// Values moved between devices so far.
    pub(super) exchanged: usize,
}

impl<T: Scalar> DistBackend<'_, '_, '_, '_, T> {
    /// Submits what every device's system has recorded.
    pub(super) fn flush(&self) -> Result<()> {
        self.systems.iter().try_for_each(|s| s.flush())
    }

    /// `values` into every device's cycle buffer at `at`.
    fn write_all(&self, at: usize, values: &[f64]) -> Result<()> {
        self.systems.iter().try_for_each(|s| s.write(at, values))
    }

    /// One product phase on every device: pool[dst] = c_A·A·(D⁻¹)pool[src] + c_s·pool[src]
    /// + c_p·pool[prev]; with `residual`, the global ‖pool[dst]‖² (else 0).
    fn product(
        &mut self,
        [src, prev, dst]: [usize; 3],
        coef: &[f64],
        dinv: bool,
        residual: bool,
    ) -> Result<f64> {
        self.flush()?;
        for ((core, l), sys) in self.cores.iter().zip(self.launches).zip(self.systems) {
            let step = DistCa {
                n: sys.n as u32,
                src: src as u32,
                prev: prev as u32,
                dst: dst as u32,
                flags: if dinv { LOAD_DINV } else { 0 },
                pad: [0; 3],
            };
            core.engine.write(&l.step, 0, &[step]);
            let c: Vec<T> = coef.iter().map(|&v| T::from_f64(v)).collect();
            core.engine.write(&core.coef, 0, &c);
        }
        let phase: Vec<PhaseLaunches<'_>> = self
            .launches
            .iter()
            .map(|l| PhaseLaunches {
                update: vec![&l.load],
                gather: Some((&l.gather, &l.ext)),
                interior: Some(if residual {
                    &l.residual_interior
                } else {
                    &l.powers_interior
                }),
                boundary: Some(if residual {
                    &l.residual_boundary
                } else {
                    &l.powers_boundary
                }),
                no_sums: !residual,
            })
            .collect();
        let cores: Vec<&BlockCore<T>> = self.cores.iter().collect();
        let parts = self.host.phase(&cores, &phase)?;
        self.exchanged += self.host.exchange.values();
        if !residual {
            return Ok(0.0);
        }
        let mut rr = [0.0];
        for ((core, l), p) in self.cores.iter().zip(self.launches).zip(&parts) {
            rr[0] += core.sums(p, &[&l.residual_interior, &l.residual_boundary])[0];
        }
        self.host.sum(&mut rr);
        Ok(rr[0])
    }

    /// A block's `steps` ≥ 2 products from pool vector `j` on the extended rows: one exchange
    /// of the deep halo (all devices' reads submitted before any is waited for), then every
    /// step on each device alone (see `mpk.rs`).
    fn deep_powers(
        &mut self,
        (halo, mpks): (&DeepHalo, &[MpkDevice]),
        j: usize,
        coef: &[f64],
        steps: usize,
    ) -> Result<()> {
        self.flush()?;
        let cores = self.cores;
        for (core, m) in cores.iter().zip(mpks) {
            m.set_block::<T>(&core.engine, j, coef);
        }
        let exchanging = !halo.exchange.transfers.is_empty();
        let t = Instant::now();
        let mut reads = Vec::with_capacity(cores.len());
        for (core, m) in cores.iter().zip(mpks) {
            let mut batch = core.engine.begin("dist mpk load");
            m.record_load(&mut batch);
            if exchanging && m.send_len > 0 {
                reads.push(Some(batch.submit_read::<T>(&m.send, 0, m.send_len)?));
            } else {
                batch.submit()?;
                reads.push(None);
            }
        }
        self.host.submit_seconds += t.elapsed().as_secs_f64();
        let mut sent = Vec::with_capacity(cores.len());
        for (d, read) in reads.into_iter().enumerate() {
            let t = Instant::now();
            sent.push(match read {
                Some(r) => r.wait()?,
                None => Vec::new(),
            });
            self.host.wait[d] += t.elapsed().as_secs_f64();
        }
        if exchanging {
            let t = Instant::now();
            let first = self.host.here.start;
            self.host.comm.exchange(
                &halo.exchange,
                self.host.here.clone(),
                &sent,
                |to, dst, values| {
                    let d = to - first;
                    cores[d]
                        .engine
                        .write(&mpks[d].z, mpks[d].nloc + dst, values);
                },
            );
            self.host.exchange_seconds += t.elapsed().as_secs_f64();
            self.exchanged += halo.exchange.values();
        }
        let t = Instant::now();
        for (core, m) in cores.iter().zip(mpks) {
            let mut batch = core.engine.begin("dist mpk steps");
            m.record_steps(&mut batch, steps);
            batch.submit()?;
        }
        self.host.submit_seconds += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// D = pool[x0 .. x0+nx)ᵀ pool[y0 .. y0+ny), nx × ny: every device's share from its
    /// cycle buffer at `dst` (all devices' reads submitted before any is waited for), summed
    /// in f64 over devices (and processes).
    fn gram(
        &mut self,
        x0: usize,
        nx: usize,
        y0: usize,
        ny: usize,
        dst: usize,
    ) -> Result<DMatrix<f64>> {
        let mut pending = Vec::with_capacity(self.systems.len());
        for sys in self.systems {
            sys.record_dots(x0, nx, y0, ny, dst, None);
            pending.push(sys.read_pending(dst, nx * ny)?);
        }
        let mut sum = vec![0.0; nx * ny];
        for (d, read) in pending.into_iter().enumerate() {
            let t = Instant::now();
            let v = read.wait()?;
            self.host.wait[d] += t.elapsed().as_secs_f64();
            for (s, v) in sum.iter_mut().zip(v) {
                *s += v.as_f64();
            }
        }
        self.host.sum(&mut sum);
        let g = DMatrix::from_column_slice(nx, ny, &sum);
        finite(&g)?;
        Ok(g)
    }

    /// Q = W T on every device (T = R⁻¹ uploaded).
    fn apply_t(&self, w0: usize, steps: usize, t: &DMatrix<f64>) -> Result<()> {
        let lay = self.systems[0].lay;
        self.write_all(lay.t, t.as_slice())?;
        for sys in self.systems {
            sys.record_update(0, 0, w0, steps, 0, lay.t, 0);
        }
        Ok(())
    }

    /// R of W = pool[w0 .. w0+steps) from its Gram matrix (Cholesky, SVQR when it fails or
    /// when asked), applied: W ← W R⁻¹. Returns R and why Cholesky failed.
    fn orthonormalise(
        &mut self,
        w0: usize,
        steps: usize,
        svqr: bool,
    ) -> Result<(DMatrix<f64>, Option<String>)> {
        let lay = self.systems[0].lay;
        let g = self.gram(w0, steps, w0, steps, lay.gram)?;
        let (r, why) = if svqr {
            (svqr_r(&g), None)
        } else {
            match cholesky(&g, self.n) {
                Ok(r) => (r, None),
                Err(why) => (svqr_r(&g), Some(why)),
            }
        };
        self.apply_t(w0, steps, &right_upper_inverse(&r))?;
        Ok((r, why))
    }

    /// An Arnoldi step (the Newton basis's first cycle: w = q_{j+1} against q₀ … q_j, CGS2)
    /// in two reductions, as on one GPU (`CaSystem::record_arnoldi_second_pass`): BOrth's
    /// first pass, then [Q, w]ᵀw in one Gram read, ν² = wᵀw − ‖Qᵀw‖² (Pythagoras: after the
    /// first pass Qᵀw is at rounding level against w, so the difference loses nothing), and
    /// w ← w/ν − Q(Qᵀw/ν) in one update. ν = 0 (ν² ≤ 0: the step broke down) zeroes w and
    /// reaches the cycle logic as R = 0.
    fn arnoldi_step(&mut self, j: usize, tsqr: Tsqr) -> Result<BlockResult> {
        let lay = self.systems[0].lay;
        let w0 = j + 1;
        let c1 = self.gram(0, j + 1, w0, 1, lay.d)?;
        self.write_all(lay.d, c1.as_slice())?;
        for sys in self.systems {
            sys.record_update(0, j + 1, w0, 1, lay.d, 0, T_IDENTITY);
        }
        let d = self.gram(0, j + 2, w0, 1, lay.d)?;
        let c2 = d.rows(0, j + 1).into_owned();
        let nu = (d[(j + 1, 0)] - c2.norm_squared()).max(0.0).sqrt();
        let inv = if nu > 0.0 { 1.0 / nu } else { 0.0 };
        self.write_all(lay.d, (&c2 * inv).as_slice())?;
        self.write_all(lay.t, &[inv])?;
        for sys in self.systems {
            sys.record_update(0, j + 1, w0, 1, lay.d, lay.t, 0);
        }
        let mut b = block_result(
            tsqr,
            tsqr,
            None,
            1,
            c1 + c2,
            DMatrix::from_element(1, 1, nu),
        );
        // The norm came with the second pass: no reduction of its own.
        b.report.reductions = 0;
        b.reductions = 2;
        Ok(b)
    }

    /// One BOrth pass of the block W = pool[j+1, j+1+steps) against q₀ … q_j: C = QᵀW summed
    /// over devices (one read), W −= Q C on every device. Returns C.
    fn project(&mut self, j: usize, steps: usize) -> Result<DMatrix<f64>> {
        let lay = self.systems[0].lay;
        let cp = self.gram(0, j + 1, j + 1, steps, lay.d)?;
        self.write_all(lay.d, cp.as_slice())?;
        for sys in self.systems {
            sys.record_update(0, j + 1, j + 1, steps, lay.d, 0, T_IDENTITY);
        }
        Ok(cp)
    }

    /// BOrth's second pass fused with CholQR, as on one GPU (`ca_cholqr`'s CA_FLAG_PIP) and
    /// in the CPU reference's `borth`: D = [Q, W]ᵀW in one read, C₂ = QᵀW added to `c`,
    /// R = chol(WᵀW − C₂ᵀC₂), and W ← W·R⁻¹ − Q·(C₂R⁻¹) in one update. Returns R, or — the
    /// fused Gram matrix not positive definite — `None` after the plain second pass
    /// (W −= Q C₂), for the caller's CholQR with its SVQR fallback.
    fn second_pass_cholqr(
        &mut self,
        j: usize,
        steps: usize,
        c: &mut DMatrix<f64>,
    ) -> Result<Option<DMatrix<f64>>> {
        let lay = self.systems[0].lay;
        let w0 = j + 1;
        let d = self.gram(0, w0 + steps, w0, steps, lay.d)?;
        let c2 = d.rows(0, w0).into_owned();
        let g = d.rows(w0, steps) - c2.transpose() * &c2;
        *c += &c2;
        match cholesky(&g, self.n) {
            Ok(r1) => {
                let t = right_upper_inverse(&r1);
                self.write_all(lay.d, (&c2 * &t).as_slice())?;
                self.write_all(lay.t, t.as_slice())?;
                for sys in self.systems {
                    sys.record_update(0, w0, w0, steps, lay.d, lay.t, 0);
                }
                Ok(Some(r1))
            }
            Err(_) => {
                self.write_all(lay.d, c2.as_slice())?;
                for sys in self.systems {
                    sys.record_update(0, w0, w0, steps, lay.d, 0, T_IDENTITY);
                }
                Ok(None)
            }
        }
    }

    /// ‖I − QᵀQ‖_F over q₁ … q_k, the Gram matrix summed over devices (outside the counts
    /// the report gives per iteration).
    pub(super) fn orthogonality_loss(&mut self, k: usize) -> Result<Option<f64>> {
        if k == 0 {
            return Ok(None);
        }
        let vtv = self.systems[0].lay.vtv;
        let mut pending = Vec::with_capacity(self.systems.len());
        for sys in self.systems {
            for j in 0..k {
                sys.record_dots(1, k, 1 + j, 1, vtv + k * j, None);
            }
            pending.push(sys.read_pending(vtv, k * k)?);
        }
        let mut g = vec![0.0; k * k];
        for read in pending {
            for (s, v) in g.iter_mut().zip(read.wait()?) {
                *s += v.as_f64();
            }
        }
        self.host.sum(&mut g);
        Ok(Some(distance_from_identity(&g, k)))
    }
}

impl<T: Scalar> CaBackend for DistBackend<'_, '_, '_, '_, T> {
    fn restart(&mut self) -> Result<f64> {
        let sys = &self.systems[0];
        let (x, b) = (sys.x(), sys.b());
        // r = −1·A x + 0·x + 1·b into q₀'s place, with ‖r‖².
        Ok(self
            .product([x, b, 0], &[-1.0, 0.0, 1.0], false, true)?
            .sqrt())
    }

    fn start_basis(&mut self, rho: f64) -> Result<()> {
        // q₀ = r · (1/ρ) with the ρ summed over devices (T is 1 × 1).
        let t = self.systems[0].lay.t;
        self.write_all(t, &[1.0 / rho])?;
        for sys in self.systems {
            sys.record_update(0, 0, 0, 1, 0, t, NO_X);
        }
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
        if let (Some(deep), true) = (self.deep, steps >= 2) {
            self.deep_powers(deep, j, &coef, steps)?;
            return Ok(basis_change(steps, shifts, sigma));
        }
        for k in 0..steps {
            let at = [j + k, powers_prev(j, k), j + k + 1];
            self.product(at, &coef[3 * k..3 * k + 3], self.jacobi, false)?;
        }
        Ok(basis_change(steps, shifts, sigma))
    }

    fn borth(&mut self, j: usize, steps: usize, tsqr: Tsqr) -> Result<BlockResult> {
        if arnoldi_step(steps, tsqr) {
            return self.arnoldi_step(j, tsqr);
        }
        if !supports(tsqr) {
            return Err(KrylovError::Unsupported(format!(
                "CA-GMRES on several devices runs --tsqr cholqr, cholqr2 or svqr ({tsqr} is not built there)"
            )));
        }
        let w0 = j + 1;
        let mut c = self.project(j, steps)?;
        let (mut used, mut fallback_reason) = (tsqr, None);
        // CholQR and CholQR2: BOrth's second pass and the first Cholesky from one read.
        let fused = if fuses_second_pass(tsqr) {
            self.second_pass_cholqr(j, steps, &mut c)?
        } else {
            c += self.project(j, steps)?;
            None
        };
        let fused_ok = fused.is_some();
        let (r1, why) = match fused {
            Some(r1) => (r1, None),
            None => self.orthonormalise(w0, steps, tsqr == Tsqr::Svqr)?,
        };
        if let Some(why) = why {
            used = Tsqr::Svqr;
            fallback_reason = Some(format!(
                "{why}: W is numerically rank deficient; SVQR of the same Gram matrix"
            ));
        }
        let r = if tsqr == Tsqr::CholQr2 {
            let (r2, why) = self.orthonormalise(w0, steps, false)?;
            if let Some(why) = why {
                used = Tsqr::Svqr;
                let before = fallback_reason.take().map_or(String::new(), |s| s + "; ");
                fallback_reason = Some(format!("{before}second pass: {why}: SVQR"));
            }
            r2 * r1
        } else {
            r1
        };
        finite(&r)?;
        let mut b = block_result(tsqr, used, fallback_reason, steps, c, r);
        if fused_ok {
            // CholQR's first Gram matrix came with the second projection.
            b.report.reductions -= 1;
            b.reductions = borth_reductions(tsqr, steps);
        }
        Ok(b)
    }

    fn update_x(&mut self, y: &[f64]) -> Result<()> {
        let lay = self.systems[0].lay;
        self.write_all(lay.y, y)?;
        for sys in self.systems {
            sys.record_update_x(y.len());
        }
        Ok(())
    }

    fn checkpoint(&mut self, hist: &[f64]) -> bool {
        for &h in &hist[self.run.history.len().min(hist.len())..] {
            self.run.push(h);
        }
        self.run.monitor.cancelled()
    }
}
