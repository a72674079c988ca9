// cg_workgroup: whole iterations of classical CG (paper 000, Alg. 1, Jacobi or none) for a
// system small enough for one workgroup, `iters` of them per launch (variant `workgroup`).
//
// Why: below ~1e4 rows an iteration of pipelined or fused CG is a launch and its global
// reduction, not bandwidth (one launch ≈ 3–4.5 µs on an H200 whatever it does). One
// workgroup needs no global reduction: every inner product is a workgroup sum (barriers
// only), so one launch runs many iterations and the launch cost is shared by all of them.
// The direction p, which the product gathers at every stored entry, lives in workgroup
// memory (`wg_p`, WG_VECTOR entries: the host refuses systems with more rows), so the
// product's dependent loads are column index → workgroup memory, not → global memory. With
// a row-per-thread format (spmv_rows_owned) a thread's rows of x, r, Ap and D⁻¹ stay in its
// own registers for the whole launch (row c·WG + lid in slot c), so an iteration touches
// global memory only for the matrix; SELL-C-σ and BCSR hand rows out in their own order and
// go through x, r and Ap in global memory. Thread 0 writes each ‖r‖² straight into the
// history and the counter state[1] once per launch (an atomic per iteration would be a
// round trip to L2 that every thread waits for at the next barrier). Its two sums per
// iteration are `workgroup_sum2`s: two components, the second stage by one thread (the
// four-component `workgroup_sum` shuffles 2–4× as much in every subgroup, twice).
//
// The recurrence is src/cpu/cg.rs's (the CPU twin, the classical variant):
//   q = A p; α = ρ/⟨p,q⟩; x += α p; r −= α q; ρ' = ⟨r, D⁻¹r⟩; β = ρ'/ρ; p = D⁻¹r + β p,
// with ‖r‖² recorded (history, state[1]) and tested against tol² after each iteration.
//
// A launch starts from the iterate in x, r, p (global) and ρ in scalars[WGCG_RHO], and
// leaves the iterate it ends on there. The first launch after `cg_init` (r = b − Ax,
// p = D⁻¹r, ⟨r,z⟩ and ⟨r,r⟩ into partials slot 0, one workgroup) has flag WGCG_FIRST: it
// takes ρ and ‖r₀‖² from the partials, records and tests ‖r₀‖², then iterates. A launch
// stops at the solve's iteration limit `limit` (iterations done = residuals recorded − 1)
// and on any status, so launches recorded past a stop change nothing.

struct WorkgroupCgParams {
    iters: u32,  // iterations this launch runs at most
    limit: u32,  // the solve's iteration limit
    flags: u32,  // WGCG_FIRST
    pad: u32,
}

const WGCG_FIRST: u32 = 1u;
// scalars index of ρ = ⟨r, D⁻¹r⟩ between launches (index 2 is tol²).
const WGCG_RHO: u32 = 3u;
// Rows per thread: row c·WG + lid in slot c.
const WGCG_ROWS: u32 = (WG_VECTOR + WG - 1u) / WG;

@group(0) @binding(5) var<storage, read_write> x: array<Real>;
@group(0) @binding(6) var<storage, read_write> r: array<Real>;
@group(0) @binding(7) var<storage, read_write> p: array<Real>;
@group(0) @binding(8) var<storage, read_write> ap: array<Real>;
@group(0) @binding(9) var<storage, read> dinv: array<Real>;
@group(0) @binding(10) var<uniform> wgcg: WorkgroupCgParams;

var<workgroup> wg_p: array<Real, WG_VECTOR>;
var<workgroup> wg_its: u32;
var<workgroup> wg_scalars: vec2<Real>;

// A thread's rows (spmv_rows_owned): x, r, Ap and D⁻¹ of row c·WG + lid in slot c.
var<private> own_x: array<Real, WGCG_ROWS>;
var<private> own_r: array<Real, WGCG_ROWS>;
var<private> own_q: array<Real, WGCG_ROWS>;
var<private> own_d: array<Real, WGCG_ROWS>;

// D⁻¹ (1 without Jacobi) at row i.
fn scale_at(i: u32) -> Real {
    if params.jacobi != 0u {
        return dinv[i];
    }
    return Real(1.0);
}

fn spmv_x(col: u32) -> Real {
    return wg_p[col];
}

// p into workgroup memory; with owned rows, x, r and D⁻¹ into the thread's slots.
fn load_iterate(n: u32, lid: u32) {
    for (var c = 0u; c < WGCG_ROWS; c = c + 1u) {
        let row = c * WG + lid;
        if row < n {
            wg_p[row] = p[row];
            if spmv_rows_owned {
                own_x[c] = x[row];
                own_r[c] = r[row];
                own_d[c] = scale_at(row);
            }
        }
    }
}

// The iterate back to global memory for the next launch.
fn store_iterate(n: u32, lid: u32) {
    for (var c = 0u; c < WGCG_ROWS; c = c + 1u) {
        let row = c * WG + lid;
        if row < n {
            p[row] = wg_p[row];
            if spmv_rows_owned {
                x[row] = own_x[c];
                r[row] = own_r[c];
            }
        }
    }
}

// q = A p for the rows the format hands this thread; returns their terms of ⟨p, q⟩.
fn product(lid: u32) -> Real {
    var pq = Real(0.0);
    var chunks = spmv_passes();
    if spmv_rows_owned {
        // Chunks past WGCG_ROWS hold no row below n (the matrix may be laid out in chunks of
        // fewer threads than this kernel has).
        chunks = min(chunks, WGCG_ROWS);
    }
    for (var c = 0u; c < chunks; c = c + 1u) {
        let q = spmv_pass(c, lid);
        if q.valid {
            if spmv_rows_owned {
                own_q[c] = q.value;
            } else {
                ap[q.row] = q.value;
            }
            pq = pq + wg_p[q.row] * q.value;
        }
    }
    return pq;
}

// x += α p, r −= α q for this thread's rows; returns their terms of (⟨r, D⁻¹r⟩, ⟨r, r⟩).
fn update(alpha: Real, n: u32, lid: u32) -> vec2<Real> {
    var acc = vec2<Real>(0.0);
    for (var c = 0u; c < WGCG_ROWS; c = c + 1u) {
        let row = c * WG + lid;
        if row < n {
            var ri: Real;
            var d: Real;
            if spmv_rows_owned {
                own_x[c] = own_x[c] + alpha * wg_p[row];
                ri = own_r[c] - alpha * own_q[c];
                own_r[c] = ri;
                d = own_d[c];
            } else {
                x[row] = x[row] + alpha * wg_p[row];
                ri = r[row] - alpha * ap[row];
                r[row] = ri;
                d = scale_at(row);
            }
            let zi = d * ri;
            acc = acc + vec2<Real>(ri * zi, ri * ri);
        }
    }
    return acc;
}

// p = D⁻¹r + β p for this thread's rows.
fn new_direction(beta: Real, n: u32, lid: u32) {
    for (var c = 0u; c < WGCG_ROWS; c = c + 1u) {
        let row = c * WG + lid;
        if row < n {
            if spmv_rows_owned {
                wg_p[row] = own_d[c] * own_r[c] + beta * wg_p[row];
            } else {
                wg_p[row] = scale_at(row) * r[row] + beta * wg_p[row];
            }
        }
    }
}

// Stops the solve with `status` at residual index `at` (thread 0).
fn stop_at(status: u32, at: u32) {
    atomicStore(&state[0], status);
    atomicStore(&state[2], at);
}

// Records ‖r‖² of the iterate with residual index `at` (thread 0: a plain store; the counter
// state[1] follows at the launch's end) and says whether the solve goes on: not on a
// non-finite or converged residual, nor when ⟨r, D⁻¹r⟩ ≤ 0 with r ≠ 0 (D⁻¹ or A not positive
// definite). Every thread reaches the same decision from the same sums.
fn record_and_test(at: u32, rr: Real, rho: Real, tol2: Real, lid: u32) -> bool {
    let bad = !is_finite(rr);
    let done = !bad && rr <= tol2;
    let not_spd = !bad && !done && rr > Real(0.0) && !(rho > Real(0.0));
    if lid == 0u {
        history[min(at, arrayLength(&history) - 1u)] = rr;
        if bad {
            stop_at(STATUS_NON_FINITE, at);
        } else if done {
            stop_at(STATUS_CONVERGED, at);
        } else if not_spd {
            stop_at(STATUS_NOT_SPD, at);
        }
    }
    return !bad && !done && !not_spd;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let first = (wgcg.flags & WGCG_FIRST) != 0u;
    if ids.lid == 0u {
        wg_status = atomicLoad(&state[0]);
        wg_its = atomicLoad(&state[1]);
        wg_scalars = vec2<Real>(scalars[2], scalars[WGCG_RHO]);
    }
    var s0 = vec4<Real>(0.0);
    if first {
        s0 = sum_partials(0u, 1u, ids);
    }
    if workgroupUniformLoad(&wg_status) != STATUS_RUNNING {
        return;
    }
    // Residual norms recorded so far: the iterations done + 1.
    var its = workgroupUniformLoad(&wg_its);
    let sc = workgroupUniformLoad(&wg_scalars);
    let tol2 = sc.x;
    var rho = sc.y;
    let n = params.n;
    load_iterate(n, ids.lid);
    var going = true;
    if first {
        rho = s0.x;
        going = record_and_test(its, s0.y, rho, tol2, ids.lid);
        its = its + 1u;
    }
    for (var k = 0u; going && k < wgcg.iters && its <= wgcg.limit; k = k + 1u) {
        // p complete (loaded, or updated by every thread) before the product gathers it.
        workgroupBarrier();
        let pq = product(ids.lid);
        let pap = wg_sum2_redundant(vec2<Real>(pq, Real(0.0)), ids).x;
        if !(pap > Real(0.0)) || !is_finite(pap) {
            // ⟨p,Ap⟩ ≤ 0: not SPD, stopped before anything changes (as update_cg does).
            if ids.lid == 0u {
                stop_at(select(STATUS_NON_FINITE, STATUS_NOT_SPD, is_finite(pap)), its);
            }
            break;
        }
        if !spmv_rows_owned {
            // Ap of every row (written by whichever thread the format handed it) before the
            // row's owner reads it.
            storageBarrier();
        }
        let s = wg_sum2_redundant(update(rho / pap, n, ids.lid), ids);
        going = record_and_test(its, s.y, s.x, tol2, ids.lid);
        its = its + 1u;
        let beta = s.x / rho;
        rho = s.x;
        if going {
            // Every thread's reads of p in the product ended at the sums' barriers.
            new_direction(beta, n, ids.lid);
        }
    }
    store_iterate(n, ids.lid);
    if ids.lid == 0u {
        atomicStore(&state[1], its);
        scalars[WGCG_RHO] = rho;
    }
}

fn wg_sum2_redundant(v: vec2<Real>, ids: Ids) -> vec2<Real> {
    let s = subgroupAdd(v);
    if ids.sg_lane == 0u {
        red_scratch[ids.sg_id] = vec4<Real>(s, Real(0.0), Real(0.0));
    }
    workgroupBarrier();
    var t = vec2<Real>(Real(0.0));
    for (var i = ids.sg_lane; i < ids.n_sg; i = i + ids.sg_size) {
        t = t + red_scratch[i].xy;
    }
    let total = subgroupAdd(t);
    if ids.lid == 0u {
        red_total = vec4<Real>(total, Real(0.0), Real(0.0));
    }
    return workgroupUniformLoad(&red_total).xy;
}
