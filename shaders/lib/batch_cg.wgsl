// batch_cg.wgsl (piece): whole iterations of Jacobi-preconditioned CG for many independent
// systems at once, one workgroup per work item. An item is one matrix and its right-hand
// sides as the columns of `Col` (`batch_cg`: one column, `Col = Real`; `batch_cg_block`: a
// block of four, `Col = vec4<Real>`, so each matrix entry is read once for all four).
//
// Why one workgroup: every inner product of a small system is a workgroup reduction
// (`workgroup_sum`, barriers only), so a launch runs `iters` whole iterations of its item
// with no global reduction and no launch per step. Items do not talk to each other; an item
// whose columns have all stopped costs one status load per launch. The kernel file defines
// `Col`, `col_zero`, `col_to4`, `col_from4` (the columns as lanes of a vec4<Real>),
// `sum_one` (a lane-wise workgroup sum) and `sum_pair` (two lane-wise workgroup sums, packed
// in one when a column fits a lane pair),
// and `LANES`, the columns an item has room for (1 or 4).
//
// The recurrence is the classical preconditioned CG of src/cpu/batch_cg.rs (its CPU twin),
// with z = D⁻¹r formed on the fly:
//   q = A p; α = ρ/⟨p,q⟩; x += α p; r −= α q; ρ' = ⟨r, D⁻¹r⟩; β = ρ'/ρ; p = D⁻¹r + β p.

// Item records in `index` (ITEM_WORDS u32 each): rows, offset of its row pointers in
// `index`, offset of its vectors in `vecs`, offset of its D⁻¹ in `reals`, active columns.
const ITEM_WORDS: u32 = 8u;
// The vectors in `vecs`: five regions of `stride` columns (every item's x, then every b, r,
// p, q), an item's rows at its offset in each; the x region comes first so it reads back
// in one piece.
const V_X: u32 = 0u;
const V_B: u32 = 1u;
const V_R: u32 = 2u;
const V_P: u32 = 3u;
const V_Q: u32 = 4u;
// Column statuses beyond solver_state.wgsl's STATUS_*: the iteration limit, and a lane of a
// block item that holds no right-hand side.
const STATUS_MAX_ITER: u32 = 5u;
const STATUS_IDLE: u32 = 6u;

struct BatchParams {
    items: u32,        // work items of this launch
    iters: u32,        // iterations each item runs in this launch (at most)
    max_iter: u32,     // iteration limit per column
    history_len: u32,  // ‖r‖² entries kept per column (0: none)
    init: u32,         // 1: r = b − A x, p = D⁻¹r and ρ first (start or restart from x)
    jacobi: u32,       // 1: D⁻¹ bound in `reals` at each item's offset
    col_base: u32,     // offset of the column indices in `index`
    stride: u32,       // columns of one vector region of `vecs`
}

@group(0) @binding(5) var<uniform> batch: BatchParams;
// Item records, then each matrix's row pointers (absolute positions k of its entries),
// then the column indices (entry k at col_base + k, local to its matrix).
@group(0) @binding(6) var<storage, read> index: array<u32>;
// Every matrix's values (entry k at k), then each matrix's D⁻¹.
@group(0) @binding(7) var<storage, read> reals: array<Real>;
@group(0) @binding(8) var<storage, read_write> vecs: array<Col>;
// Per item: [status per column, iterations per column].
@group(0) @binding(9) var<storage, read_write> flags: array<vec4<u32>>;
// Per item: [ρ, ‖r‖², threshold²] per column.
@group(0) @binding(10) var<storage, read_write> sums: array<vec4<Real>>;
// solver_state.wgsl's `state[0]` counts the items that stopped; its `history` (binding 3)
// holds ‖r‖² per column and iteration, iteration-major (the host reads back only the
// iterations run): column c of item i at iteration k at k · LANES · items + LANES · i + c.

struct Item {
    rows: u32,
    ptr: u32,
    vec: u32,
    diag: u32,
}

struct ItemState {
    status: vec4<u32>,
    its: vec4<u32>,
    rho: vec4<Real>,
    rr: vec4<Real>,
    tol2: vec4<Real>,
}

var<workgroup> wg_state: ItemState;

fn item_at(i: u32) -> Item {
    let w = i * ITEM_WORDS;
    return Item(index[w], index[w + 1u], index[w + 2u], index[w + 3u]);
}

fn finite4(v: vec4<Real>) -> vec4<bool> {
    return abs(v) <= vec4<Real>(REAL_MAX);
}

// D⁻¹ of row `row` (1 without Jacobi).
fn dinv_at(it: Item, row: u32) -> Real {
    if batch.jacobi != 0u {
        return reals[it.diag + row];
    }
    return Real(1.0);
}

// (A·v)_row for the item's vector at `v` (an offset in `vecs`).
fn spmv_row(it: Item, row: u32, v: u32) -> Col {
    var acc = col_zero();
    let end = index[it.ptr + row + 1u];
    for (var k = index[it.ptr + row]; k < end; k = k + 1u) {
        acc = acc + reals[k] * vecs[v + index[batch.col_base + k]];
    }
    return acc;
}

// Records ‖r‖² of the columns in `lanes` at their iteration (thread 0 only).
fn record(item: u32, st: ItemState, lanes: vec4<bool>) {
    if batch.history_len == 0u {
        return;
    }
    for (var c = 0u; c < LANES; c = c + 1u) {
        if lanes[c] && st.its[c] < batch.history_len {
            history[st.its[c] * LANES * batch.items + LANES * item + c] = st.rr[c];
        }
    }
}

// r = b − A x, p = D⁻¹ r, ρ = ⟨r, D⁻¹r⟩, ‖r‖²; stops the columns already converged.
fn start(item: u32, it: Item, st_in: ItemState, ids: Ids) -> ItemState {
    var st = st_in;
    let n = it.rows;
    let x = it.vec + V_X * batch.stride;
    let b = it.vec + V_B * batch.stride;
    let r = it.vec + V_R * batch.stride;
    let p = it.vec + V_P * batch.stride;
    var prho = vec4<Real>(0.0);
    var prr = vec4<Real>(0.0);
    for (var row = ids.lid; row < n; row = row + WG) {
        let ri = vecs[b + row] - spmv_row(it, row, x);
        let zi = dinv_at(it, row) * ri;
        vecs[r + row] = ri;
        vecs[p + row] = zi;
        prho = prho + col_to4(ri * zi);
        prr = prr + col_to4(ri * ri);
    }
    let s = sum_pair(prho, prr, ids);
    let running = st.status == vec4<u32>(STATUS_RUNNING);
    st.rho = select(st.rho, s.a, running);
    st.rr = select(st.rr, s.b, running);
    if ids.lid == 0u {
        record(item, st, running);
    }
    let bad = running & !(finite4(s.a) & finite4(s.b));
    let done = running & !bad & (s.b <= st.tol2);
    // D⁻¹ must be positive definite: ⟨r, D⁻¹r⟩ ≤ 0 with r ≠ 0 is not.
    let not_spd = running & !bad & !done & !(s.a > vec4<Real>(0.0));
    let maxed = running & !bad & !done & !not_spd & (st.its >= vec4<u32>(batch.max_iter));
    st.status = select(st.status, vec4<u32>(STATUS_NON_FINITE), bad);
    st.status = select(st.status, vec4<u32>(STATUS_CONVERGED), done);
    st.status = select(st.status, vec4<u32>(STATUS_NOT_SPD), not_spd);
    st.status = select(st.status, vec4<u32>(STATUS_MAX_ITER), maxed);
    return st;
}

// One CG iteration of the item's running columns.
fn iterate(item: u32, it: Item, st_in: ItemState, ids: Ids) -> ItemState {
    var st = st_in;
    let n = it.rows;
    let x = it.vec + V_X * batch.stride;
    let r = it.vec + V_R * batch.stride;
    let p = it.vec + V_P * batch.stride;
    let q = it.vec + V_Q * batch.stride;
    let running = st.status == vec4<u32>(STATUS_RUNNING);
    // p of every row (written by other threads in the last step) before A·p reads it.
    storageBarrier();
    var ppq = vec4<Real>(0.0);
    for (var row = ids.lid; row < n; row = row + WG) {
        let qi = spmv_row(it, row, p);
        vecs[q + row] = qi;
        ppq = ppq + col_to4(vecs[p + row] * qi);
    }
    let pq = sum_one(ppq, ids);
    let ok = running & finite4(pq) & (pq > vec4<Real>(0.0));
    st.status = select(st.status, vec4<u32>(STATUS_NON_FINITE), running & !finite4(pq));
    st.status = select(st.status, vec4<u32>(STATUS_NOT_SPD), running & finite4(pq) & !ok);
    // Stopped columns take α = 0: their x and r stay as they are.
    let alpha = col_from4(select(vec4<Real>(0.0), st.rho / select(vec4<Real>(1.0), pq, ok), ok));
    var prho = vec4<Real>(0.0);
    var prr = vec4<Real>(0.0);
    for (var row = ids.lid; row < n; row = row + WG) {
        vecs[x + row] = vecs[x + row] + alpha * vecs[p + row];
        let ri = vecs[r + row] - alpha * vecs[q + row];
        vecs[r + row] = ri;
        let zi = dinv_at(it, row) * ri;
        prho = prho + col_to4(ri * zi);
        prr = prr + col_to4(ri * ri);
    }
    let s = sum_pair(prho, prr, ids);
    st.its = st.its + select(vec4<u32>(0u), vec4<u32>(1u), ok);
    let rho_old = st.rho;
    st.rho = select(st.rho, s.a, ok);
    st.rr = select(st.rr, s.b, ok);
    if ids.lid == 0u {
        record(item, st, ok);
    }
    let bad = ok & !(finite4(s.a) & finite4(s.b));
    let done = ok & !bad & (s.b <= st.tol2);
    let not_spd = ok & !bad & !done & !(s.a > vec4<Real>(0.0));
    let maxed = ok & !bad & !done & !not_spd & (st.its >= vec4<u32>(batch.max_iter));
    st.status = select(st.status, vec4<u32>(STATUS_NON_FINITE), bad);
    st.status = select(st.status, vec4<u32>(STATUS_CONVERGED), done);
    st.status = select(st.status, vec4<u32>(STATUS_NOT_SPD), not_spd);
    st.status = select(st.status, vec4<u32>(STATUS_MAX_ITER), maxed);
    let still = st.status == vec4<u32>(STATUS_RUNNING);
    if any(still) {
        let beta = col_from4(select(vec4<Real>(0.0), s.a / select(vec4<Real>(1.0), rho_old, still), still));
        for (var row = ids.lid; row < n; row = row + WG) {
            let zi = dinv_at(it, row) * vecs[r + row];
            vecs[p + row] = zi + beta * vecs[p + row];
        }
    }
    return st;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    for (var item = ids.wid.x; item < batch.items; item = item + ids.nwg.x) {
        // The previous item's last uniform load is done before thread 0 overwrites wg_state.
        workgroupBarrier();
        if ids.lid == 0u {
            wg_state = ItemState(
                flags[2u * item],
                flags[2u * item + 1u],
                sums[3u * item],
                sums[3u * item + 1u],
                sums[3u * item + 2u],
            );
        }
        var st = workgroupUniformLoad(&wg_state);
        let was_running = any(st.status == vec4<u32>(STATUS_RUNNING));
        if !was_running {
            continue;
        }
        let it = item_at(item);
        if batch.init != 0u {
            st = start(item, it, st, ids);
        }
        for (var k = 0u; k < batch.iters; k = k + 1u) {
            if !any(st.status == vec4<u32>(STATUS_RUNNING)) {
                break;
            }
            st = iterate(item, it, st, ids);
        }
        if ids.lid == 0u {
            flags[2u * item] = st.status;
            flags[2u * item + 1u] = st.its;
            sums[3u * item] = st.rho;
            sums[3u * item + 1u] = st.rr;
            if !any(st.status == vec4<u32>(STATUS_RUNNING)) {
                atomicAdd(&state[0], 1u);
            }
        }
    }
}
