// gmres_workgroup: whole steps of pipelined GMRES(m) (paper 000, Alg. 6: simpler GMRES with
// classical Gram–Schmidt, once or twice) for a system small enough for ONE workgroup — a
// whole cycle in one launch (variant `workgroup`).
//
// Why: below ~1e4 rows a step of pipelined, fused or p(1)-GMRES is its launches and their
// global reductions (p1: one launch, ~20 µs a step on an H100 whatever n is), not bandwidth.
// In one workgroup every inner product is a workgroup sum (barriers, no global reduction),
// so one launch runs all the steps of a cycle; the product's input D⁻¹v_{i−1}, gathered at
// every stored entry, lives in workgroup memory (`wgm_z`, WG_VECTOR = n entries: the host
// refuses systems with more rows than the adapter's workgroup memory holds). The basis stays
// in the pool (global memory: m + 1 vectors do not fit), read by the row's own thread.
//
// Step i (the CPU reference `cpu::gmres::pipelined` line by line, l. of Alg. 5/6):
//   l.7     w = A D⁻¹ v_{i−1}                       → pool vector i (this step's v_i slot)
//   l.8–10  R_{j,i} = ⟨v_j, w⟩, j = 1 … i − 1, and ‖w‖² (breakdown scale), workgroup sums
//   l.11–13 w −= Σ_j R_{j,i} v_j                      (CGS2: once more, adding to R)
//   l.14    R_{i,i} = ‖w‖, v_i = w / R_{i,i}          (breakdown: R_{i,i} ≤ ε‖A v_{i−1}‖)
//   l.15    ξ_i = ⟨r, v_i⟩, the Walker–Zhou estimate, the stop tests (MONITOR)
// A thread owns rows c·WG + lid (slot c): it keeps its rows of w in registers (`wgm_w`)
// between the sums; the product hands rows out in the format's order (SELL, BCSR), so w goes
// through the pool and a storage barrier before the owners read it.
//
// Parameters: num = first step i0, comp_monitor = last step i1 (`device` mode: 1 … the
// cycle's steps in one launch; `paper` mode: one step a launch), den = pool vector r, slot =
// the workgroups of `gmres_residual` (partials of ‖r‖² in slot 0), comp = cycle-buffer index
// of the per-step scalars (step j at comp + 4j: ξ_j, estimate_j, ‖A v_{j−1}‖², R_{j,j}), dst =
// cycle-buffer index of R_{0,0} (R_{j,i} at dst + j + (m + 1)i), flags: FIRST (i0 = 1:
// finish ρ0, test it, v_0 = r/ρ0: `gm_open_cycle`, run with params.groups = 1), MONITOR
// (`device` checks), CGS2, and m + 1 in bits 8… . Step i's record (header + 8 + (i mod 2)(g +
// 4): [‖A v_{i−1}‖², R_{i,i}, ξ_i, –]) is what `paper` mode reads with the header.

@group(0) @binding(11) var<storage, read> dinv: array<Real>;

const GM_FLAG_FIRST: u32 = 1u;
const GM_FLAG_MONITOR: u32 = 2u;
const GM_FLAG_CGS2: u32 = 4u;
// The longest cycle (R's column lives in workgroup memory): the host checks the restart.
const WGM_MAX: u32 = 128u;
// Rows per thread: row c·WG + lid in slot c (the host sizes WG_VECTOR to n).
const WGM_ROWS: u32 = (WG_VECTOR + WG - 1u) / WG;
const GM_HEADER: u32 = 8u;

var<workgroup> wgm_z: array<Real, WG_VECTOR>;
// R's column i (R_{j,i} at j − 1), and the header's constants.
var<workgroup> wgm_r: array<Real, WGM_MAX>;
// Each Gram–Schmidt pass's own coefficients (pass p at p·WGM_MAX): CGS2's second pass
// subtracts its own, not R's running sum.
var<workgroup> wgm_pass: array<Real, 256>;
var<workgroup> wgm_consts: vec4<Real>;
var<workgroup> wgm_prev: Real;

// This thread's rows of w (slot c: row c·WG + lid).
var<private> wgm_w: array<Real, WGM_ROWS>;

fn spmv_x(col: u32) -> Real {
    return wgm_z[col];
}

// D⁻¹ (1 without Jacobi) at row i.
fn wgm_scale(i: u32) -> Real {
    if params.jacobi != 0u {
        return dinv[i];
    }
    return Real(1.0);
}

// l.7: w = A D⁻¹ v_{i−1} into pool vector i, then into the owners' registers.
fn wgm_product(i: u32, lid: u32) {
    let n = params.n;
    for (var c = 0u; c < WGM_ROWS; c = c + 1u) {
        let row = c * WG + lid;
        if row < n {
            wgm_z[row] = wgm_scale(row) * pool_get((i - 1u) * n + row);
        }
    }
    workgroupBarrier();
    var chunks = spmv_passes();
    if spmv_rows_owned {
        // Chunks past WGM_ROWS hold no row below n (the matrix may be laid out in chunks of
        // fewer threads than this kernel has).
        chunks = min(chunks, WGM_ROWS);
    }
    for (var c = 0u; c < chunks; c = c + 1u) {
        let q = spmv_pass(c, lid);
        if q.valid {
            if spmv_rows_owned {
                wgm_w[c] = q.value;
            } else {
                pool_set(i * n + q.row, q.value);
            }
        }
    }
    if !spmv_rows_owned {
        // Every row of w (written by whichever thread the format handed it) before its owner
        // reads it.
        storageBarrier();
        for (var c = 0u; c < WGM_ROWS; c = c + 1u) {
            let row = c * WG + lid;
            if row < n {
                wgm_w[c] = pool_get(i * n + row);
            }
        }
    }
}

// l.11–13: w −= Σ_j c_j v_j with this Gram–Schmidt pass's coefficients (wgm_pass).
fn wgm_subtract(i: u32, gs_pass: u32, lid: u32) {
    let n = params.n;
    for (var c = 0u; c < WGM_ROWS; c = c + 1u) {
        let row = c * WG + lid;
        if row < n {
            var w = wgm_w[c];
            for (var j = 1u; j < i; j = j + 1u) {
                w = w - wgm_pass[gs_pass * WGM_MAX + j - 1u] * pool_get(j * n + row);
            }
            wgm_w[c] = w;
        }
    }
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let lid = ids.lid;
    let n = params.n;
    let i0 = params.num;
    let i1 = params.comp_monitor;
    let first = (params.flags & GM_FLAG_FIRST) != 0u;
    let monitor = (params.flags & GM_FLAG_MONITOR) != 0u;
    let gs_passes = select(1u, 2u, (params.flags & GM_FLAG_CGS2) != 0u);
    let stride = params.flags >> 8u;
    var rr = Real(0.0);
    if first {
        // ‖r‖² of `gmres_residual` (its workgroups' partials, summed here).
        rr = sum_partials(GM_SLOT_RESIDUAL * params.slot, params.slot, ids).x;
    }
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    if first && gm_open_cycle(rr, monitor, ids) < Real(0.0) {
        return;
    }
    if lid == 0u {
        wgm_consts = vec4<Real>(
            scalars[GM_H_EPS],
            scalars[GM_H_THR],
            scalars[GM_H_TRUNC] * scalars[GM_H_RHO],
            Real(0.0),
        );
        wgm_prev = scalars[params.comp + 4u * (i0 - 1u) + 1u];
    }
    let consts = workgroupUniformLoad(&wgm_consts);
    let eps = consts.x;
    let thr = consts.y;
    let trunc = consts.z;
    var prev = workgroupUniformLoad(&wgm_prev);
    for (var i = i0; i <= i1; i = i + 1u) {
        // (v_{i−1}'s rows are read by the threads that wrote them: the previous step,
        // `gm_open_cycle`'s loop with one workgroup, or an earlier launch.)
        wgm_product(i, lid);
        for (var j = lid; j < i; j = j + WG) {
            wgm_r[j] = Real(0.0);
        }
        workgroupBarrier();
        var ww = Real(0.0);
        for (var gs_pass = 0u; gs_pass < gs_passes; gs_pass = gs_pass + 1u) {
            let before = wgm_dots_into(i, gs_pass, gs_pass == 0u, ids);
            if gs_pass == 0u {
                ww = before;
            }
            wgm_subtract(i, gs_pass, lid);
        }
        // l.14–15: ‖w‖² and ⟨r, w⟩ of the orthogonalised w.
        var t = vec4<Real>(Real(0.0));
        for (var c = 0u; c < WGM_ROWS; c = c + 1u) {
            let row = c * WG + lid;
            if row < n {
                let w = wgm_w[c];
                t = t + vec4<Real>(w * w, pool_get(params.den * n + row) * w, Real(0.0), Real(0.0));
            }
        }
        let s = workgroup_sum(t, ids);
        let rii = sqrt(s.x);
        let w_norm = sqrt(ww);
        let xi = s.y / rii;
        let est = gm_wz_estimate(prev, xi);
        let at = params.comp + 4u * i;
        let rec = GM_HEADER + (i % 2u) * (params.slot + 4u);
        if lid == 0u {
            for (var j = 1u; j < i; j = j + 1u) {
                scalars[params.dst + j + stride * i] = wgm_r[j - 1u];
            }
            scalars[params.dst + i + stride * i] = rii;
            scalars[at] = xi;
            scalars[at + 1u] = est;
            scalars[at + 2u] = ww;
            scalars[at + 3u] = rii;
            scalars[rec] = ww;
            scalars[rec + 1u] = rii;
            scalars[rec + 2u] = xi;
        }
        if !is_finite(rii) || !is_finite(w_norm) {
            gm_leader_stop(ids, GM_STOP_NONFINITE_AV, i, STATUS_NON_FINITE);
            return;
        }
        if w_norm == Real(0.0) || rii <= eps * w_norm {
            gm_leader_stop(ids, GM_STOP_BREAKDOWN, i, STATUS_BREAKDOWN);
            return;
        }
        for (var c = 0u; c < WGM_ROWS; c = c + 1u) {
            let row = c * WG + lid;
            if row < n {
                pool_set(i * n + row, wgm_w[c] / rii);
            }
        }
        if monitor {
            if !is_finite(est) {
                gm_leader_stop(ids, GM_STOP_NONFINITE_XI, i, STATUS_NON_FINITE);
                return;
            }
            if est <= thr || est <= trunc {
                gm_leader_stop(ids, GM_STOP_ESTIMATE, i, STATUS_CONVERGED);
                return;
            }
        }
        prev = est;
    }
}

// One Gram–Schmidt pass's inner products: this gs_pass's coefficients into wgm_pass (pass
// `gs_pass`) and added to R's column (wgm_r); with `norm`, ‖w‖² too (returned). Four sums a
// chunk; each chunk reduced per subgroup only (`sg_sum4`), and up to eight chunks' subgroup
// totals through workgroup memory behind ONE barrier — not a whole workgroup sum (two
// barriers) per chunk: 9–27 % less time per step on an H100 up to 4000 rows
// (BENCHMARKS.md, 2026-12-07). Without subgroups the "subgroup" is the workgroup.
var<workgroup> wgm_part: array<vec4<Real>, 256>;
var<workgroup> wgm_ww: Real;

fn wgm_dots_into(i: u32, gs_pass: u32, norm: bool, ids: Ids) -> Real {
    let n = params.n;
    let lid = ids.lid;
    var count = i - 1u;
    if norm {
        count = i;
    }
    for (var b0 = 1u; b0 <= count; b0 = b0 + 4u * clamp(256u / sg_count(ids), 1u, 8u)) {
        let per = clamp(256u / sg_count(ids), 1u, 8u);
        let nchunks = min(per, (count - b0 + 4u) / 4u);
        for (var q = 0u; q < nchunks; q = q + 1u) {
            let j0 = b0 + 4u * q;
            var t = vec4<Real>(Real(0.0));
            for (var c = 0u; c < WGM_ROWS; c = c + 1u) {
                let row = c * WG + lid;
                if row < n {
                    let w = wgm_w[c];
                    var e = vec4<Real>(Real(0.0));
                    for (var k = 0u; k < 4u; k = k + 1u) {
                        let j = j0 + k;
                        if j < i {
                            e[k] = pool_get(j * n + row) * w;
                        } else if j == i {
                            e[k] = w * w;
                        }
                    }
                    t = t + e;
                }
            }
            let s = sg_sum4(t, ids);
            if sg_leader(ids) {
                wgm_part[q * sg_count(ids) + sg_index(ids)] = s;
            }
        }
        workgroupBarrier();
        if lid < 4u * nchunks {
            let q = lid / 4u;
            let k = lid % 4u;
            let j = b0 + lid;
            var tot = Real(0.0);
            for (var g = 0u; g < sg_count(ids); g = g + 1u) {
                tot = tot + wgm_part[q * sg_count(ids) + g][k];
            }
            if j < i {
                wgm_pass[gs_pass * WGM_MAX + j - 1u] = tot;
                wgm_r[j - 1u] = wgm_r[j - 1u] + tot;
            } else if j == i {
                wgm_ww = tot;
            }
        }
        workgroupBarrier();
    }
    let ww = workgroupUniformLoad(&wgm_ww);
    return select(Real(0.0), ww, norm);
}
