//! BiCGStab on several devices, right-preconditioned (r̂ = r0, right Jacobi: p̂ = D⁻¹p,
//! ŝ = D⁻¹s), in one of two recurrences of [`crate::cpu::bicgstab`]:
//!
//! **Pipelined** (paper 000, Alg. 4; the default): two phases per iteration, one per product —
//!
//! 1. s = r − αAp with ⟨s, s⟩ (`dist_bicgstab_s`) and its sent entries; As = A·ŝ with
//!    ⟨As, r̂⟩, ⟨As, As⟩, ⟨As, s⟩ → ω = ⟨As, s⟩/⟨As, As⟩ and β = −⟨As, r̂⟩/⟨Ap, r̂⟩ (Alg. 4
//!    l.13: ⟨s, r̂⟩ = 0 by the choice of α), or the early exit when ‖s‖ already meets the
//!    tolerance (x += αp̂ alone);
//! 2. x += αp̂ + ωŝ, r = s − ωAs with ⟨r, r⟩, ⟨r, r̂⟩ (`dist_bicgstab_xr`), then
//!    p = r + β(p − ωAp) (`dist_bicgstab_p`) in the same submit, p's sent entries; Ap = A·p̂
//!    with ⟨Ap, r̂⟩, ⟨Ap, Ap⟩ → the residual ‖r‖ (reduced directly, not the cancelling
//!    estimate), ρ = ⟨r, r̂⟩ and α = ρ/⟨Ap, r̂⟩ of the next iteration.
//!
//! Four host round trips per iteration with a halo (two per phase), two without. The last
//! iteration's product Ap is not needed (one SpMV more than the solve uses).
//!
//! **Classical** (Alg. 3): three phases per iteration — p = r + β(p − ωAp) and Ap; s and As;
//! x and r with ⟨r, r⟩, ⟨r, r̂⟩ → β = (⟨r, r̂⟩new/⟨r, r̂⟩)(α/ω): five round trips with a halo.
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

/// Where one (re)start's inner loop begins: ρ = ⟨r, r̂⟩, ‖r‖ (= ‖r̂‖), the threshold.
struct Inner {
    rho: f64,
    res: f64,
    rstar_norm: f64,
    threshold: f64,
    max_iter: usize,
}

/// The checks at the top of every iteration: `Some` ends the inner loop.
fn top_checks<T: Scalar>(run: &Run<'_>, st: &Inner, rho: f64, res: f64) -> Option<End> {
    if !res.is_finite() {
        return Some(Some(StopReason::NonFinite {
            quantity: "residual".into(),
        }));
    }
    if res <= st.threshold {
        return Some(None);
    }
    if run.monitor.cancelled() {
        return Some(Some(StopReason::Cancelled));
    }
    if run.iterations() >= st.max_iter {
        return Some(Some(StopReason::MaxIterations));
    }
    if is_breakdown::<T>(rho, res * st.rstar_norm) {
        return Some(Some(StopReason::Breakdown {
            quantity: "<r, r0*>".into(),
        }));
    }
    None
}

/// ⟨Ap, r̂⟩ not finite or at the breakdown level: `Some` ends the inner loop.
fn ap_checks<T: Scalar>(st: &Inner, apr: f64, apap: f64) -> Option<End> {
    if !apr.is_finite() || !apap.is_finite() {
        return Some(Some(StopReason::NonFinite {
            quantity: "<Ap, r0*>".into(),
        }));
    }
    if is_breakdown::<T>(apr, apap.sqrt() * st.rstar_norm) {
        return Some(Some(StopReason::Breakdown {
            quantity: "<Ap, r0*>".into(),
        }));
    }
    None
}

/// ω from ⟨As, s⟩, ⟨As, As⟩ and ‖s‖, or the omega breakdown.
fn omega_of<T: Scalar>(ass: f64, asas: f64, s_norm: f64) -> std::result::Result<f64, End> {
    if asas <= 0.0 || is_breakdown::<T>(ass, asas.sqrt() * s_norm) {
        return Err(Some(StopReason::Breakdown {
            quantity: "omega".into(),
        }));
    }
    Ok(ass / asas)
}

/// The half step (‖s‖ meets the tolerance): x += αp̂ with ω = 0 (r = s), one phase.
fn half_step<T: Scalar>(sv: &mut Solver<'_, '_, T>, alpha: f64) -> Result<f64> {
    sv.coef(alpha, 0.0, 0.0);
    let [[rr, _, _]] = sv.phase(
        |b| PhaseLaunches {
            update: vec![&b.xr_update],
            ..Default::default()
        },
        [&|b| vec![&b.xr_update]],
    )?;
    Ok(rr.sqrt())
}

/// s = r − αAp and As = A·ŝ (one phase): [⟨As, r̂⟩, ⟨As, As⟩, ⟨As, s⟩] and ⟨s, s⟩.
fn s_phase<T: Scalar>(sv: &mut Solver<'_, '_, T>, alpha: f64) -> Result<([f64; 3], f64)> {
    sv.coef(alpha, 0.0, 0.0);
    let [as_sums, [ss, _, _]] = sv.phase(
        |b| PhaseLaunches {
            update: vec![&b.s_update],
            gather: Some((&b.s_gather, &b.s_ext)),
            interior: Some(&b.as_interior),
            boundary: Some(&b.as_boundary),
            no_sums: false,
        },
        [&|b| vec![&b.as_interior, &b.as_boundary], &|b| {
            vec![&b.s_update]
        }],
    )?;
    Ok((as_sums, ss))
}

/// Pipelined BiCGStab's inner loop (Alg. 4, two phases per iteration; module docs).
fn pipelined_loop<T: Scalar>(
    sv: &mut Solver<'_, '_, T>,
    run: &mut Run<'_>,
    st: Inner,
) -> Result<End> {
    let (mut rho, mut res) = (st.rho, st.res);
    // The first product: p = r, its halo uploaded by the restart.
    let [[mut apr, mut apap, _]] = sv.phase(
        |b| PhaseLaunches {
            interior: Some(&b.ap_interior),
            boundary: Some(&b.ap_boundary),
            ..Default::default()
        },
        [&|b| vec![&b.ap_interior, &b.ap_boundary]],
    )?;
    loop {
        if let Some(end) = top_checks::<T>(run, &st, rho, res) {
            return Ok(end);
        }
        if let Some(end) = ap_checks::<T>(&st, apr, apap) {
            return Ok(end);
        }
        let alpha = rho / apr;
        let ([asr, asas, ass], ss) = s_phase(sv, alpha)?;
        let s_norm = ss.sqrt();
        if s_norm <= st.threshold {
            res = half_step(sv, alpha)?;
            run.recorded += 1;
            run.push(res);
            continue;
        }
        let omega = match omega_of::<T>(ass, asas, s_norm) {
            Ok(w) => w,
            Err(end) => return Ok(end),
        };
        run.recorded += 1;
        // Alg. 4 l.13.
        let beta = -asr / apr;
        if !beta.is_finite() {
            return Ok(Some(StopReason::NonFinite {
                quantity: "beta".into(),
            }));
        }
        // x, r, then p in one submit, and the next product Ap.
        sv.coef(alpha, beta, omega);
        let [[rr, rho_new, _], [apr_new, apap_new, _]] = sv.phase(
            |b| PhaseLaunches {
                update: vec![&b.xr_update, &b.p_update],
                gather: Some((&b.p_gather, &b.p_ext)),
                interior: Some(&b.ap_interior),
                boundary: Some(&b.ap_boundary),
                no_sums: false,
            },
            [&|b| vec![&b.xr_update], &|b| {
                vec![&b.ap_interior, &b.ap_boundary]
            }],
        )?;
        res = rr.sqrt();
        run.push(res);
        rho = rho_new;
        (apr, apap) = (apr_new, apap_new);
    }
}

/// Classical BiCGStab's inner loop (Alg. 3, three phases per iteration; module docs).
fn classical_loop<T: Scalar>(
    sv: &mut Solver<'_, '_, T>,
    run: &mut Run<'_>,
    st: Inner,
) -> Result<End> {
    let (mut rho, mut res) = (st.rho, st.res);
    // β and ω of the last iteration (None: p is r, its halo uploaded by the restart).
    let mut last: Option<(f64, f64)> = None;
    loop {
        if let Some(end) = top_checks::<T>(run, &st, rho, res) {
            return Ok(end);
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
                no_sums: false,
            },
            [&|b| vec![&b.ap_interior, &b.ap_boundary]],
        )?;
        if let Some(end) = ap_checks::<T>(&st, apr, apap) {
            return Ok(end);
        }
        let alpha = rho / apr;
        // Phase 2: s = r − αAp and As = A·ŝ.
        let ([_, asas, ass], ss) = s_phase(sv, alpha)?;
        let s_norm = ss.sqrt();
        // The half step: ‖s‖ already meets the tolerance → x += αp̂ (ω = 0: r = s).
        if s_norm <= st.threshold {
            res = half_step(sv, alpha)?;
            run.recorded += 1;
            run.push(res);
            continue;
        }
        let omega = match omega_of::<T>(ass, asas, s_norm) {
            Ok(w) => w,
            Err(end) => return Ok(end),
        };
        run.recorded += 1;
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
        run.push(res);
        if !res.is_finite() || res <= st.threshold {
            continue;
        }
        let beta = (rho_new / rho) * (alpha / omega);
        if !beta.is_finite() {
            return Ok(Some(StopReason::NonFinite {
                quantity: "beta".into(),
            }));
        }
        rho = rho_new;
        last = Some((beta, omega));
    }
}

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
    let pipelined = opts.variant == crate::base::Variant::Pipelined;
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
        let (rho, res) = sv.start_from(&x);
        let rstar_norm = res;
        run.push(res);
        run.monitor.on_loop_start();
        let t = Instant::now();
        sv.host.mark_loop();
        let c0 = sv.blocks[0].core.engine.counters().snapshot();
        let state = Inner {
            rho,
            res,
            rstar_norm,
            threshold,
            max_iter: opts.max_iter,
        };
        let end = if pipelined {
            pipelined_loop(&mut sv, &mut run, state)?
        } else {
            classical_loop(&mut sv, &mut run, state)?
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
