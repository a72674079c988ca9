//! BiCGStab on several devices: the classical recurrence of [`crate::cpu::bicgstab`]
//! (paper 000, Alg. 3; r̂ = r0, right Jacobi: p̂ = D⁻¹p, ŝ = D⁻¹s) in three phases per
//! iteration —
//!
//! 1. p = r + β(p − ωAp) (`dist_bicgstab_p`, not on the first iteration) and its sent entries;
//!    Ap = A·p̂ with ⟨Ap, r̂⟩, ⟨Ap, Ap⟩ (`dist_bicgstab_spmv`) → α;
//! 2. s = r − αAp with ⟨s, s⟩ (`dist_bicgstab_s`) and its sent entries; As = A·ŝ with
//!    ⟨As, s⟩, ⟨As, As⟩ → ω (or the early exit when ‖s‖ already meets the tolerance);
//! 3. x += αp̂ + ωŝ, r = s − ωAs with ⟨r, r⟩, ⟨r, r̂⟩ (`dist_bicgstab_xr`) → β.
//!
//! The breakdown tests are the CPU reference's ([`crate::cpu::is_breakdown`] on ⟨r, r̂⟩,
//! ⟨Ap, r̂⟩ and ω); a breakdown restarts from x with r̂ := r (as the one-device driver does).

use std::time::Instant;

use super::block::{BlockCore, Launch, Rows, poisoned};
use super::{Host, LoopTotals, PhaseLaunches, Restarts, Run, Setup, Solved};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{Monitor, SolveReport, StopReason};
use crate::cpu::is_breakdown;
use crate::gpu::Engine;
use crate::matrix::partition::LocalPart;

/// Partial-sum slots: Ap over interior and boundary rows, ⟨s, s⟩, As over interior and
/// boundary rows, the x, r update.
const SLOTS: u32 = 6;

/// One device's BiCGStab vectors and launches.
struct BicgstabBlock<T> {
    core: BlockCore<T>,
    x: wgpu::Buffer,
    r: wgpu::Buffer,
    rhat: wgpu::Buffer,
    p_ext: wgpu::Buffer,
    s_ext: wgpu::Buffer,
    p_update: Option<Launch>,
    p_gather: Option<Launch>,
    ap_interior: Option<Launch>,
    ap_boundary: Option<Launch>,
    s_update: Option<Launch>,
    s_gather: Option<Launch>,
    as_interior: Option<Launch>,
    as_boundary: Option<Launch>,
    xr_update: Option<Launch>,
}

impl<T: Scalar> BicgstabBlock<T> {
    fn new(
        engine: Engine,
        local: LocalPart<T>,
        dinv_ext: Option<Vec<T>>,
        send: &[u32],
    ) -> Result<Self> {
        let core = BlockCore::new(engine, local, send, SLOTS, dinv_ext.is_some())?;
        let e = &core.engine;
        let nloc = core.local.nloc();
        let next = nloc + core.local.halo.len();
        let x = poisoned::<T>(e, "dist x", nloc)?;
        let r = poisoned::<T>(e, "dist r", nloc)?;
        let rhat = poisoned::<T>(e, "dist rhat", nloc)?;
        let p_ext = poisoned::<T>(e, "dist p_ext", next)?;
        let s_ext = poisoned::<T>(e, "dist s_ext", next)?;
        let ap = poisoned::<T>(e, "dist ap", nloc)?;
        let as_ = poisoned::<T>(e, "dist as", nloc)?;
        let dinv = e.storage_from("dist dinv_ext", &dinv_ext.unwrap_or_else(|| vec![T::one()]))?;
        let (spmv, k_s, k_xr, k_p, gather) = (
            core.kernel("dist_bicgstab_spmv")?,
            core.kernel("dist_bicgstab_s")?,
            core.kernel("dist_bicgstab_xr")?,
            core.kernel("dist_bicgstab_p")?,
            core.kernel("dist_gather")?,
        );
        let of_p = [(8, &p_ext), (9, &ap), (10, &dinv), (19, &rhat)];
        let of_s = [(8, &s_ext), (9, &as_), (10, &dinv), (19, &rhat)];
        let s_vecs = [(17, &r), (9, &ap), (8, &s_ext)];
        let xr_vecs = [
            (20, &x),
            (17, &r),
            (21, &s_ext),
            (22, &as_),
            (23, &p_ext),
            (10, &dinv),
            (19, &rhat),
        ];
        let p_vecs = [(23, &p_ext), (17, &r), (9, &ap)];
        Ok(BicgstabBlock {
            p_update: core.launch(&k_p, Rows::All, None, &p_vecs),
            p_gather: core.launch(&gather, Rows::Send, None, &of_p),
            ap_interior: core.launch(&spmv, Rows::Interior, Some(0), &of_p),
            ap_boundary: core.launch(&spmv, Rows::Boundary, Some(1), &of_p),
            s_update: core.launch(&k_s, Rows::All, Some(2), &s_vecs),
            s_gather: core.launch(&gather, Rows::Send, None, &of_s),
            as_interior: core.launch(&spmv, Rows::Interior, Some(3), &of_s),
            as_boundary: core.launch(&spmv, Rows::Boundary, Some(4), &of_s),
            xr_update: core.launch(&k_xr, Rows::All, Some(5), &xr_vecs),
            x,
            r,
            rhat,
            p_ext,
            s_ext,
            core,
        })
    }
}

/// Picks the launches whose sums a phase adds up.
type Pick<'p, T> = &'p dyn Fn(&BicgstabBlock<T>) -> Vec<&Option<Launch>>;

/// The solver's blocks and the host.
struct Solver<'h, 'a, T> {
    host: &'h mut Host<'a, T>,
    blocks: Vec<BicgstabBlock<T>>,
}

impl<T: Scalar> Solver<'_, '_, T> {
    /// Writes the host's scalars (α, β, ω) to every device.
    fn coef(&self, alpha: f64, beta: f64, omega: f64) {
        for b in &self.blocks {
            let c = [T::from_f64(alpha), T::from_f64(beta), T::from_f64(omega)];
            b.core.engine.write(&b.core.coef, 0, &c);
        }
    }

    /// Sets x, r = b − Ax, r̂ = r, p = r (with its halo) on every device from `x`; returns
    /// ⟨r, r̂⟩ and ‖r‖.
    fn start_from(&self, x: &[T]) -> (f64, f64) {
        let r: Vec<T> = self
            .host
            .residual(x)
            .iter()
            .map(|&v| T::from_f64(v))
            .collect();
        let rr: f64 = r.iter().map(|v| v.as_f64() * v.as_f64()).sum();
        for b in &self.blocks {
            let (e, l) = (&b.core.engine, &b.core.local);
            e.write(&b.x, 0, &l.gather(x));
            let rl = l.gather(&r);
            e.write(&b.r, 0, &rl);
            e.write(&b.rhat, 0, &rl);
            e.write(&b.p_ext, 0, &l.extended(&r));
        }
        (rr, rr.sqrt())
    }

    /// Runs one phase; for each of `picks`, components 0–2 of the sums of its launches
    /// added over devices.
    fn phase<const P: usize>(
        &mut self,
        launches: impl Fn(&BicgstabBlock<T>) -> PhaseLaunches<'_>,
        picks: [Pick<'_, T>; P],
    ) -> Result<[[f64; 3]; P]> {
        let l: Vec<PhaseLaunches<'_>> = self.blocks.iter().map(&launches).collect();
        let cores: Vec<&BlockCore<T>> = self.blocks.iter().map(|b| &b.core).collect();
        let parts = self.host.phase(&cores, &l)?;
        let mut out = [[0.0; 3]; P];
        for (b, p) in self.blocks.iter().zip(&parts) {
            for (o, pick) in out.iter_mut().zip(&picks) {
                let v = b.core.sums(p, &pick(b));
                for c in 0..3 {
                    o[c] += v[c];
                }
            }
        }
        let mut flat: Vec<f64> = out.iter().flatten().copied().collect();
        self.host.sum(&mut flat);
        for (o, v) in out.iter_mut().zip(flat.chunks(3)) {
            o.copy_from_slice(v);
        }
        Ok(out)
    }
}

/// Why the inner loop of one (re)start ended: `None` when the recurrence met the tolerance.
type End = Option<StopReason>;

/// BiCGStab over `engines`; returns x, the host (its timings) and the blocks' cores.
pub(super) fn solve<'a, T: Scalar>(
    mut host: Host<'a, T>,
    mut setup: Setup<'_, T>,
    monitor: &mut dyn Monitor,
    report: &mut SolveReport,
) -> Result<Solved<'a, T>> {
    host.products = 2;
    let blocks = setup.blocks(&host.exchange, |engine, local, dinv, send| {
        let d = dinv.map(|d| local.extended(d));
        BicgstabBlock::new(engine, local, d, send)
    })?;
    let opts = setup.opts;
    let mut sv = Solver {
        host: &mut host,
        blocks,
    };
    let n = sv.host.a.nrows();
    let mut x = setup.x0(n);
    let b_norm = report.b_norm;
    let threshold = sv.host.threshold;
    let rel_target = threshold / if b_norm > 0.0 { b_norm } else { 1.0 };
    let counts0 = sv.blocks[0].core.engine.counters().snapshot();
    let mut run = Run::new(monitor);
    let mut restarts = Restarts::default();
    let mut totals = LoopTotals::default();
    let (reason, true_rel) = loop {
        let (mut rho, mut res) = sv.start_from(&x);
        let rstar_norm = res;
        run.push(res);
        run.monitor.on_loop_start();
        let t = Instant::now();
        sv.host.mark_loop();
        let c0 = sv.blocks[0].core.engine.counters().snapshot();
        // β and ω of the last iteration (None: p is r, its halo uploaded by the restart).
        let mut last: Option<(f64, f64)> = None;
        let end: End = loop {
            if !res.is_finite() {
                break Some(StopReason::NonFinite {
                    quantity: "residual".into(),
                });
            }
            if res <= threshold {
                break None;
            }
            if run.monitor.cancelled() {
                break Some(StopReason::Cancelled);
            }
            if run.iterations() >= opts.max_iter {
                break Some(StopReason::MaxIterations);
            }
            if is_breakdown::<T>(rho, res * rstar_norm) {
                break Some(StopReason::Breakdown {
                    quantity: "<r, r0*>".into(),
                });
            }
            // Phase 1: p (after the first iteration) and Ap = A·p̂.
            if let Some((beta, omega)) = last {
                sv.coef(0.0, beta, omega);
            }
            let first = last.is_none();
            let [[apr, apap, _]] = sv.phase(
                |b| PhaseLaunches {
                    update: if first { Vec::new() } else { vec![&b.p_update] },
                    gather: (!first).then_some((&b.p_gather, &b.p_ext)),
                    interior: Some(&b.ap_interior),
                    boundary: Some(&b.ap_boundary),
                },
                [&|b| vec![&b.ap_interior, &b.ap_boundary]],
            )?;
            if !apr.is_finite() || !apap.is_finite() {
                break Some(StopReason::NonFinite {
                    quantity: "<Ap, r0*>".into(),
                });
            }
            if is_breakdown::<T>(apr, apap.sqrt() * rstar_norm) {
                break Some(StopReason::Breakdown {
                    quantity: "<Ap, r0*>".into(),
                });
            }
            let alpha = rho / apr;
            // Phase 2: s = r − αAp and As = A·ŝ.
            sv.coef(alpha, 0.0, 0.0);
            let [[_, asas, ass], [ss, _, _]] = sv.phase(
                |b| PhaseLaunches {
                    update: vec![&b.s_update],
                    gather: Some((&b.s_gather, &b.s_ext)),
                    interior: Some(&b.as_interior),
                    boundary: Some(&b.as_boundary),
                },
                [&|b| vec![&b.as_interior, &b.as_boundary], &|b| {
                    vec![&b.s_update]
                }],
            )?;
            let s_norm = ss.sqrt();
            // The half step: ‖s‖ already meets the tolerance → x += αp̂ (ω = 0: r = s).
            let omega = if s_norm <= threshold {
                0.0
            } else {
                if asas <= 0.0 || is_breakdown::<T>(ass, asas.sqrt() * s_norm) {
                    break Some(StopReason::Breakdown {
                        quantity: "omega".into(),
                    });
                }
                ass / asas
            };
            // Phase 3: x and r.
            sv.coef(alpha, 0.0, omega);
            let [[rr, rho_new, _]] = sv.phase(
                |b| PhaseLaunches {
                    update: vec![&b.xr_update],
                    ..Default::default()
                },
                [&|b| vec![&b.xr_update]],
            )?;
            res = rr.sqrt();
            run.recorded += 1;
            run.push(res);
            if omega == 0.0 || !res.is_finite() || res <= threshold {
                continue;
            }
            let beta = (rho_new / rho) * (alpha / omega);
            if !beta.is_finite() {
                break Some(StopReason::NonFinite {
                    quantity: "beta".into(),
                });
            }
            rho = rho_new;
            last = Some((beta, omega));
        };
        let xs: Vec<&wgpu::Buffer> = sv.blocks.iter().map(|b| &b.x).collect();
        let cores: Vec<&BlockCore<T>> = sv.blocks.iter().map(|b| &b.core).collect();
        let (xn, true_rel) = sv
            .host
            .end_loop(&cores, &xs, (&c0, t), &mut totals, b_norm)?;
        x = xn;
        let it = run.iterations();
        if let Some(stop) = restarts.decide(end, (true_rel, rel_target), (it, opts.max_iter), true)
        {
            break stop;
        }
        run.history.pop();
    };
    report.loop_seconds = totals.seconds;
    let k = sv.blocks.len();
    let blocks = sv.blocks;
    host.close(
        &blocks[0].core,
        run,
        report,
        (reason, true_rel),
        totals.counts,
        &counts0,
        restarts,
        k,
    );
    Ok((x, host, blocks.into_iter().map(|b| b.core).collect()))
}
