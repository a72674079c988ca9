// gmres_normalize: kernel 4 of pipelined GMRES(m) step i (paper 000, Alg. 6 l.14–15):
//
//   R_{i,i} = ‖w‖ (second stage, redundantly in every workgroup; from slot 1 component y in
//             step 1 (flag FIRST), from slot 2 otherwise)
//   breakdown test: R_{i,i} ≤ ε·‖A v_{i−1}‖ (or ‖A v_{i−1}‖ = 0) stops the cycle before anything
//             is divided (GM_STOP_BREAKDOWN at step i); a non-finite R_{i,i} stops it as well
//   v_i = w / R_{i,i}, z = D⁻¹v_i (Jacobi: the input of the next SpMV)
//   first stage of ξ_i = ⟨r, v_i⟩ → the cycle-buffer record of step i, one entry per workgroup
//
// The record (at params.slot) is [‖A v_{i−1}‖², R_{i,i}, 0, 0, ξ partials…]: the one thing
// `paper` mode reads back per step; gmres_spmv_dot of step i+1 finishes ξ_i from it in
// `device` mode. Parameters: comp_monitor = i, comp = cycle-buffer index of R_{i,i},
// den = index of step i's scalars (‖A v_{i−1}‖² at +2), num = pool vector r, dst = pool
// vector z. ε_T is header entry 6.
//
// Each thread loads two rows (a grid stride apart) before it stores either: pool is one
// read_write binding, so a store holds back the loads after it (measured on an H100:
// 85 → 68 µs per iteration at n = 1e7 in f32, 160 → 118 in f64; BENCHMARKS.md).

@group(0) @binding(11) var<storage, read> dinv: array<Real>;

const GM_FLAG_FIRST: u32 = 1u;

var<workgroup> gm_w2: Real;
var<workgroup> gm_eps: Real;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let i = params.comp_monitor;
    let n = params.n;
    let g = params.groups;
    let first = (params.flags & GM_FLAG_FIRST) != 0u;
    var rr: Real;
    if first {
        rr = sum_partials(GM_SLOT_SPMV * g, g, ids).y;
    } else {
        rr = sum_partials(GM_SLOT_NORM * g, g, ids).x;
    }
    if ids.lid == 0u {
        gm_w2 = scalars[params.den + 2u];
        gm_eps = scalars[GM_H_EPS];
    }
    var w2 = workgroupUniformLoad(&gm_w2);
    let eps = workgroupUniformLoad(&gm_eps);
    if first {
        w2 = rr;
    }
    let rii = sqrt(rr);
    let w_norm = sqrt(w2);
    if is_leader(ids) {
        scalars[params.den + 2u] = w2;
        scalars[params.slot] = w2;
        scalars[params.slot + 1u] = rii;
        scalars[params.comp] = rii;
    }
    if !is_finite(rii) || !is_finite(w_norm) {
        gm_leader_stop(ids, GM_STOP_NONFINITE_AV, i, STATUS_NON_FINITE);
        return;
    }
    if w_norm == Real(0.0) || rii <= eps * w_norm {
        gm_leader_stop(ids, GM_STOP_BREAKDOWN, i, STATUS_BREAKDOWN);
        return;
    }
    let v_off = i * n;
    let r_off = params.num * n;
    let z_off = params.dst * n;
    let stride = params.groups * WG;
    var acc = sum_zero();
    for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + 2u * stride) {
        // Both rows' loads before any store (a second row a grid stride on; row n − 1
        // again, not stored, past n).
        let row1 = row + stride;
        let ok1 = row1 < n;
        let q = min(row1, n - 1u);
        let w0 = pool_get(v_off + row);
        let w1 = pool_get(v_off + q);
        let r0 = pool_get(r_off + row);
        let r1 = pool_get(r_off + q);
        let v0 = w0 / rii;
        let v1 = w1 / rii;
        pool_set(v_off + row, v0);
        acc = sum_add_x(acc, r0 * v0);
        if ok1 {
            pool_set(v_off + q, v1);
            acc = sum_add_x(acc, r1 * v1);
        }
        if params.jacobi != 0u {
            pool_set(z_off + row, dinv[row] * v0);
            if ok1 {
                pool_set(z_off + q, dinv[q] * v1);
            }
        }
    }
    // ξ partials go to scalars, one Real each: rounded once (sum_value), no error term.
    let t = sum_value(workgroup_total(acc, ids));
    if ids.lid == 0u {
        scalars[params.slot + 4u + ids.wid.x] = t.x;
    }
}
