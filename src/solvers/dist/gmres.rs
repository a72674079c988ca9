//! GMRES(m) on several devices: the "simpler GMRES" of [`crate::cpu::gmres`] (Walker & Zhou,
//! paper 000 Alg. 6's form: r₀ is not updated inside a cycle, x = x₀ + M⁻¹ Σ ηᵢ vᵢ₋₁) with
//! classical Gram–Schmidt twice (CGS2) and right Jacobi or no preconditioner.
//!
//! Step i of a cycle is two phases on every device:
//!
//! ```text
//!  A: dist_gmres_prepare   v_{i−1} = (w − Σ c_k v_k)/R_{i−1,i−1},  z = D⁻¹v_{i−1}
//!     dist_gather          z's sent entries                                  → read, exchange
//!     dist_gmres_spmv_dots w = A z (interior rows, then boundary rows) with ⟨w,w⟩, ⟨v_k,w⟩, k < i
//!  B: dist_gmres_orth      w −= Σ_{k≥1} h_k v_k (first CGS pass), with ⟨w,w⟩, ⟨v_k,w⟩ again
//! ```
//!
//! The host adds each phase's inner products over workgroups and devices in f64, keeps R, ξ
//! and the Walker–Zhou estimate, and hands the second pass's coefficients c_k and 1/R_ii to
//! the next step's prepare (the second pass's update is fused with the normalisation):
//! R_ii² = ‖w‖² − Σ c_k² after the second pass, ξ_i = ρ₀⟨v₀, w⟩/R_ii. Step 1 has nothing to
//! orthogonalise against (v₀ is not in the orthonormal set) and runs phase A only.
//!
//! A cycle ends as [`crate::cpu::gmres`]'s does (threshold, iteration limit, truncation at
//! ε^(1/3)·ρ₀, or the breakdown R_ii ≤ ε‖Av‖); the host solves R η = ξ, and the next phase —
//! `dist_gmres_update_x` (x += D⁻¹ Σ η_k v_{k−1}), x's halo, `dist_gmres_residual`
//! (w = b − Ax with ‖w‖²) — both closes the cycle and starts the next from the recomputed
//! residual. A cycle whose estimate met the threshold ends the solve once that residual
//! confirms it; then the true residual in f64 on the host decides, as for CG.

use std::time::Instant;

use super::block::{BlockCore, Launch, Rows, poisoned};
use super::{Host, LoopTotals, PhaseLaunches, Restarts, Run, Setup, Solved};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{Monitor, SolveReport, StopReason};
use crate::cpu::gmres::{MAX_GAP_RESTARTS, STAGNATION_CYCLES, is_stagnant, stagnation_detail};
use crate::gpu::Engine;
use crate::gpu::shader::PoolLayout;
use crate::matrix::partition::LocalPart;
use crate::solvers::pool::PoolBuffers;

/// Mirrors `struct DistGm` of `shaders/lib/dist_basis.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct DistGm {
    n: u32,
    count: u32,
    dest: u32,
    nsub: u32,
}

/// One device's GMRES vectors and launches.
pub(super) struct GmresBlock<T> {
    pub(super) core: BlockCore<T>,
    /// `[x; x_halo]`: the restart residual multiplies x.
    x_ext: wgpu::Buffer,
    /// `[z; z_halo]`, z = D⁻¹ v_{i−1}: what the step's product multiplies.
    z_ext: wgpu::Buffer,
    hcoef: wgpu::Buffer,
    gm: wgpu::Buffer,
    /// The storage bindings the block's basis spreads over.
    basis_parts: u8,
    prepare: Option<Launch>,
    gather_z: Option<Launch>,
    product_interior: Option<Launch>,
    product_boundary: Option<Launch>,
    orth: Option<Launch>,
    update_x: Option<Launch>,
    gather_x: Option<Launch>,
    residual_interior: Option<Launch>,
    residual_boundary: Option<Launch>,
}

impl<T: Scalar> GmresBlock<T> {
    fn new(
        engine: Engine,
        local: LocalPart<T>,
        dinv: Option<Vec<T>>,
        rhs: Vec<T>,
        send: &[u32],
        m: usize,
    ) -> Result<Self> {
        let quads = quads_for(m);
        // Slots: the product's interior and boundary sums interleaved (0, 1, 2, … for quads
        // 0, 0, 1, …), then the orthogonalisation's.
        let core = BlockCore::new(engine, local, send, 3 * quads, dinv.is_some())?;
        let e = &core.engine;
        let nloc = core.local.nloc();
        let next = nloc + core.local.halo.len();
        let x_ext = poisoned::<T>(e, "dist gmres x_ext", next)?;
        let z_ext = poisoned::<T>(e, "dist gmres z_ext", next)?;
        let w = poisoned::<T>(e, "dist gmres w", nloc)?;
        // Over as many bindings as the block's basis needs (lib/dist_pool.wgsl).
        let basis = PoolBuffers::poisoned::<T>(
            e,
            &format!(
                "a block's GMRES({m}) basis ({m} vectors of {nloc} entries; use more devices or a \
                 smaller --restart)"
            ),
            m,
            nloc,
        )?;
        let hcoef = e.storage_zeroed::<T>("dist gmres hcoef", m + 2)?;
        let gm = e.uniform_from("dist gmres step", &DistGm::default());
        let rhs = e.storage_from("dist gmres b", &rhs)?;
        let dinv = e.storage_from("dist dinv", &dinv.unwrap_or_else(|| vec![T::one()]))?;
        let mut shared = vec![(9, &w), (10, &dinv), (21, &hcoef), (22, &gm), (24, &rhs)];
        shared.extend(basis.entries_at(PoolLayout::Dist));
        let parts = basis.parts();
        let z_vecs: Vec<(u32, &wgpu::Buffer)> =
            std::iter::once((8, &z_ext)).chain(shared.clone()).collect();
        let x_vecs: Vec<(u32, &wgpu::Buffer)> =
            std::iter::once((8, &x_ext)).chain(shared).collect();
        let (k_prep, k_gather, k_spmv, k_orth, k_upd, k_res) = (
            core.pool_kernel("dist_gmres_prepare", parts)?,
            core.kernel("dist_gather")?,
            core.pool_kernel("dist_gmres_spmv_dots", parts)?,
            core.pool_kernel("dist_gmres_orth", parts)?,
            core.pool_kernel("dist_gmres_update_x", parts)?,
            core.kernel("dist_gmres_residual")?,
        );
        Ok(GmresBlock {
            prepare: core.launch(&k_prep, Rows::All, None, &z_vecs),
            gather_z: core.launch(&k_gather, Rows::Send, None, &z_vecs),
            product_interior: core.launch_quads(&k_spmv, Rows::Interior, Some(0), 2, &z_vecs),
            product_boundary: core.launch_quads(&k_spmv, Rows::Boundary, Some(1), 2, &z_vecs),
            orth: core.launch_quads(&k_orth, Rows::All, Some(2 * quads), 1, &z_vecs),
            update_x: core.launch(&k_upd, Rows::All, None, &x_vecs),
            gather_x: core.launch(&k_gather, Rows::Send, None, &x_vecs),
            residual_interior: core.launch(&k_res, Rows::Interior, Some(0), &x_vecs),
            residual_boundary: core.launch(&k_res, Rows::Boundary, Some(1), &x_vecs),
            x_ext,
            z_ext,
            hcoef,
            gm,
            basis_parts: parts,
            core,
        })
    }

    /// Writes the step's counts and coefficients (`hcoef[0..]`).
    fn set_step(&self, count: usize, target: usize, nsub: usize, coef: &[f64]) {
        let e = &self.core.engine;
        let gm = DistGm {
            n: self.core.local.nloc() as u32,
            count: count as u32,
            dest: target as u32,
            nsub: nsub as u32,
        };
        e.write(&self.gm, 0, &[gm]);
        let c: Vec<T> = coef.iter().map(|&v| T::from_f64(v)).collect();
        e.write(&self.hcoef, 0, &c);
    }
}

/// Quads of sums a step with up to `m` basis inner products (and ⟨w,w⟩) writes.
fn quads_for(m: usize) -> u32 {
    (m + 1).div_ceil(4) as u32
}

/// Phase A of step `i`: v_{i−1} finalised with `scale` and the second-pass coefficients
/// `c` (c[k−1] for v_k), then w = A z with ⟨w,w⟩ and ⟨v_k,w⟩ for k < i, summed over devices.
fn product<T: Scalar>(
    host: &mut Host<'_, T>,
    blocks: &[GmresBlock<T>],
    i: usize,
    scale: f64,
    c: &[f64],
) -> Result<Vec<f64>> {
    let coef: Vec<f64> = std::iter::once(scale).chain(c.iter().copied()).collect();
    let quads = quads_for(i);
    for blk in blocks {
        blk.set_step(i, i - 1, c.len(), &coef);
        for l in [&blk.product_interior, &blk.product_boundary]
            .into_iter()
            .flatten()
        {
            l.set_quads(quads);
        }
    }
    let launches: Vec<PhaseLaunches<'_>> = blocks
        .iter()
        .map(|b| PhaseLaunches {
            update: vec![&b.prepare],
            gather: Some((&b.gather_z, &b.z_ext)),
            interior: Some(&b.product_interior),
            boundary: Some(&b.product_boundary),
            no_sums: false,
        })
        .collect();
    let cores: Vec<&BlockCore<T>> = blocks.iter().map(|b| &b.core).collect();
    let parts = host.phase(&cores, &launches)?;
    let mut s = vec![0.0; i + 1];
    for (b, p) in blocks.iter().zip(&parts) {
        for l in [&b.product_interior, &b.product_boundary] {
            add_into(&mut s, &b.core.sums_wide(p, l));
        }
    }
    host.sum(&mut s);
    Ok(s)
}

/// Phase B of step `i`: w −= Σ_k h[k−1] v_k (k = 1..i−1), then ⟨w,w⟩ and ⟨v_k,w⟩ for k < i.
fn orthogonalize<T: Scalar>(
    host: &mut Host<'_, T>,
    blocks: &[GmresBlock<T>],
    i: usize,
    h: &[f64],
) -> Result<Vec<f64>> {
    let coef: Vec<f64> = std::iter::once(0.0).chain(h.iter().copied()).collect();
    for blk in blocks {
        blk.set_step(i, 0, h.len(), &coef);
        if let Some(l) = &blk.orth {
            l.set_quads(quads_for(i));
        }
    }
    let launches: Vec<PhaseLaunches<'_>> = blocks
        .iter()
        .map(|b| PhaseLaunches {
            update: vec![&b.orth],
            ..Default::default()
        })
        .collect();
    let cores: Vec<&BlockCore<T>> = blocks.iter().map(|b| &b.core).collect();
    let parts = host.phase(&cores, &launches)?;
    let mut s = vec![0.0; i + 1];
    for (b, p) in blocks.iter().zip(&parts) {
        add_into(&mut s, &b.core.sums_wide(p, &b.orth));
    }
    host.sum(&mut s);
    Ok(s)
}

/// The restart phase: x += D⁻¹ Σ η_k v_{k−1} (when `eta` is not empty), x's halo, and
/// w = b − Ax; returns ‖w‖.
fn restart_residual<T: Scalar>(
    host: &mut Host<'_, T>,
    blocks: &[GmresBlock<T>],
    eta: &[f64],
) -> Result<f64> {
    let coef: Vec<f64> = std::iter::once(0.0).chain(eta.iter().copied()).collect();
    if !eta.is_empty() {
        for blk in blocks {
            blk.set_step(eta.len(), 0, 0, &coef);
        }
    }
    let launches: Vec<PhaseLaunches<'_>> = blocks
        .iter()
        .map(|b| PhaseLaunches {
            update: if eta.is_empty() {
                Vec::new()
            } else {
                vec![&b.update_x]
            },
            gather: Some((&b.gather_x, &b.x_ext)),
            interior: Some(&b.residual_interior),
            boundary: Some(&b.residual_boundary),
            no_sums: false,
        })
        .collect();
    let cores: Vec<&BlockCore<T>> = blocks.iter().map(|b| &b.core).collect();
    let parts = host.phase(&cores, &launches)?;
    let mut rr = 0.0;
    for (b, p) in blocks.iter().zip(&parts) {
        rr += b
            .core
            .sums(p, &[&b.residual_interior, &b.residual_boundary])[0];
    }
    let mut v = [rr];
    host.sum(&mut v);
    Ok(v[0].sqrt())
}

fn add_into(total: &mut [f64], more: &[f64]) {
    for (t, m) in total.iter_mut().zip(more) {
        *t += m;
    }
}

/// Writes x (global order) into every device's `[x; x_halo]` (the halo follows from the
/// restart phase's exchange).
fn upload_x<T: Scalar>(blocks: &[GmresBlock<T>], x: &[T]) {
    for blk in blocks {
        blk.core
            .engine
            .write(&blk.x_ext, 0, &blk.core.local.gather(x));
    }
}

/// How the cycles ended: `None` when the recurrence met the threshold (the host's true
/// residual decides), else the stop; with its detail for a stagnation.
type CyclesEnd = Option<(StopReason, Option<String>)>;

/// Restarted GMRES(m) from the x on the devices until a stop (see the module docs).
fn cycles<T: Scalar>(
    host: &mut Host<'_, T>,
    blocks: &[GmresBlock<T>],
    run: &mut Run<'_>,
    m: usize,
    max_iter: usize,
) -> Result<CyclesEnd> {
    let threshold = host.threshold;
    let mut eta: Vec<f64> = Vec::new();
    // The last cycle: (ρ₀ at its start, its final estimate, steps, breakdown).
    let mut last: Option<(f64, f64, usize, bool)> = None;
    let (mut gap_cycles, mut flat_cycles, mut flat_from) = (0usize, 0usize, 0.0);
    loop {
        let rho0 = restart_residual(host, blocks, &eta)?;
        if last.is_none() && run.history.is_empty() {
            run.push(rho0);
        }
        if !rho0.is_finite() {
            return Ok(Some((non_finite("<r, r>"), None)));
        }
        match last {
            None if rho0 <= threshold => return Ok(None),
            None => {}
            Some((_, _, _, true)) if rho0 <= threshold => return Ok(None),
            Some((_, _, _, true)) => {
                let reason = StopReason::Breakdown {
                    quantity: "R_ii".into(),
                };
                return Ok(Some((reason, None)));
            }
            Some((start, est, steps, false)) => {
                if est <= threshold {
                    if rho0 <= threshold {
                        return Ok(None);
                    }
                    if rho0 > 0.5 * start {
                        gap_cycles += 1;
                    }
                    if gap_cycles >= MAX_GAP_RESTARTS || run.iterations() >= max_iter {
                        return Ok(None);
                    }
                }
                let full = steps == m && run.iterations() < max_iter;
                if full && is_stagnant(start, rho0) {
                    if flat_cycles == 0 {
                        flat_from = start;
                    }
                    flat_cycles += 1;
                    if flat_cycles >= STAGNATION_CYCLES {
                        let it = run.iterations();
                        let detail = stagnation_detail(it, flat_from, rho0, flat_cycles, m);
                        return Ok(Some((StopReason::Stagnation, Some(detail))));
                    }
                } else {
                    flat_cycles = 0;
                }
            }
        }
        if run.iterations() >= max_iter {
            return Ok(Some((StopReason::MaxIterations, None)));
        }
        if run.monitor.cancelled() {
            return Ok(Some((StopReason::Cancelled, None)));
        }
        *run.cycles.get_or_insert(0) += 1;
        let (end, cycle) = cycle(host, blocks, run, m, max_iter, rho0)?;
        if let Some(stop) = end {
            return Ok(Some((stop, None)));
        }
        eta = cycle.eta;
        last = Some((rho0, cycle.estimate, cycle.steps, cycle.breakdown));
    }
}

/// What a cycle leaves: the update's coefficients, its last estimate, its steps, and whether
/// it ended in a breakdown.
struct Cycle {
    eta: Vec<f64>,
    estimate: f64,
    steps: usize,
    breakdown: bool,
}

/// One cycle of GMRES(m) from the residual in `w` with norm `rho0`. A stop inside the cycle
/// (non-finite values, a cancel request) comes back as its reason; x keeps the previous
/// cycle's update.
fn cycle<T: Scalar>(
    host: &mut Host<'_, T>,
    blocks: &[GmresBlock<T>],
    run: &mut Run<'_>,
    m: usize,
    max_iter: usize,
    rho0: f64,
) -> Result<(Option<StopReason>, Cycle)> {
    let threshold = host.threshold;
    let truncate = T::PRECISION.epsilon().cbrt() * rho0;
    // rmat[i][k] = R_{k,i} (1-based i, k ≤ i); xi[i] = ξ_i; v0v[k] = ⟨v₀, v_k⟩ = ξ_k/ρ₀.
    let mut rmat = vec![vec![0.0; m + 1]; m + 1];
    let mut xi = vec![0.0; m + 1];
    let mut v0v = vec![0.0; m + 1];
    let mut est = rho0;
    let (mut scale, mut corr) = (1.0 / rho0, Vec::new());
    let mut out = Cycle {
        eta: Vec::new(),
        estimate: est,
        steps: 0,
        breakdown: false,
    };
    for i in 1..=m {
        if run.monitor.cancelled() {
            return Ok((Some(StopReason::Cancelled), out));
        }
        // Phase A: v_{i−1} and w = A M⁻¹ v_{i−1} with the first pass's inner products.
        let d = product(host, blocks, i, scale, &corr)?;
        let w_norm = d[0].sqrt();
        if !w_norm.is_finite() {
            return Ok((Some(non_finite("A v")), out));
        }
        let (ww, v0w) = if i > 1 {
            // First pass: h_k = ⟨v_k, w⟩ (k = 1..i−1), applied by phase B, which returns the
            // second pass's e_k = ⟨v_k, w'⟩ (and ⟨v₀, w'⟩, ‖w'‖²).
            let h = &d[2..=i];
            let e = orthogonalize(host, blocks, i, h)?;
            let c = &e[2..=i];
            for k in 1..i {
                rmat[i][k] = h[k - 1] + c[k - 1];
            }
            let ww = e[0] - c.iter().map(|v| v * v).sum::<f64>();
            let v0w = e[1] - (1..i).map(|k| c[k - 1] * v0v[k]).sum::<f64>();
            corr = c.to_vec();
            (ww, v0w)
        } else {
            corr = Vec::new();
            (d[0], d[1])
        };
        let rii = ww.max(0.0).sqrt();
        if !rii.is_finite() || !v0w.is_finite() {
            return Ok((Some(non_finite("R_ii")), out));
        }
        if w_norm == 0.0 || crate::cpu::is_breakdown::<T>(rii, w_norm) {
            out.breakdown = true;
            break;
        }
        rmat[i][i] = rii;
        v0v[i] = v0w / rii;
        xi[i] = rho0 * v0v[i];
        scale = 1.0 / rii;
        // Walker–Zhou: ‖r_i‖² = ‖r_{i−1}‖² − ξ_i², as (‖r‖ − |ξ|)(‖r‖ + |ξ|).
        let a = xi[i].abs();
        est = if a < est {
            ((est - a) * (est + a)).sqrt()
        } else {
            0.0
        };
        out.steps = i;
        out.estimate = est;
        run.recorded += 1;
        run.push(est);
        if !est.is_finite() {
            return Ok((Some(non_finite("xi")), out));
        }
        if est <= threshold || run.iterations() >= max_iter || est <= truncate {
            break;
        }
    }
    // R η = ξ by back substitution.
    let k = out.steps;
    let mut eta = vec![0.0; k + 1];
    for i in (1..=k).rev() {
        let s = xi[i] - (i + 1..=k).map(|l| rmat[l][i] * eta[l]).sum::<f64>();
        eta[i] = s / rmat[i][i];
    }
    out.eta = eta[1..].to_vec();
    Ok((None, out))
}

fn non_finite(quantity: &str) -> StopReason {
    StopReason::NonFinite {
        quantity: quantity.into(),
    }
}

/// GMRES(m) over the devices of `setup`; returns x, the host (its timings) and the blocks'
/// cores.
pub(super) fn solve<'a, T: Scalar>(
    mut host: Host<'a, T>,
    mut setup: Setup<'_, T>,
    monitor: &mut dyn Monitor,
    report: &mut SolveReport,
) -> Result<Solved<'a, T>> {
    let opts = setup.opts;
    let n = host.a.nrows();
    let m = opts.restart.min(n).max(1);
    let b = host.b;
    let blocks = setup.blocks(&host.exchange, |engine, local, dinv, send| {
        let d = dinv.map(|d| local.gather(d));
        let rhs = local.gather(b);
        GmresBlock::new(engine, local, d, rhs, send, m)
    })?;
    let most = blocks.iter().map(|b| b.basis_parts).max().unwrap_or(1);
    if most > 1 {
        report.notes.push(format!(
            "a block's GMRES({m}) basis exceeds one storage binding: held in up to {most} bindings"
        ));
    }
    let mut x = setup.x0(n);
    let b_norm = report.b_norm;
    let rel_target = host.threshold / if b_norm > 0.0 { b_norm } else { 1.0 };
    let counts0 = blocks[0].core.engine.counters().snapshot();
    let mut run = Run::new(monitor);
    let mut restarts = Restarts::default();
    let mut totals = LoopTotals::default();
    let mut stagnation = None;
    let (reason, true_rel) = loop {
        upload_x(&blocks, &x);
        run.monitor.on_loop_start();
        let t = Instant::now();
        host.mark_loop();
        let c0 = blocks[0].core.engine.counters().snapshot();
        let end = cycles(&mut host, &blocks, &mut run, m, opts.max_iter)?;
        let cores: Vec<&BlockCore<T>> = blocks.iter().map(|b| &b.core).collect();
        let xs: Vec<&wgpu::Buffer> = blocks.iter().map(|b| &b.x_ext).collect();
        let (xn, true_rel) = host.end_loop(&cores, &xs, (&c0, t), &mut totals, b_norm)?;
        x = xn;
        let it = run.iterations();
        let end = end.map(|(reason, detail)| {
            stagnation = detail;
            reason
        });
        if let Some(stop) = restarts.decide(end, (true_rel, rel_target), (it, opts.max_iter), false)
        {
            break stop;
        }
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
    if let (StopReason::Stagnation, Some(detail)) = (&report.reason, stagnation) {
        report.reason_detail = detail;
    }
    Ok((x, host, blocks.into_iter().map(|b| b.core).collect()))
}
