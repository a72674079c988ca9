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
// `sum_three` (three lane-wise workgroup sums: one reduction when a column is one lane) and
// `LANES`, the columns an item has room for (1 or 4).
//
// The recurrence is Chronopoulos–Gear CG (the CG of src/cpu/batch_cg.rs, its CPU twin): the
// direction's product q = A·p is carried as q = w + β q with w = A·z, so an iteration is two
// passes over the rows and ONE reduction of (γ, ‖r‖², δ):
//   pass A (own rows):  p = z + β p; q = w + β q; x += α p; r −= α q; z = D⁻¹r; γ, ‖r‖² terms
//   pass B (after a barrier: neighbours' r): w = A·z; δ = ⟨z, w⟩ terms
//   then β = γ/γ₋₁, α = γ/(δ − β γ/α₋₁).

// Item records in `index` (ITEM_WORDS u32 each): rows, offset of its row pointers in
// `index`, offset of its vectors in `vecs`, offset of its D⁻¹ in `reals`, active columns.
const ITEM_WORDS: u32 = 8u;
// The vectors in `vecs`: six regions of `stride` columns (every item's x, then every b, r,
// p, q, w), an item's rows at its offset in each; the x region comes first so it reads back
// in one piece.
const V_X: u32 = 0u;
const V_B: u32 = 1u;
const V_R: u32 = 2u;
const V_P: u32 = 3u;
const V_Q: u32 = 4u;
const V_W: u32 = 5u;
// Column statuses beyond solver_state.wgsl's STATUS_*: the iteration limit, and a lane of a
// block item that holds no right-hand side.
const STATUS_MAX_ITER: u32 = 5u;
const STATUS_IDLE: u32 = 6u;
// Per item in `sums` (vec4 per entry, a lane per column).
const S_GAMMA: u32 = 0u;
const S_RR: u32 = 1u;
const S_TOL2: u32 = 2u;
const S_ALPHA: u32 = 3u;
const S_BETA: u32 = 4u;
const SUMS: u32 = 5u;

struct BatchParams {
    items: u32,        // work items of this launch
    iters: u32,        // iterations each item runs in this launch (at most)
    max_iter: u32,     // iteration limit per column
    history_len: u32,  // ‖r‖² entries kept per column (0: none)
    init: u32,         // 1: start (or restart) from x: r = b − A x and the first scalars
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
// Per item: SUMS entries (S_*) per column.
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
    gamma: vec4<Real>,
    rr: vec4<Real>,
    tol2: vec4<Real>,
    alpha: vec4<Real>,
    beta: vec4<Real>,
}

var<workgroup> wg_state: ItemState;

fn item_at(i: u32) -> Item {
    let w = i * ITEM_WORDS;
    return Item(index[w], index[w + 1u], index[w + 2u], index[w + 3u]);
}

fn finite4(v: vec4<Real>) -> vec4<bool> {
    return abs(v) <= vec4<Real>(REAL_MAX);
}

fn region(it: Item, v: u32) -> u32 {
    return it.vec + v * batch.stride;
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

// (A·D⁻¹r)_row: w = A·z with z = D⁻¹r formed on the fly.
fn spmv_z_row(it: Item, row: u32, r: u32) -> Col {
    if batch.jacobi == 0u {
        return spmv_row(it, row, r);
    }
    var acc = col_zero();
    let end = index[it.ptr + row + 1u];
    for (var k = index[it.ptr + row]; k < end; k = k + 1u) {
        let j = index[batch.col_base + k];
        acc = acc + (reals[k] * reals[it.diag + j]) * vecs[r + j];
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

// Pass B: w = A·z for the item's rows, and the reduction of (γ, ‖r‖², δ) with the pass-A
// terms `pg`, `prr` each thread brings. The barrier first: pass B reads other rows' r.
fn pass_b(it: Item, pg: vec4<Real>, prr: vec4<Real>, ids: Ids) -> Three {
    storageBarrier();
    let r = region(it, V_R);
    let w = region(it, V_W);
    var pd = vec4<Real>(0.0);
    for (var row = ids.lid; row < it.rows; row = row + WG) {
        let wi = spmv_z_row(it, row, r);
        vecs[w + row] = wi;
        pd = pd + col_to4(dinv_at(it, row) * vecs[r + row] * wi);
    }
    return sum_three(pg, prr, pd, ids);
}

// After a reduction: the stopping tests of the `live` columns in order (non-finite,
// converged, not SPD, breakdown, the iteration limit), then α and β of those that go on.
fn decide(st_in: ItemState, live: vec4<bool>, s: Three, first: bool) -> ItemState {
    var st = st_in;
    let gamma_old = st.gamma;
    st.gamma = select(st.gamma, s.a, live);
    st.rr = select(st.rr, s.b, live);
    let delta = s.c;
    // α = γ/δ at a start; γ/(δ − β γ/α₋₁) after (Chronopoulos–Gear).
    var beta = vec4<Real>(0.0);
    if !first {
        beta = s.a / select(vec4<Real>(1.0), gamma_old, live);
    }
    var den = delta;
    if !first {
        den = delta - beta * s.a / select(vec4<Real>(1.0), st.alpha, live);
    }
    let bad = live & !(finite4(s.a) & finite4(s.b) & finite4(delta));
    let done = live & !bad & (s.b <= st.tol2);
    let positive_den = den > vec4<Real>(0.0);
    // D⁻¹ must be positive definite: γ = ⟨r, D⁻¹r⟩ ≤ 0 with r ≠ 0 says it is not; at a
    // start so does δ = ⟨z, Az⟩ ≤ 0 of A.
    var not_spd = live & !bad & !done & !(s.a > vec4<Real>(0.0));
    // After a start the denominator (⟨p, Ap⟩ in exact arithmetic) is a difference that
    // rounding can drive to ≤ 0 on an SPD matrix: a breakdown of the recurrence, which the
    // host recovers from by a restart from x (a start's δ ≤ 0 is A's own).
    var broke = vec4<bool>(false);
    if first {
        not_spd = not_spd | (live & !bad & !done & !positive_den);
    } else {
        broke = live & !bad & !done & !not_spd & !positive_den;
    }
    let maxed = live & !bad & !done & !not_spd & !broke & (st.its >= vec4<u32>(batch.max_iter));
    st.status = select(st.status, vec4<u32>(STATUS_NON_FINITE), bad);
    st.status = select(st.status, vec4<u32>(STATUS_CONVERGED), done);
    st.status = select(st.status, vec4<u32>(STATUS_NOT_SPD), not_spd);
    st.status = select(st.status, vec4<u32>(STATUS_BREAKDOWN), broke);
    st.status = select(st.status, vec4<u32>(STATUS_MAX_ITER), maxed);
    let go = st.status == vec4<u32>(STATUS_RUNNING);
    st.alpha = select(st.alpha, s.a / select(vec4<Real>(1.0), den, go), go);
    st.beta = select(st.beta, beta, go);
    return st;
}

// Start (or restart) from x: r = b − A x, p = q = 0, then w = A·z and the first scalars
// (β = 0, so the next pass A sets p = z, q = w).
fn start(item: u32, it: Item, st_in: ItemState, ids: Ids) -> ItemState {
    var st = st_in;
    let x = region(it, V_X);
    let b = region(it, V_B);
    let r = region(it, V_R);
    let p = region(it, V_P);
    let q = region(it, V_Q);
    var pg = vec4<Real>(0.0);
    var prr = vec4<Real>(0.0);
    for (var row = ids.lid; row < it.rows; row = row + WG) {
        let ri = vecs[b + row] - spmv_row(it, row, x);
        vecs[r + row] = ri;
        vecs[p + row] = col_zero();
        vecs[q + row] = col_zero();
        pg = pg + col_to4(dinv_at(it, row) * ri * ri);
        prr = prr + col_to4(ri * ri);
    }
    let s = pass_b(it, pg, prr, ids);
    let live = st.status == vec4<u32>(STATUS_RUNNING);
    st = decide(st, live, s, true);
    st.beta = vec4<Real>(0.0);
    if ids.lid == 0u {
        record(item, st, live);
    }
    return st;
}

// One CG iteration of the item's running columns. Stopped columns take α = 0 and β = 0:
// their x and r stay as they are.
fn iterate(item: u32, it: Item, st_in: ItemState, ids: Ids) -> ItemState {
    var st = st_in;
    let x = region(it, V_X);
    let r = region(it, V_R);
    let p = region(it, V_P);
    let q = region(it, V_Q);
    let w = region(it, V_W);
    let live = st.status == vec4<u32>(STATUS_RUNNING);
    let alpha = col_from4(select(vec4<Real>(0.0), st.alpha, live));
    let beta = col_from4(select(vec4<Real>(0.0), st.beta, live));
    var pg = vec4<Real>(0.0);
    var prr = vec4<Real>(0.0);
    for (var row = ids.lid; row < it.rows; row = row + WG) {
        let d = dinv_at(it, row);
        let pi = d * vecs[r + row] + beta * vecs[p + row];
        let qi = vecs[w + row] + beta * vecs[q + row];
        vecs[p + row] = pi;
        vecs[q + row] = qi;
        vecs[x + row] = vecs[x + row] + alpha * pi;
        let ri = vecs[r + row] - alpha * qi;
        vecs[r + row] = ri;
        pg = pg + col_to4(d * ri * ri);
        prr = prr + col_to4(ri * ri);
    }
    let s = pass_b(it, pg, prr, ids);
    st.its = st.its + select(vec4<u32>(0u), vec4<u32>(1u), live);
    st = decide(st, live, s, false);
    if ids.lid == 0u {
        record(item, st, live);
    }
    return st;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    for (var item = ids.wid.x; item < batch.items; item = item + ids.nwg.x) {
        // The previous item's last uniform load is done before thread 0 overwrites wg_state.
        workgroupBarrier();
        if ids.lid == 0u {
            let s = SUMS * item;
            wg_state = ItemState(
                flags[2u * item],
                flags[2u * item + 1u],
                sums[s + S_GAMMA],
                sums[s + S_RR],
                sums[s + S_TOL2],
                sums[s + S_ALPHA],
                sums[s + S_BETA],
            );
        }
        var st = workgroupUniformLoad(&wg_state);
        if !any(st.status == vec4<u32>(STATUS_RUNNING)) {
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
            let s = SUMS * item;
            flags[2u * item] = st.status;
            flags[2u * item + 1u] = st.its;
            sums[s + S_GAMMA] = st.gamma;
            sums[s + S_RR] = st.rr;
            sums[s + S_ALPHA] = st.alpha;
            sums[s + S_BETA] = st.beta;
            if !any(st.status == vec4<u32>(STATUS_RUNNING)) {
                atomicAdd(&state[0], 1u);
            }
        }
    }
}
