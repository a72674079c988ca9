// gmres_scale_spmv_dots: launch 1 of the two of fused GMRES(m) step i (variant `fused`;
// paper 000, Alg. 6 with l.14–15 of step i − 1 moved into step i). Pipelined GMRES spends
// four launches on a step because v_{i−1} must be normalised (a global reduction) before
// A·v_{i−1} reads it, and the basis inner products need the finished product. Here the pool
// keeps w_j = R_{j,j} v_j unnormalised and every kernel divides by R_{j,j} where it reads
// v_j, so a step is
//
//   launch 1 (this kernel): close step i − 1 — R_{i−1,i−1} = ‖w_{i−1}‖ (second stage of the
//     partial sums `gmres_gs_update` left in slot 2), the breakdown test, ξ_{i−1} = ⟨r,
//     w_{i−1}⟩/R_{i−1,i−1} (its partial sums are in step i − 1's record) and, with flag
//     MONITOR, the Walker–Zhou estimate and the stop tests of `gmres_spmv_dot` — then
//     w = A·v_{i−1} = (A·w_{i−1})/R_{i−1,i−1} into pool vector i (A D⁻¹ v_{i−1} with Jacobi,
//     D⁻¹ applied as the product reads its vector), and the first stage of ⟨w_{i−1}, w⟩,
//     ⟨w, w⟩ (slot 1) and of ⟨w_j, w⟩ for j = 1 … i − 2 (slots 3…, four per slot: the
//     layout `gmres_basis_dots` writes), each over the rows this workgroup's product wrote;
//   launch 2 (`gmres_gs_update`, flags SCALED | XI): R_{j,i}, w −= Σ R_{j,i} v_j, the first
//     stage of ‖w‖² and of ⟨r, w⟩.
//
// Step 1 (flag FIRST) closes nothing: it finishes ρ0 = ‖r‖ (slot 0), tests it (MONITOR),
// writes v_0 = r/ρ0 and multiplies A by r/ρ0, as `gmres_spmv_dot` does. Flag CLOSE_ONLY
// closes step i − 1 and stops there (the end of a cycle; every step in `paper` mode, whose
// host reads the record); flag CLOSED (`paper` mode) takes R_{i−1,i−1} as that launch left it.
//
// Parameters: comp_monitor = i, num = pool vector the product reads (i − 1, or r in step
// 1), den = pool vector r, slot = step i − 1's record ([‖A v_{i−2}‖², R_{i−1,i−1}, ξ_{i−1}, –,
// ξ partials…]), comp = cycle-buffer index of the per-step scalars (step j at comp + 4j: ξ_j,
// estimate_j, ‖A v_{j−1}‖², R_{j,j}), dst = cycle-buffer index of R_{i−1,i−1}.

@group(0) @binding(11) var<storage, read> dinv: array<Real>;

const GM_FLAG_FIRST: u32 = 1u;
const GM_FLAG_MONITOR: u32 = 2u;
const GM_FLAG_CLOSE_ONLY: u32 = 4u;
const GM_FLAG_CLOSED: u32 = 8u;

var<workgroup> gm_a: Real;
var<workgroup> gm_b: Real;
var<workgroup> gm_c: Real;

// The product's input: pool vector params.num (D⁻¹ applied with Jacobi); the division by
// R_{i−1,i−1} (or ρ0) is applied once per row, in `spmv_store`.
fn spmv_x(col: u32) -> Real {
    let v = pool_get(params.num * params.n + col);
    if params.jacobi != 0u {
        return dinv[col] * v;
    }
    return v;
}

// ρ0 in step 1, R_{i−1,i−1} after: what the product's rows are divided by (set per dispatch).
var<private> gm_div: Real;
var<private> gm_first: bool;

// Stores w = (A·s)[row]/gm_div into pool vector i; returns the row's terms of ⟨w_{i−1}, w⟩
// and ⟨w, w⟩.
fn spmv_store(row: u32, sum: Real) -> vec4<Real> {
    let i = params.comp_monitor;
    let n = params.n;
    let w = sum / gm_div;
    var vp = Real(0.0);
    if !gm_first {
        vp = pool_get((i - 1u) * n + row);
    }
    pool_set(i * n + row, w);
    return vec4<Real>(vp * w, w * w, Real(0.0), Real(0.0));
}

// Closes step p = i − 1: R_{p,p}, the breakdown test, ξ_p and (MONITOR) the estimate.
// Returns R_{p,p}, or 0 when the cycle stopped here.
// `pre`: this thread's share of the partial sums of ‖w_p‖² (x) and ⟨r, w_p⟩ (y).
fn gm_close(p: u32, monitor: bool, pre: Sum, ids: Ids) -> Real {
    let at = params.comp + 4u * p;
    if ids.lid == 0u {
        gm_a = scalars[at + 2u];
        gm_b = scalars[GM_H_EPS];
        gm_c = scalars[params.comp + 4u * (p - 1u) + 1u];
    }
    let t = sum_value(workgroup_total(pre, ids));
    let rr = t.x;
    let xi_raw = t.y;
    let w2 = workgroupUniformLoad(&gm_a);
    let eps = workgroupUniformLoad(&gm_b);
    let prev = workgroupUniformLoad(&gm_c);
    let rii = sqrt(rr);
    let w_norm = sqrt(w2);
    let xi = xi_raw / rii;
    if is_leader(ids) {
        scalars[params.slot] = w2;
        scalars[params.slot + 1u] = rii;
        scalars[params.slot + 2u] = xi;
        scalars[params.dst] = rii;
        scalars[at + 3u] = rii;
    }
    if !is_finite(rii) || !is_finite(w_norm) {
        gm_leader_stop(ids, GM_STOP_NONFINITE_AV, p, STATUS_NON_FINITE);
        return Real(0.0);
    }
    if w_norm == Real(0.0) || rii <= eps * w_norm {
        gm_leader_stop(ids, GM_STOP_BREAKDOWN, p, STATUS_BREAKDOWN);
        return Real(0.0);
    }
    if monitor {
        if ids.lid == 0u {
            gm_a = scalars[GM_H_THR];
            gm_b = scalars[GM_H_TRUNC] * scalars[GM_H_RHO];
        }
        let thr = workgroupUniformLoad(&gm_a);
        let trunc = workgroupUniformLoad(&gm_b);
        let est = gm_wz_estimate(prev, xi);
        if is_leader(ids) {
            scalars[at] = xi;
            scalars[at + 1u] = est;
        }
        if !is_finite(est) {
            gm_leader_stop(ids, GM_STOP_NONFINITE_XI, p, STATUS_NON_FINITE);
            return Real(0.0);
        }
        if est <= thr || est <= trunc {
            gm_leader_stop(ids, GM_STOP_ESTIMATE, p, STATUS_CONVERGED);
            return Real(0.0);
        }
    } else if is_leader(ids) {
        scalars[at] = xi;
    }
    return rii;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let i = params.comp_monitor;
    let n = params.n;
    let g = params.groups;
    let first = (params.flags & GM_FLAG_FIRST) != 0u;
    let monitor = (params.flags & GM_FLAG_MONITOR) != 0u;
    let closing = !first && (params.flags & GM_FLAG_CLOSED) == 0u;
    // The partial sums this launch finishes, loaded before the status word is read (their
    // round trips to memory overlapped; a stopped launch discards them): ‖r‖² in step 1,
    // else ‖w_{i−1}‖² and ξ_{i−1}'s ⟨r, w_{i−1}⟩ (one Real per workgroup in the record).
    var pre = sum_zero();
    if first {
        for (var q = ids.lid; q < g; q = q + WG) {
            pre = sum_merge(pre, partial_load(GM_SLOT_RESIDUAL * g + q));
        }
    } else if closing {
        for (var q = ids.lid; q < g; q = q + WG) {
            pre = sum_merge(pre, partial_load(GM_SLOT_NORM * g + q));
            pre = sum_add(pre, vec4<Real>(Real(0.0), scalars[params.slot + 4u + q], Real(0.0), Real(0.0)));
        }
    }
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    var div = Real(1.0);
    if first {
        // ρ0, its stop tests and v_0 = r/ρ0 (gmres_open.wgsl; the update of x reads v_0).
        div = gm_open_cycle(sum_value(workgroup_total(pre, ids)).x, monitor, ids);
        if div < Real(0.0) {
            return;
        }
    } else if (params.flags & GM_FLAG_CLOSED) != 0u {
        // `paper` mode: step i − 1 was closed by its own launch.
        if ids.lid == 0u {
            gm_a = scalars[params.dst];
        }
        div = workgroupUniformLoad(&gm_a);
    } else {
        div = gm_close(i - 1u, monitor, pre, ids);
        if div == Real(0.0) || (params.flags & GM_FLAG_CLOSE_ONLY) != 0u {
            return;
        }
    }
    // w = A·s / div into pool vector i, the first stage of ⟨w_{i−1}, w⟩, ⟨w, w⟩ …
    gm_first = first;
    gm_div = div;
    spmv_partials(GM_SLOT_SPMV, ids);
    // … and of ⟨w_j, w⟩, j = 1 … i − 2, over the same rows (this workgroup's writes of w,
    // made visible to its other threads).
    if i >= 3u {
        storageBarrier();
        let end = i - 1u;
        for (var j0 = 1u; j0 < end; j0 = j0 + 8u) {
            gm_dots_own_rows(i * n, j0, end, GM_SLOT_DOTS + (j0 - 1u) / 4u, ids);
        }
    }
}
