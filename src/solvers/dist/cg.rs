//! CG on several devices.
//!
//! * **Pipelined** (paper 000, Alg. 2): one phase per iteration — the update of x, r, p with
//!   ⟨r,z⟩, ⟨r,r⟩ (`dist_update_cg`), p's sent entries gathered, and Ap = A·p with ⟨p,Ap⟩,
//!   ⟨Ap,D⁻¹Ap⟩ (`dist_spmv_dot`); α and β on the host from the sums over devices, as
//!   `update_cg` computes them on one device.
//! * **Classical** (Alg. 1): two phases — x, r with ⟨r,z⟩, ⟨r,r⟩ (`dist_cg_xr`), then
//!   p = z + βp (`dist_cg_p`), its sent entries and Ap with ⟨p,Ap⟩; β = ⟨r,z⟩new/⟨r,z⟩ from
//!   the directly computed inner product (the recurrence that drifts least in f32).

use std::time::Instant;

use super::block::{BlockCore, Launch, Rows, poisoned};
use super::{Host, LoopTotals, PhaseLaunches, Restarts, Run, Setup, Solved};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{Monitor, SolveReport, StopReason};
use crate::gpu::Engine;
use crate::matrix::partition::LocalPart;

const SLOT_UPDATE: u32 = 0;
const SLOT_INTERIOR: u32 = 1;
const SLOT_BOUNDARY: u32 = 2;

/// One device's CG vectors and launches.
pub(super) struct CgBlock<T> {
    pub(super) core: BlockCore<T>,
    x: wgpu::Buffer,
    r: wgpu::Buffer,
    /// `[p; p_halo]`: the owned entries of p, then the halo the exchange writes.
    p_ext: wgpu::Buffer,
    update: Option<Launch>,
    gather: Option<Launch>,
    interior: Option<Launch>,
    boundary: Option<Launch>,
    /// Classical CG's x, r update and direction update.
    xr: Option<Launch>,
    direction: Option<Launch>,
}

impl<T: Scalar> CgBlock<T> {
    fn new(
        engine: Engine,
        local: LocalPart<T>,
        dinv: Option<Vec<T>>,
        send: &[u32],
    ) -> Result<Self> {
        let core = BlockCore::new(engine, local, send, 3, dinv.is_some())?;
        let e = &core.engine;
        let nloc = core.local.nloc();
        let x = poisoned::<T>(e, "dist x", nloc)?;
        let r = poisoned::<T>(e, "dist r", nloc)?;
        let p_ext = poisoned::<T>(e, "dist p_ext", nloc + core.local.halo.len())?;
        let ap = poisoned::<T>(e, "dist ap", nloc)?;
        let dinv = e.storage_from("dist dinv", &dinv.unwrap_or_else(|| vec![T::one()]))?;
        let (k_spmv, k_update, k_gather, k_xr, k_p) = (
            core.kernel("dist_spmv_dot")?,
            core.kernel("dist_update_cg")?,
            core.kernel("dist_gather")?,
            core.kernel("dist_cg_xr")?,
            core.kernel("dist_cg_p")?,
        );
        let vecs = [(8, &p_ext), (9, &ap), (10, &dinv), (17, &x), (18, &r)];
        Ok(CgBlock {
            update: core.launch(&k_update, Rows::All, Some(SLOT_UPDATE), &vecs),
            gather: core.launch(&k_gather, Rows::Send, None, &vecs),
            interior: core.launch(&k_spmv, Rows::Interior, Some(SLOT_INTERIOR), &vecs),
            boundary: core.launch(&k_spmv, Rows::Boundary, Some(SLOT_BOUNDARY), &vecs),
            xr: core.launch(&k_xr, Rows::All, Some(SLOT_UPDATE), &vecs),
            direction: core.launch(&k_p, Rows::All, None, &vecs),
            x,
            r,
            p_ext,
            core,
        })
    }
}

/// The inner products of one iteration, summed over devices.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    rz: f64,
    rr: f64,
    pap: f64,
    apdap: f64,
}

/// Sets x, r = b − Ax, p = D⁻¹r (with its halo) on every device from `x` (f64 arithmetic on
/// the host) and returns ⟨r,z⟩, ⟨r,r⟩.
fn start_from<T: Scalar>(
    host: &Host<'_, T>,
    blocks: &[CgBlock<T>],
    dinv: &Option<Vec<T>>,
    x: &[T],
) -> (f64, f64) {
    let r: Vec<T> = host.residual(x).iter().map(|&v| T::from_f64(v)).collect();
    let p: Vec<T> = match dinv {
        Some(d) => r.iter().zip(d).map(|(&ri, &di)| di * ri).collect(),
        None => r.clone(),
    };
    let rz: f64 = r.iter().zip(&p).map(|(a, b)| a.as_f64() * b.as_f64()).sum();
    let rr: f64 = r.iter().map(|v| v.as_f64() * v.as_f64()).sum();
    for blk in blocks {
        let (e, l) = (&blk.core.engine, &blk.core.local);
        e.write(&blk.x, 0, &l.gather(x));
        e.write(&blk.r, 0, &l.gather(&r));
        e.write(&blk.p_ext, 0, &l.extended(&p));
    }
    (rz, rr)
}

/// One phase: the update with α, β (none on the first product after a (re)start), then Ap.
fn step<T: Scalar>(
    host: &mut Host<'_, T>,
    blocks: &[CgBlock<T>],
    update: Option<(f64, f64)>,
) -> Result<Sums> {
    if let Some((alpha, beta)) = update {
        for blk in blocks {
            blk.core
                .engine
                .write(&blk.core.coef, 0, &[T::from_f64(alpha), T::from_f64(beta)]);
        }
    }
    let launches: Vec<PhaseLaunches<'_>> = blocks
        .iter()
        .map(|b| PhaseLaunches {
            update: if update.is_some() {
                vec![&b.update]
            } else {
                Vec::new()
            },
            gather: update.map(|_| (&b.gather, &b.p_ext)),
            interior: Some(&b.interior),
            boundary: Some(&b.boundary),
            no_sums: false,
        })
        .collect();
    let cores: Vec<&BlockCore<T>> = blocks.iter().map(|b| &b.core).collect();
    let parts = host.phase(&cores, &launches)?;
    let mut s = Sums::default();
    for (b, p) in blocks.iter().zip(&parts) {
        // The update's slot was read only if it ran.
        let u = match update {
            Some(_) => b.core.sums(p, &[&b.update]),
            None => [0.0; 3],
        };
        let q = b.core.sums(p, &[&b.interior, &b.boundary]);
        s.rz += u[0];
        s.rr += u[1];
        s.pap += q[0];
        s.apdap += q[1];
    }
    let mut v = [s.rz, s.rr, s.pap, s.apdap];
    host.sum(&mut v);
    Ok(Sums {
        rz: v[0],
        rr: v[1],
        pap: v[2],
        apdap: v[3],
    })
}

/// Classical CG's iteration (paper 000, Alg. 1) with α: x and r, then — unless r already meets
/// `threshold` or is not finite — p = z + βp with β = ⟨r,z⟩new/`rz` and the product Ap.
fn classical_step<T: Scalar>(
    host: &mut Host<'_, T>,
    blocks: &[CgBlock<T>],
    alpha: f64,
    rz: f64,
) -> Result<Sums> {
    let cores: Vec<&BlockCore<T>> = blocks.iter().map(|b| &b.core).collect();
    for blk in blocks {
        blk.core
            .engine
            .write(&blk.core.coef, 0, &[T::from_f64(alpha), T::zero()]);
    }
    let launches: Vec<PhaseLaunches<'_>> = blocks
        .iter()
        .map(|b| PhaseLaunches {
            update: vec![&b.xr],
            ..Default::default()
        })
        .collect();
    let parts = host.phase(&cores, &launches)?;
    let mut s = Sums::default();
    for (b, p) in blocks.iter().zip(&parts) {
        let u = b.core.sums(p, &[&b.xr]);
        s.rz += u[0];
        s.rr += u[1];
    }
    let mut v = [s.rz, s.rr];
    host.sum(&mut v);
    [s.rz, s.rr] = v;
    if !s.rr.is_finite() || !s.rz.is_finite() || s.rr.sqrt() <= host.threshold {
        return Ok(s);
    }
    let beta = s.rz / rz;
    for blk in blocks {
        blk.core
            .engine
            .write(&blk.core.coef, 1, &[T::from_f64(beta)]);
    }
    let launches: Vec<PhaseLaunches<'_>> = blocks
        .iter()
        .map(|b| PhaseLaunches {
            update: vec![&b.direction],
            gather: Some((&b.gather, &b.p_ext)),
            interior: Some(&b.interior),
            boundary: Some(&b.boundary),
            no_sums: false,
        })
        .collect();
    let parts = host.phase(&cores, &launches)?;
    for (b, p) in blocks.iter().zip(&parts) {
        let q = b.core.sums(p, &[&b.interior, &b.boundary]);
        s.pap += q[0];
        s.apdap += q[1];
    }
    let mut v = [s.pap, s.apdap];
    host.sum(&mut v);
    [s.pap, s.apdap] = v;
    Ok(s)
}

/// CG (pipelined or classical, `opts.variant`) over `engines`; returns x, the host (its timings) and the blocks' cores.
pub(super) fn solve<'a, T: Scalar>(
    mut host: Host<'a, T>,
    mut setup: Setup<'_, T>,
    monitor: &mut dyn Monitor,
    report: &mut SolveReport,
) -> Result<Solved<'a, T>> {
    let blocks = setup.blocks(&host.exchange, |engine, local, dinv, send| {
        let d = dinv.map(|d| local.gather(d));
        CgBlock::new(engine, local, d, send)
    })?;
    let (dinv, opts) = (&setup.dinv, setup.opts);
    let classical = opts.variant == crate::base::Variant::Classical;
    let mut x = setup.x0(host.a.nrows());
    let b_norm = report.b_norm;
    let rel_target = host.threshold / if b_norm > 0.0 { b_norm } else { 1.0 };
    let counts0 = blocks[0].core.engine.counters().snapshot();
    let mut run = Run::new(monitor);
    let mut restarts = Restarts::default();
    let mut totals = LoopTotals::default();
    let (reason, true_rel) = loop {
        let (mut rz, mut rr) = start_from(&host, &blocks, dinv, &x);
        run.push(rr.sqrt());
        // The first product of p belongs to the (re)start, not to an iteration.
        let mut prod =
            if rr.is_finite() && rr.sqrt() > host.threshold && run.iterations() < opts.max_iter {
                Some(step(&mut host, &blocks, None)?)
            } else {
                None
            };
        run.monitor.on_loop_start();
        let t = Instant::now();
        host.mark_loop();
        let c0 = blocks[0].core.engine.counters().snapshot();
        let end = loop {
            if !rr.is_finite() || !rz.is_finite() {
                break Some(StopReason::NonFinite {
                    quantity: "residual".into(),
                });
            }
            if rr.sqrt() <= host.threshold {
                break None;
            }
            if run.monitor.cancelled() {
                break Some(StopReason::Cancelled);
            }
            let Some(s) = prod.filter(|_| run.iterations() < opts.max_iter) else {
                break Some(StopReason::MaxIterations);
            };
            if !s.pap.is_finite() || !s.apdap.is_finite() {
                break Some(StopReason::NonFinite {
                    quantity: "<p, Ap>".into(),
                });
            }
            if s.pap <= 0.0 {
                break Some(StopReason::NotSpd);
            }
            if rz == 0.0 {
                break Some(StopReason::Breakdown {
                    quantity: "<r, z>".into(),
                });
            }
            let alpha = rz / s.pap;
            let next = if classical {
                classical_step(&mut host, &blocks, alpha, rz)?
            } else {
                // Paper 000, Alg. 2 (eq. 3): the α and β update_cg computes on one device.
                let beta = alpha * alpha * s.apdap / rz - 1.0;
                step(&mut host, &blocks, Some((alpha, beta)))?
            };
            rz = next.rz;
            rr = next.rr;
            run.recorded += 1;
            run.push(rr.sqrt());
            prod = Some(next);
        };
        let cores: Vec<&BlockCore<T>> = blocks.iter().map(|b| &b.core).collect();
        let xs: Vec<&wgpu::Buffer> = blocks.iter().map(|b| &b.x).collect();
        let (xn, true_rel) = host.end_loop(&cores, &xs, (&c0, t), &mut totals, b_norm)?;
        x = xn;
        let it = run.iterations();
        if let Some(stop) = restarts.decide(end, (true_rel, rel_target), (it, opts.max_iter), false)
        {
            break stop;
        }
        run.history.pop();
    };
    report.loop_seconds = totals.seconds;
    let k = blocks.len();
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
