// gmres_gs_update: kernel 3 of pipelined GMRES(m) step i (paper 000, Alg. 6 l.9 second
// stage, l.11–13, first stage of ‖v_i‖ for l.14):
//
//   R_{j,i} = second stage of ⟨v_j, w⟩ for j = 1 … i−1   (redundantly in every workgroup)
//   w −= Σ_j R_{j,i} v_j                                  (w = v_i, in place)
//   first stage of ‖w‖² → partials slot 2                 (flag NORM)
//
// Pass 1 takes ⟨v_{i−1}, w⟩ from slot 1 (gmres_spmv_dot, component x) and the others from
// slots 3… (gmres_basis_dots, ⟨v_j, w⟩ in slot 3 + (j−1)/4, component (j−1)%4); it also
// finishes ‖A v_{i−1}‖² (slot 1, component y) into the per-step scalars and stops the cycle
// if it is not finite. Pass 2 (flag PASS2, the re-orthogonalisation of CGS2) takes every
// coefficient from slots 3… and adds it to R_{j,i}.
//
// Parameters: comp_monitor = i, comp = cycle-buffer index of R_{0,i} (R_{j,i} at comp + j),
// den = cycle-buffer index of step i's scalars (‖A v_{i−1}‖² at +2).
// The coefficients go through workgroup memory in chunks of GM_CHUNK (any restart length).
//
// Fused GMRES (launch 2 of its step, after `gmres_scale_spmv_dots`) adds two flags:
// SCALED — the pool holds w_j = R_{j,j} v_j unnormalised (R_{j,j} at comp-of-step j + 3,
// i.e. scalars[den − 4(i − j) + 3]): the sums are ⟨w_j, w⟩, so R_{j,i} = sum/R_{j,j} and
// the update subtracts (R_{j,i}/R_{j,j}) w_j; XI — also the first stage of ξ_i's ⟨r, w⟩
// (r = pool vector `num`) after the update, one Real per workgroup at scalars[slot + 4 + wg]
// (step i's record, as `gmres_normalize` writes it). Step 1 of fused GMRES runs this kernel
// too (no coefficient: only ‖A v_0‖², ‖w‖² and ⟨r, w⟩).
//
// Memory-level parallelism: one launch covers the rows once with every thread resident, so
// each thread takes two rows a grid stride apart and two basis vectors at a time: four
// independent loads before their products (with one row per thread, n ≤ groups·WG, eight
// basis vectors at a time) (measured on an H100: 345 → 271 µs per iteration at
// n = 1e7 in f32, BENCHMARKS.md). The subtractions keep their order (w − c_j v_j for
// j = 1, 2, …), so every row's result is what one row per thread computes.


const GM_FLAG_PASS2: u32 = 1u;
const GM_FLAG_NORM: u32 = 2u;
const GM_FLAG_SCALED: u32 = 4u;
const GM_FLAG_XI: u32 = 8u;
const GM_CHUNK: u32 = 64u;
// Partials slots whose first stages are loaded together before any is reduced.
const GM_BATCH: u32 = 8u;

var<workgroup> coef: array<Real, GM_CHUNK>;
// SCALED: R_{j,j} of the chunk's coefficients, loaded by one thread each.
var<workgroup> gm_d: array<Real, GM_CHUNK>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let i = params.comp_monitor;
    let n = params.n;
    let g = params.groups;
    let pass2 = (params.flags & GM_FLAG_PASS2) != 0u;
    // Pass 1's partial sums of slot 1 are loaded before the status word is read (two
    // round trips to memory overlapped; a stopped launch discards them).
    var pre = sum_zero();
    if !pass2 {
        for (var q = ids.lid; q < g; q = q + WG) {
            pre = sum_merge(pre, partial_load(GM_SLOT_SPMV * g + q));
        }
    }
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let scaled = (params.flags & GM_FLAG_SCALED) != 0u;
    let with_xi = (params.flags & GM_FLAG_XI) != 0u;
    let r_off = params.num * n;
    // Coefficients j < from_dots come from slots 3…; in pass 1, j = i − 1 comes from slot 1.
    var from_dots = i;
    var c_last = Real(0.0);
    if !pass2 {
        let s = sum_value(workgroup_total(pre, ids));
        c_last = s.x;
        from_dots = i - 1u;
        if is_leader(ids) {
            scalars[params.den + 2u] = s.y;
        }
        if !is_finite(s.y) {
            gm_leader_stop(ids, GM_STOP_NONFINITE_AV, i, STATUS_NON_FINITE);
            return;
        }
    }
    let w_off = i * n;
    let stride = g * WG;
    var acc = sum_zero();
    var acc_xi = sum_zero();
    // One pass over the rows even with no coefficient (step 1 of fused GMRES).
    for (var j0 = 1u; j0 < max(i, 2u); j0 = j0 + GM_CHUNK) {
        let j1 = min(j0 + GM_CHUNK, i);
        if scaled && ids.lid < GM_CHUNK && j0 + ids.lid < j1 {
            gm_d[ids.lid] = scalars[params.den - 4u * (i - j0 - ids.lid) + 3u];
        }
        // Slots 3… hold the coefficients j0 … min(j1, from_dots) − 1, four per slot; their
        // partial sums are loaded GM_BATCH slots at a time before any is reduced (one
        // round trip to memory per batch, not one per slot).
        let slot0 = GM_SLOT_DOTS + (j0 - 1u) / 4u;
        let slots = (max(min(j1, from_dots), j0) - j0 + 3u) / 4u;
        let groups = (j1 - j0 + 3u) / 4u;
        for (var b = 0u; b < groups; b = b + GM_BATCH) {
            var raw: array<Sum, GM_BATCH>;
            for (var q = 0u; q < GM_BATCH; q = q + 1u) {
                raw[q] = sum_zero();
            }
            for (var gg = ids.lid; gg < g; gg = gg + WG) {
                for (var q = 0u; q < GM_BATCH; q = q + 1u) {
                    if b + q < slots {
                        raw[q] = sum_merge(raw[q], partial_load((slot0 + b + q) * g + gg));
                    }
                }
            }
            workgroupBarrier();
            for (var q = 0u; q < GM_BATCH; q = q + 1u) {
                let j = j0 + 4u * (b + q);
                if j >= j1 {
                    break;
                }
                var s = vec4<Real>(Real(0.0));
                if b + q < slots {
                    s = sum_value(workgroup_total(raw[q], ids));
                }
                if ids.lid == 0u {
                    for (var c = 0u; c < 4u; c = c + 1u) {
                        let jj = j + c;
                        if jj < j1 {
                            var v = s[c];
                            if jj >= from_dots {
                                v = c_last;
                            }
                            var cv = v;
                            if scaled {
                                let d = gm_d[jj - j0];
                                v = v / d;
                                cv = v / d;
                            }
                            coef[jj - j0] = cv;
                            if ids.wid.x == 0u {
                                if pass2 {
                                    scalars[params.comp + jj] = scalars[params.comp + jj] + v;
                                } else {
                                    scalars[params.comp + jj] = v;
                                }
                            }
                        }
                    }
                }
            }
        }
        workgroupBarrier();
        let last = j1 == i;
        for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + 2u * stride) {
            // A second row a grid stride on (row n − 1 again, not stored, past n).
            let row1 = row + stride;
            let ok1 = row1 < n;
            let q = min(row1, n - 1u);
            var w0 = pool_get(w_off + row);
            var w1 = pool_get(w_off + q);
            // ξ's r with w (the loads of a row go out together).
            var r0 = Real(0.0);
            var r1 = Real(0.0);
            if with_xi && last {
                r0 = pool_get(r_off + row);
                r1 = pool_get(r_off + q);
            }
            var j = j0;
            if n <= stride {
                // One row per thread (small n): eight basis vectors per round trip to
                // memory, so a thread waits i/8 times, not i/2.
                for (; j + 8u <= j1; j = j + 8u) {
                    let a0 = pool_get(j * n + row);
                    let a1 = pool_get((j + 1u) * n + row);
                    let a2 = pool_get((j + 2u) * n + row);
                    let a3 = pool_get((j + 3u) * n + row);
                    let a4 = pool_get((j + 4u) * n + row);
                    let a5 = pool_get((j + 5u) * n + row);
                    let a6 = pool_get((j + 6u) * n + row);
                    let a7 = pool_get((j + 7u) * n + row);
                    let k = j - j0;
                    w0 = w0 - coef[k] * a0;
                    w0 = w0 - coef[k + 1u] * a1;
                    w0 = w0 - coef[k + 2u] * a2;
                    w0 = w0 - coef[k + 3u] * a3;
                    w0 = w0 - coef[k + 4u] * a4;
                    w0 = w0 - coef[k + 5u] * a5;
                    w0 = w0 - coef[k + 6u] * a6;
                    w0 = w0 - coef[k + 7u] * a7;
                }
            }
            for (; j + 2u <= j1; j = j + 2u) {
                let c0 = coef[j - j0];
                let c1 = coef[j - j0 + 1u];
                let a0 = pool_get(j * n + row);
                let a1 = pool_get((j + 1u) * n + row);
                let b0 = pool_get(j * n + q);
                let b1 = pool_get((j + 1u) * n + q);
                w0 = w0 - c0 * a0;
                w0 = w0 - c1 * a1;
                w1 = w1 - c0 * b0;
                w1 = w1 - c1 * b1;
            }
            if j < j1 {
                let c0 = coef[j - j0];
                w0 = w0 - c0 * pool_get(j * n + row);
                w1 = w1 - c0 * pool_get(j * n + q);
            }
            pool_set(w_off + row, w0);
            if ok1 {
                pool_set(w_off + q, w1);
            }
            if last {
                acc = sum_add_x(acc, w0 * w0);
                if ok1 {
                    acc = sum_add_x(acc, w1 * w1);
                }
                if with_xi {
                    acc_xi = sum_add_x(acc_xi, r0 * w0);
                    if ok1 {
                        acc_xi = sum_add_x(acc_xi, r1 * w1);
                    }
                }
            }
        }
        workgroupBarrier();
    }
    if (params.flags & GM_FLAG_NORM) != 0u {
        store_sum(GM_SLOT_NORM, acc, ids);
    }
    if with_xi {
        // ξ partials go to scalars, one Real each (as gmres_normalize writes them).
        let t = sum_value(workgroup_total(acc_xi, ids));
        if ids.lid == 0u {
            scalars[params.slot + 4u + ids.wid.x] = t.x;
        }
    }
}
