//! CA-GMRES(s, m) on several devices (paper 002 §VI's multi-GPU CA-GMRES; issue #19): the
//! cycle logic of the CPU reference and of one GPU ([`run_cycles`] over a [`CaBackend`]),
//! with the n-length work on every device's row block:
//!
//! ```text
//!  matrix powers, each of the s steps one phase (dist/mod.rs):
//!     dist_ca_load    v = D⁻¹ q_k (or q_k) on the block's rows, dist_gather   → read, exchange
//!     dist_ca_powers  q_{k+1} = c_A·A[v; v_halo] + c_s·q_k + c_p·q_{k−1} (interior, boundary)
//!  BOrth, twice:      ca_block_dots + ca_block_finish of the block's share of Q_prevᵀW → read,
//!                     the host sums C over devices, uploads it; ca_block_update W −= Q_prev C
//!  TSQR (CholQR, CholQR2, SVQR): the Gram matrix WᵀW the same way, R on the host, W R⁻¹
//!  restart:           x += D⁻¹ Q y (ca_block_update); one phase r = b − Ax with ‖r‖²
//! ```
//!
//! Each device keeps its rows of the basis in a [`CaSystem`] built for rows
//! ([`CaSystem::for_rows`]): the same pool, cycle buffer and block kernels as on one GPU, whose
//! inner products are that block's share; the host adds the shares over devices in f64
//! before anything uses them, so every device applies the same C and R. A basis vector costs
//! one halo exchange (two host round trips per device), a block 2 + the TSQR's reductions
//! (one round trip each) — against distributed GMRES's three round trips and two reductions
//! per vector. With the Newton basis the first cycle is Arnoldi (blocks of one vector), as on
//! one GPU. Blocks are not deferred: each needs the host between its reductions.
//!
//! Supported: `--tsqr cholqr`, `cholqr2` (the default) and `svqr` (each needs only Gram
//! matrices, which are sums over devices), right Jacobi or no preconditioner; the rest is
//! refused by `dist::check_supported` with a message.

use std::time::Instant;

use nalgebra::DMatrix;

use super::block::{BlockCore, Launch, Rows, poisoned};
use super::mpk::{DeepHalo, ExtBlock, MpkDevice};
use super::{Host, LoopTotals, PhaseLaunches, Restarts, Run, Setup, Solved};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::base::{CaReport, Monitor, Precond, SolveReport, StopReason, Tsqr};
use crate::cpu::cagmres::leja::Shift;
use crate::cpu::cagmres::powers::{basis_change, step_coefficients};
use crate::cpu::cagmres::tsqr::{cholesky, right_upper_inverse, svqr_r};
use crate::cpu::cagmres::{BlockResult, CaBackend, Control, operator_scale, run_cycles, summarise};
use crate::matrix::Csr;
use crate::matrix::partition::{LocalPart, RowPartition};
use crate::solvers::cagmres::layout::powers_prev;
use crate::solvers::cagmres::system::{CaSystem, NO_X, T_IDENTITY, arnoldi_step};
use crate::solvers::cagmres::{block_result, finite};

/// Mirrors `struct DistCa` of `shaders/dist/dist_ca_load.wgsl` and `dist_ca_powers.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct DistCa {
    n: u32,
    src: u32,
    prev: u32,
    dst: u32,
    flags: u32,
    pad: [u32; 3],
}

/// `dist_ca_load`: scale the loaded vector by D⁻¹ (`CA_DIST_DINV`).
const LOAD_DINV: u32 = 1;

/// The TSQR variants CA-GMRES runs on several devices: those built from Gram matrices.
pub(super) fn supports(tsqr: Tsqr) -> bool {
    matches!(tsqr, Tsqr::CholQr | Tsqr::CholQr2 | Tsqr::Svqr)
}

/// One device's product launches and the buffers they add to its [`CaSystem`].
struct CaLaunches {
    /// `[v; v_halo]`: what a product multiplies.
    ext: wgpu::Buffer,
    /// The `DistCa` uniform of the phase.
    step: wgpu::Buffer,
    load: Option<Launch>,
    gather: Option<Launch>,
    powers_interior: Option<Launch>,
    powers_boundary: Option<Launch>,
    residual_interior: Option<Launch>,
    residual_boundary: Option<Launch>,
}

impl CaLaunches {
    fn new<T: Scalar>(core: &BlockCore<T>, sys: &CaSystem<'_, T>) -> Result<Self> {
        let e = &core.engine;
        let next = core.local.nloc() + core.local.halo.len();
        let ext = poisoned::<T>(e, "dist cagmres v_ext", next)?;
        let step = e.uniform_from("dist cagmres step", &DistCa::default());
        let vecs = [(8, &ext), (10, sys.dinv()), (22, &step), (23, &sys.pool)];
        let (k_load, k_gather, k_powers) = (
            core.kernel("dist_ca_load")?,
            core.kernel("dist_gather")?,
            core.kernel("dist_ca_powers")?,
        );
        // A powers step's sums are not read: no reduction.
        let k_step = k_powers.without_reduction();
        Ok(CaLaunches {
            load: core.launch(&k_load, Rows::All, None, &vecs),
            gather: core.launch(&k_gather, Rows::Send, None, &vecs),
            powers_interior: core.launch(&k_step, Rows::Interior, Some(0), &vecs),
            powers_boundary: core.launch(&k_step, Rows::Boundary, Some(1), &vecs),
            residual_interior: core.launch(&k_powers, Rows::Interior, Some(0), &vecs),
            residual_boundary: core.launch(&k_powers, Rows::Boundary, Some(1), &vecs),
            ext,
            step,
        })
    }
}

/// The diagonal block's diagonal of a local part (its rows, in local order), as the CSR a
/// Jacobi M is built from (an absent entry is 0: refused by the global check before).
fn local_diagonal<T: Scalar>(local: &LocalPart<T>) -> Result<Csr<T>> {
    let n = local.nloc();
    let d: Vec<T> = (0..n)
        .map(|i| {
            let span = local.row_ptr[i] as usize..local.row_ptr[i + 1] as usize;
            local.col_idx[span.clone()]
                .iter()
                .zip(&local.values[span])
                .find(|(c, _)| **c as usize == i)
                .map_or(T::zero(), |(_, v)| *v)
        })
        .collect();
    Csr::new(n, n, (0..=n as u32).collect(), (0..n as u32).collect(), d)
}

/// The distributed side of [`CaBackend`].
struct DistBackend<'b, 'a, 'e, 'm, T> {
    host: &'b mut Host<'a, T>,
    cores: &'b [BlockCore<T>],
    systems: &'b [CaSystem<'e, T>],
    launches: &'b [CaLaunches],
    /// The matrix powers from one exchange per block (paper 002 Fig. 4), where built.
    deep: Option<(&'b DeepHalo, &'b [MpkDevice])>,
    run: &'b mut Run<'m>,
    jacobi: bool,
    /// Global rows (the Cholesky's pivot tolerance).
    n: usize,
    /// Values moved between devices so far.
    exchanged: usize,
}

impl<T: Scalar> DistBackend<'_, '_, '_, '_, T> {
    /// Submits what every device's system has recorded.
    fn flush(&self) -> Result<()> {
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

    /// ‖I − QᵀQ‖_F over q₁ … q_k, the Gram matrix summed over devices (outside the counts
    /// the report gives per iteration).
    fn orthogonality_loss(&mut self, k: usize) -> Result<Option<f64>> {
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
        let mut sum = 0.0;
        for i in 0..k {
            for j in 0..k {
                let e = g[i + k * j] - if i == j { 1.0 } else { 0.0 };
                sum += e * e;
            }
        }
        Ok(Some(sum.sqrt()))
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
        let lay = self.systems[0].lay;
        let w0 = j + 1;
        let mut c = DMatrix::zeros(j + 1, steps);
        for _pass in 0..2 {
            let cp = self.gram(0, j + 1, w0, steps, lay.d)?;
            self.write_all(lay.d, cp.as_slice())?;
            for sys in self.systems {
                sys.record_update(0, j + 1, w0, steps, lay.d, 0, T_IDENTITY);
            }
            c += cp;
        }
        let (mut used, mut fallback_reason) = (tsqr, None);
        let (r1, why) = self.orthonormalise(w0, steps, tsqr == Tsqr::Svqr)?;
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
        Ok(block_result(tsqr, used, fallback_reason, steps, c, r))
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

/// CA-GMRES(s, m) over the devices of `setup`; returns x, the host (its timings) and the
/// blocks' cores.
pub(super) fn solve<'a, T: Scalar>(
    mut host: Host<'a, T>,
    mut setup: Setup<'_, T>,
    monitor: &mut dyn Monitor,
    report: &mut SolveReport,
) -> Result<Solved<'a, T>> {
    let opts = setup.opts;
    let ca = opts.ca();
    let n = host.a.nrows();
    let b = host.b;
    let x0 = setup.x0(n);
    let parts = setup.blocks(&host.exchange, |engine, local, _dinv, send| {
        let diag = local_diagonal(&local)?;
        let (rhs, x0) = (local.gather(b), local.gather(&x0));
        let core = BlockCore::new(engine, local, send, 2, false)?;
        Ok((core, diag, rhs, x0))
    })?;
    let mut cores = Vec::with_capacity(parts.len());
    let mut rest = Vec::with_capacity(parts.len());
    for (core, diag, rhs, x0) in parts {
        cores.push(core);
        rest.push((diag, rhs, x0));
    }
    let b_norm = report.b_norm;
    let counts0 = cores[0].engine.counters().snapshot();
    let mut totals = LoopTotals::default();
    let mut run = Run::new(monitor);
    let dinv = setup.dinv.take();
    let (x, true_rel, stop, rep, exchanged) = {
        let systems: Vec<CaSystem<'_, T>> = cores
            .iter()
            .zip(&rest)
            .map(|(core, (diag, rhs, x0))| {
                CaSystem::for_rows(&core.engine, diag, rhs, Some(x0), opts)
            })
            .collect::<Result<_>>()?;
        let launches: Vec<CaLaunches> = cores
            .iter()
            .zip(&systems)
            .map(|(core, sys)| CaLaunches::new(core, sys))
            .collect::<Result<_>>()?;
        let deep = deep_powers(&host, &cores, &systems, dinv.as_deref(), ca.s)?;
        report.notes.push(match &deep {
            Some((halo, _)) => format!(
                "matrix powers: one exchange per block of a depth-{} halo ({} values over the \
                 devices, against {} for one product's), then every product on each device \
                 alone (paper 002 Fig. 4)",
                halo.depth,
                halo.exchange.values(),
                host.exchange.values()
            ),
            None if ca.s >= 2 => "matrix powers: one exchange per product (a block's extended \
                 rows exceed one storage binding)"
                .into(),
            None => "matrix powers: one exchange per product (s = 1)".into(),
        });
        let mut rep = CaReport {
            options: ca,
            shifts: Vec::new(),
            scale: operator_scale(host.a, opts.precond != Precond::None),
            cycles: Vec::new(),
            reductions_per_cycle: None,
            syncs_per_cycle: None,
        };
        let ctl = Control {
            tau: host.threshold,
            max_iter: opts.max_iter,
            b_norm,
        };
        run.monitor.on_loop_start();
        let t = Instant::now();
        host.mark_loop();
        let c0 = cores[0].engine.counters().snapshot();
        let mut hist = Vec::new();
        let mut be = DistBackend {
            host: &mut host,
            cores: &cores,
            systems: &systems,
            launches: &launches,
            deep: deep.as_ref().map(|(h, m)| (h, m.as_slice())),
            run: &mut run,
            jacobi: opts.precond == Precond::Jacobi,
            n,
            exchanged: 0,
        };
        let stop = run_cycles(&mut be, &ctl, &mut hist, &ca, &mut rep)?;
        be.checkpoint(&hist);
        be.flush()?;
        let exchanged = be.exchanged;
        // x from each pool into the first rows of `ext`, where the host reads it.
        for ((core, sys), l) in cores.iter().zip(&systems).zip(&launches) {
            let bytes = (sys.n * std::mem::size_of::<T>()) as u64;
            let mut batch = core.engine.begin("dist cagmres x");
            batch.copy(&sys.pool, sys.x() as u64 * bytes, &l.ext, 0, bytes);
            batch.submit()?;
        }
        let core_refs: Vec<&BlockCore<T>> = cores.iter().collect();
        let xs: Vec<&wgpu::Buffer> = launches.iter().map(|l| &l.ext).collect();
        let (x, true_rel) = host.end_loop(&core_refs, &xs, (&c0, t), &mut totals, b_norm)?;
        // After the loop's counts: the orthogonality of the last cycle's basis.
        let last_columns = rep.cycles.last().map_or(0, |c| c.columns);
        let mut be = DistBackend {
            host: &mut host,
            cores: &cores,
            systems: &systems,
            launches: &launches,
            deep: None,
            run: &mut run,
            jacobi: false,
            n,
            exchanged: 0,
        };
        report.orthogonality_loss = be.orthogonality_loss(last_columns)?;
        (x, true_rel, stop, rep, exchanged)
    };
    let mut rep = rep;
    let recorded: usize = rep.cycles.iter().map(|c| c.recorded).sum();
    run.recorded = recorded.max(run.iterations());
    run.batch_size = ca.s;
    run.cycles = Some(rep.cycles.len());
    host.values_per_iteration = Some(exchanged / run.recorded.max(1));
    report.loop_seconds = totals.seconds;
    let true_abs = true_rel * if b_norm > 0.0 { b_norm } else { 1.0 };
    let (reason, detail) = match stop.reason {
        StopReason::Converged if !crate::cpu::confirms_convergence(true_abs, host.threshold) => (
            StopReason::ResidualGap,
            format!(
                "residual gap at iteration {}: the least-squares estimate met the threshold \
                 {:.3e} but the true |b - Ax| = {true_abs:.3e} (|b - Ax|/|b| = {true_rel:.3e}) \
                 does not",
                run.iterations(),
                host.threshold
            ),
        ),
        other => (other, stop.detail.clone()),
    };
    summarise(&mut rep);
    let k = cores.len();
    report.notes.insert(
        0,
        format!(
            "CA-GMRES(s = {}, m = {}) on {k} devices: {} basis, TSQR {}; each basis vector's \
             product one halo exchange, each block's inner products summed over the devices on \
             the host; iterations count the basis vectors the solution used",
            ca.s, ca.m, ca.basis, ca.tsqr
        ),
    );
    report.cagmres = Some(rep);
    let restarts = Restarts {
        total: stop.restarts,
        gaps: stop.replacements,
        ..Default::default()
    };
    host.close(
        &cores[0],
        run,
        report,
        (reason, true_rel),
        totals.counts,
        &counts0,
        restarts,
        k,
    );
    if !detail.is_empty() && report.reason != StopReason::Converged {
        report.reason_detail = detail;
    }
    Ok((x, host, cores))
}

/// The deep halo of CA-GMRES's matrix powers for blocks of `s` and every device's side of it
/// (`mpk.rs`); `None` for s = 1, or where a device's extended rows exceed one binding (the
/// products then exchange once each).
#[allow(clippy::type_complexity)]
fn deep_powers<T: Scalar>(
    host: &Host<'_, T>,
    cores: &[BlockCore<T>],
    systems: &[CaSystem<'_, T>],
    dinv: Option<&[T]>,
    s: usize,
) -> Result<Option<(DeepHalo, Vec<MpkDevice>)>> {
    if s < 2 {
        return Ok(None);
    }
    let n = host.a.nrows();
    let mut bounds = vec![0];
    for o in &host.orders {
        bounds.push(bounds.last().expect("bounds start at 0") + o.len());
    }
    let partition = RowPartition::from_bounds(n, bounds)?;
    let interiors: Vec<usize> = host.summaries.iter().map(|s| s[1]).collect();
    let halo = DeepHalo::plan(host.a, &partition, &host.orders, &interiors, s);
    let mut devices = Vec::with_capacity(cores.len());
    for (core, sys) in cores.iter().zip(systems) {
        let p = core.local.part;
        let ext = ExtBlock::build(host.a, &partition, p, &host.orders[p], &halo);
        let dinv_ext: Option<Vec<T>> = dinv.map(|d| {
            host.orders[p]
                .iter()
                .chain(&halo.ghosts[p])
                .map(|&g| d[g as usize])
                .collect()
        });
        match MpkDevice::new(
            &core.engine,
            &ext,
            dinv_ext.as_deref(),
            &halo.exchange.send[p],
            &sys.pool,
        )? {
            Some(m) => devices.push(m),
            None => return Ok(None),
        }
    }
    Ok(Some((halo, devices)))
}
