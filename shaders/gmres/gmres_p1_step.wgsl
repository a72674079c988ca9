// gmres_p1_step: step i of p(1)-GMRES(m) in ONE launch (variant `p1`; Ghysels, Ashby,
// Meerbergen & Vanroose 2013 with shift 0 — the shift invariance of the Krylov space that
// paper 000 §3.3 names as the way to fewer kernels). Pipelined GMRES (Alg. 6) needs
// v_{i−1} normalised, a global reduction, before A·v_{i−1} can read it; fused GMRES hides
// that in two launches. Here a second basis u_j = A v_{j−1} is kept beside the v_j, and
//
//   u_i = A v_{i−1} = (A u_{i−1} − Σ_{j<i−1} R_{j,i−1} u_{j+1}) / R_{i−1,i−1}
//
// multiplies A by u_{i−1}, which the previous launch finished. So launch i
//   1. closes step p = i − 1 from the partial sums launch p left: R_{j,p} = ⟨u_p, v_j⟩
//      (j < p), R_{p,p} = √(‖u_p‖² − Σ_j R_{j,p}²), ξ_p = (⟨r, u_p⟩ − Σ_j R_{j,p} ξ_j)/R_{p,p},
//      the Walker–Zhou estimate and the stop tests (every workgroup redundantly);
//   2. per row of its product: v_p = (u_p − Σ_j R_{j,p} v_j)/R_{p,p} and u_i as above
//      (u_p and v_{p−1} divided by the lagged norm s_{p−1}, below);
//   3. the first stage of ⟨u_i, v_p⟩, ‖u_i‖², ⟨r, u_i⟩ (slot SPMV of its half) and of
//      ⟨u_i, v_j⟩ for j < p over the rows it wrote (the dots slots of its half).
// One global reduction per step. Launch i reads the slots of half (i − 1) mod 2 and writes
// those of half i mod 2 (a workgroup still reading must not see another's new partials):
// SPMV slot 1 + half; dots chunk q (four inner products) at slot 3 + 4⌊q/2⌋ + 2·half + q mod 2.
//
// R_{p,p} from Pythagoras is provisional. Launch p + 1 also sums ‖v_p‖² (the SPMV slot's
// fourth term), and launch p + 2 divides v_p (in place, row by row) and u_{p+1} (where it
// reads it) by s_p = ‖v_p‖ and corrects R_{p,p} ·= s_p, ξ_p /= s_p and step p's estimate
// (PETSc's PGMRES corrects its lagged norm the same way), so the basis stays normalised and
// V's loss of orthogonality is CGS's. A cycle's last step k keeps its provisional R_{k,k} and
// ξ_k (they go together; v_k is not in the update of x). Pythagoras loses accuracy as R_{p,p}
// shrinks against ‖u_p‖ (relative error about p·ε‖u_p‖²/R_{p,p}²): when ‖u_p‖² − Σ R² ≤
// √ε‖u_p‖² the cycle keeps its first p − 1 steps and stops with GM_STOP_LOST (the host
// restarts from the true residual and counts it).
//
// Step 1 (flag FIRST) finishes ρ0 = ‖r‖ (slot 0), tests it (MONITOR) and writes v_0 = r/ρ0
// (`gm_open_cycle`), then u_1 = A r/ρ0. Flag CLOSE_ONLY closes step p and writes v_p over a
// grid-stride loop (the end of a cycle; every step in `paper` mode, whose host reads the
// record); flag CLOSED (`paper` mode) takes R's column p as that launch left it. A cycle
// stopped by its estimate at step p writes the stop into the header and finishes the launch
// (v̂_{p−1}, v_p); the launches after it find the stop there.
//
// Parameters: comp_monitor = i, num = pool vector u_1 (u_j at num + j − 1), den = pool
// vector r, slot = step p's record ([‖u_p‖², R_{p,p}, ξ_p, ξ_{p−1} corrected]), comp =
// cycle-buffer index of the per-step scalars (step j at comp + 4j: ξ_j, estimate_j, ‖u_j‖²,
// s_j), dst = cycle-buffer index of R_{0,p} (R_{j,p} at dst + j), flags' bits 8… = m + 1
// (R's column stride). The restart length is at most P1_MAX (the coefficients of a step live
// in workgroup memory).

@group(0) @binding(11) var<storage, read> dinv: array<Real>;

const GM_FLAG_FIRST: u32 = 1u;
const GM_FLAG_MONITOR: u32 = 2u;
const GM_FLAG_CLOSE_ONLY: u32 = 4u;
const GM_FLAG_CLOSED: u32 = 8u;
const P1_MAX: u32 = 128u;

// Step p's coefficients at index j − 1, j = 1 … p − 1: for the v_j (R_{j,p}; the last one
// divided by s_{p−1}, as v_{p−1} is read before its rescaling) and for the u_{j+1}
// (R_{j,p}/s_j), and ξ_j.
var<workgroup> p1_cv: array<Real, P1_MAX>;
var<workgroup> p1_cu: array<Real, P1_MAX>;
var<workgroup> p1_xi: array<Real, P1_MAX>;
var<workgroup> gm_a: Real;
var<workgroup> gm_b: Real;
var<workgroup> gm_c: Real;
var<workgroup> p1_h_code: Real;
var<workgroup> p1_h_step: Real;

// Per dispatch: the step closed (p = i − 1), R_{p,p} (ρ0 in step 1), s_{p−1} (1 in steps 1
// and 2), the product's source.
var<private> p1_p: u32;
var<private> p1_div: Real;
var<private> p1_s: Real;
var<private> p1_first: bool;
// `paper` mode: the closing launch already rescaled v_{p−1} and wrote v_p.
var<private> p1_closed: bool;
var<private> p1_src: u32;

fn p1_dots_slot(q: u32, half: u32) -> u32 {
    return GM_SLOT_DOTS + 4u * (q / 2u) + 2u * half + (q % 2u);
}

// The product's input: u_{i−1} (r in step 1), D⁻¹ applied with Jacobi.
fn spmv_x(col: u32) -> Real {
    let v = pool_get(p1_src * params.n + col);
    if params.jacobi != 0u {
        return dinv[col] * v;
    }
    return v;
}

// Row `row` of v̂_{p−1} (rescaled in place), v_p and u_i from (A·u_p)[row] = `sum`; returns
// the row's terms of ⟨u_i, v_p⟩, ‖u_i‖², ⟨r, u_i⟩ and ‖v_p‖².
fn spmv_store(row: u32, sum: Real) -> vec4<Real> {
    let n = params.n;
    let i = params.comp_monitor;
    let u_at = (params.num + i - 1u) * n + row;
    let r = pool_get(params.den * n + row);
    if p1_first {
        let u = sum / p1_div;
        pool_set(u_at, u);
        return vec4<Real>(Real(0.0), u * u, r * u, Real(0.0));
    }
    let p = p1_p;
    var v = pool_get((params.num + p - 1u) * n + row) / p1_s;
    var u = sum / p1_s;
    // Two coefficients per round: four independent loads before their products.
    var j = 1u;
    for (; j + 2u <= p; j = j + 2u) {
        let v0 = pool_get(j * n + row);
        let v1 = pool_get((j + 1u) * n + row);
        let u0 = pool_get((params.num + j) * n + row);
        let u1 = pool_get((params.num + j + 1u) * n + row);
        v = v - p1_cv[j - 1u] * v0;
        v = v - p1_cv[j] * v1;
        u = u - p1_cu[j - 1u] * u0;
        u = u - p1_cu[j] * u1;
    }
    if j < p {
        v = v - p1_cv[j - 1u] * pool_get(j * n + row);
        u = u - p1_cu[j - 1u] * pool_get((params.num + j) * n + row);
    }
    u = u / p1_div;
    pool_set(u_at, u);
    if p1_closed {
        // v_p as the closing launch wrote it.
        v = pool_get(p * n + row);
        return vec4<Real>(u * v, u * u, r * u, v * v);
    }
    if p >= 2u {
        let at = (p - 1u) * n + row;
        pool_set(at, pool_get(at) / p1_s);
    }
    v = v / p1_div;
    pool_set(p * n + row, v);
    return vec4<Real>(u * v, u * u, r * u, v * v);
}

// The end of a cycle (no product): v̂_{p−1} = v_{p−1}/s_{p−1} and v_p = (û_p − Σ_j R_{j,p}
// v̂_j)/R_{p,p} over a grid-stride loop, from the coefficients in p1_cv.
fn p1_write_v(p: u32, rpp: Real, ids: Ids) {
    let n = params.n;
    for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + params.groups * WG) {
        var v = pool_get((params.num + p - 1u) * n + row) / p1_s;
        for (var j = 1u; j < p; j = j + 1u) {
            v = v - p1_cv[j - 1u] * pool_get(j * n + row);
        }
        if p >= 2u {
            let at = (p - 1u) * n + row;
            pool_set(at, pool_get(at) / p1_s);
        }
        pool_set(p * n + row, v / rpp);
    }
}

// Closes step p from `pre` (launch p's SPMV slot, finished: ⟨u_p, v_{p−1}⟩, ‖u_p‖², ⟨r, u_p⟩,
// ‖v_{p−1}‖²) and the dots slots of half p mod 2. First the lagged explicit norm
// s = ‖v_{p−1}‖ corrects step p − 1 (R_{p−1,p−1} ·= s, ξ_{p−1} /= s and its estimate; v_{p−1}
// and u_p are divided by s where they are read, v_{p−1} rescaled in place by the rows);
// then R_{j,p}, R_{p,p}, ξ_p, the estimate and the stop tests. Leaves the coefficients in
// p1_cv / p1_cu and s in p1_s. Returns R_{p,p}, or 0 when the cycle stopped here.
fn p1_close(p: u32, monitor: bool, pre: vec4<Real>, ids: Ids) -> Real {
    let g = params.groups;
    let half = p % 2u;
    // R_{j,p} = ⟨û_p, v_j⟩ for j ≤ p − 2 (raw sums over s), from the dots slots.
    if p >= 3u {
        for (var q = 0u; 4u * q < p - 2u; q = q + 1u) {
            let t = sum_partials(p1_dots_slot(q, half) * g, g, ids);
            if ids.lid < 4u && 4u * q + ids.lid < p - 2u {
                p1_cv[4u * q + ids.lid] = t[ids.lid];
            }
        }
    }
    var s = Real(1.0);
    if p >= 2u {
        s = sqrt(pre.w);
    }
    p1_s = s;
    let prev_at = params.comp + 4u * (p - 1u);
    if ids.lid == 0u {
        gm_a = scalars[GM_H_EPS];
        gm_b = scalars[prev_at];
        if p >= 2u {
            gm_c = scalars[prev_at - 4u + 1u];
        } else {
            gm_c = scalars[prev_at + 1u];
        }
    }
    // ξ̂_j and s_j of the earlier steps (corrected by their own closings).
    for (var j = ids.lid + 1u; j + 1u < p; j = j + WG) {
        p1_xi[j - 1u] = scalars[params.comp + 4u * j];
        p1_cu[j - 1u] = scalars[params.comp + 4u * j + 3u];
    }
    workgroupBarrier();
    let eps = workgroupUniformLoad(&gm_a);
    let xi_prev = workgroupUniformLoad(&gm_b) / s;
    let est_before = workgroupUniformLoad(&gm_c);
    // R_{j,p} (into p1_cv) and s_j (p1_cu) with step p − 1's from this launch's s.
    for (var j = ids.lid + 1u; j < p; j = j + WG) {
        if j + 1u == p {
            p1_cv[j - 1u] = pre.x / (s * s);
            p1_cu[j - 1u] = s;
            p1_xi[j - 1u] = xi_prev;
        } else {
            p1_cv[j - 1u] = p1_cv[j - 1u] / s;
        }
    }
    workgroupBarrier();
    // Σ_j R_{j,p}² and Σ_j R_{j,p} ξ̂_j.
    var t = vec4<Real>(Real(0.0));
    for (var j = ids.lid + 1u; j < p; j = j + WG) {
        let c = p1_cv[j - 1u];
        t = t + vec4<Real>(c * c, c * p1_xi[j - 1u], Real(0.0), Real(0.0));
    }
    let tot = sum_value(workgroup_total(sum_of(t), ids));
    let uu = pre.y / (s * s);
    let arg = uu - tot.x;
    let rpp = sqrt(max(arg, Real(0.0)));
    let xi = (pre.z / s - tot.y) / rpp;
    let at = params.comp + 4u * p;
    // R's column p; then the coefficients as the rows use them: R_{j,p}/s_j for the u_{j+1},
    // and R_{p−1,p}/s for v_{p−1}, which they read before rescaling it.
    for (var j = ids.lid + 1u; j < p; j = j + WG) {
        let c = p1_cv[j - 1u];
        if ids.wid.x == 0u {
            scalars[params.dst + j] = c;
        }
        p1_cu[j - 1u] = c / p1_cu[j - 1u];
        if j + 1u == p {
            p1_cv[j - 1u] = c / s;
        }
    }
    if is_leader(ids) {
        if p >= 2u {
            // Step p − 1 corrected: R_{p−1,p−1} (column stride m + 1 in the flags' high
            // bits), ξ_{p−1}, s_{p−1} (its estimate below).
            let r_prev = params.dst - (params.flags >> 8u) + p - 1u;
            scalars[r_prev] = scalars[r_prev] * s;
            scalars[prev_at] = xi_prev;
            scalars[prev_at + 3u] = s;
            scalars[params.slot + 3u] = xi_prev;
        }
        scalars[params.dst + p] = rpp;
        scalars[params.slot] = uu;
        scalars[params.slot + 1u] = rpp;
        scalars[params.slot + 2u] = xi;
        scalars[at + 2u] = uu;
    }
    workgroupBarrier();
    if !is_finite(uu) || !is_finite(s) || !is_finite(tot.x) || !is_finite(tot.y) {
        gm_leader_stop(ids, GM_STOP_NONFINITE_AV, p, STATUS_NON_FINITE);
        return Real(0.0);
    }
    if uu == Real(0.0) || s == Real(0.0) {
        gm_leader_stop(ids, GM_STOP_BREAKDOWN, p, STATUS_BREAKDOWN);
        return Real(0.0);
    }
    // Pythagoras cannot tell R_{p,p} ≈ 0 (an invariant Krylov space) from R_{p,p} lost to
    // cancellation: both restart from the true residual, which converges in the first case
    // and, if nothing moves, ends in stagnation.
    if arg <= sqrt(eps) * uu {
        gm_leader_stop(ids, GM_STOP_LOST, p, STATUS_CONVERGED);
        return Real(0.0);
    }
    if monitor {
        if ids.lid == 0u {
            gm_a = scalars[GM_H_THR];
            gm_b = scalars[GM_H_TRUNC] * scalars[GM_H_RHO];
        }
        let thr = workgroupUniformLoad(&gm_a);
        let trunc = workgroupUniformLoad(&gm_b);
        // The estimate of step p − 1 again from ξ̂_{p−1}, then step p's.
        var prev = est_before;
        if p >= 2u {
            prev = gm_wz_estimate(est_before, xi_prev);
        }
        let est = gm_wz_estimate(prev, xi);
        if is_leader(ids) {
            if p >= 2u {
                scalars[prev_at + 1u] = prev;
            }
            scalars[at] = xi;
            scalars[at + 1u] = est;
        }
        if !is_finite(est) {
            gm_leader_stop(ids, GM_STOP_NONFINITE_XI, p, STATUS_NON_FINITE);
            return Real(0.0);
        }
        if est <= thr || est <= trunc {
            // The cycle ends at step p, but this launch still writes v̂_{p−1} (the update
            // reads it) and v_p over its rows: the stop goes to the header only, and the
            // next launch of the cycle stops there. (The status word would race with the
            // workgroups that have not started yet: they would skip their rows.)
            if is_leader(ids) {
                scalars[GM_H_STOP] = Real(GM_STOP_ESTIMATE);
                scalars[GM_H_STEP] = Real(p);
            }
        }
    } else if is_leader(ids) {
        scalars[at] = xi;
    }
    return rpp;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let i = params.comp_monitor;
    let g = params.groups;
    let first = (params.flags & GM_FLAG_FIRST) != 0u;
    let monitor = (params.flags & GM_FLAG_MONITOR) != 0u;
    let closed = (params.flags & GM_FLAG_CLOSED) != 0u;
    let closing = !first && !closed;
    // The partial sums this launch finishes, loaded before the status word is read (a
    // stopped launch discards them): ‖r‖² in step 1, else launch p's SPMV slot.
    var pre = sum_zero();
    if first {
        for (var q = ids.lid; q < g; q = q + WG) {
            pre = sum_merge(pre, partial_load(GM_SLOT_RESIDUAL * g + q));
        }
    } else if closing {
        let slot = GM_SLOT_SPMV + (i - 1u) % 2u;
        for (var q = ids.lid; q < g; q = q + WG) {
            pre = sum_merge(pre, partial_load(slot * g + q));
        }
    }
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    if !first {
        // A stop an earlier launch of this cycle left in the header (the estimate's, which
        // lets its own launch finish its rows).
        if ids.lid == 0u {
            p1_h_code = scalars[GM_H_STOP];
            p1_h_step = scalars[GM_H_STEP];
        }
        let code = workgroupUniformLoad(&p1_h_code);
        let at_step = workgroupUniformLoad(&p1_h_step);
        if code != Real(0.0) && at_step < Real(i - 1u) {
            return;
        }
    }
    p1_first = first;
    p1_closed = closed;
    p1_p = i - 1u;
    if first {
        p1_src = params.den;
        p1_div = gm_open_cycle(sum_value(workgroup_total(pre, ids)).x, monitor, ids);
        if p1_div < Real(0.0) {
            return;
        }
    } else {
        let p = i - 1u;
        p1_src = params.num + p - 1u;
        if closed {
            // `paper` mode: step p was closed by its own launch: R's column p, s_j.
            for (var j = ids.lid + 1u; j < p; j = j + WG) {
                let c = scalars[params.dst + j];
                let sj = scalars[params.comp + 4u * j + 3u];
                p1_cu[j - 1u] = c / sj;
                if j + 1u == p {
                    p1_cv[j - 1u] = c / sj;
                } else {
                    p1_cv[j - 1u] = c;
                }
            }
            if ids.lid == 0u {
                gm_a = scalars[params.dst + p];
                gm_b = Real(1.0);
                if p >= 2u {
                    gm_b = scalars[params.comp + 4u * (p - 1u) + 3u];
                }
            }
            p1_div = workgroupUniformLoad(&gm_a);
            p1_s = workgroupUniformLoad(&gm_b);
        } else {
            let s = sum_value(workgroup_total(pre, ids));
            p1_div = p1_close(p, monitor, s, ids);
            if p1_div == Real(0.0) {
                return;
            }
            if (params.flags & GM_FLAG_CLOSE_ONLY) != 0u {
                p1_write_v(p, p1_div, ids);
                return;
            }
        }
    }
    // v_p and u_i row by row, the first stage of ⟨u_i, v_p⟩, ‖u_i‖², ⟨r, u_i⟩ …
    let half = i % 2u;
    spmv_partials(GM_SLOT_SPMV + half, ids);
    // … and of ⟨u_i, v_j⟩, j = 1 … i − 2, over the same rows (this workgroup's writes of u_i,
    // made visible to its other threads).
    if i >= 3u {
        storageBarrier();
        let end = i - 1u;
        let u_off = (params.num + i - 1u) * params.n;
        for (var j0 = 1u; j0 < end; j0 = j0 + 8u) {
            gm_dots_own_rows(u_off, j0, end, p1_dots_slot((j0 - 1u) / 4u, half), ids);
        }
    }
}
