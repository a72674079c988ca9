// ca_tsqr_leaf: the leaves of CA-GMRES's CAQR/TSQR (paper 002 §V-C; CPU twin
// `cpu::cagmres::tsqr::caqr`, whose binary tree is here one level of g leaves whose R factors
// the host stacks and factors). Workgroup w takes leaf w (shaders/lib/ca_leaf.wgsl: rows
// [r0, r1) of the s columns W = pool[dst .. dst + s)), and in place in the pool
//
//   1. factors W_w = Q_w R_w by Householder reflections, column by column (LAPACK's dgeqr2
//      and dlarfg: H_k = I − τ_k v vᵀ, v_k = 1, R_kk = β = −sign(x_k)‖x‖): for column k ONE
//      workgroup reduction (four inner products per workgroup sum) gives ‖x below k‖² and
//      the products of x below k with the columns to its right, which is all the reflector
//      and its application need; v below k replaces x, R's row k the pivot row;
//   2. writes R_w (s × s, upper, column-major) into the cycle buffer at slot + w·s²;
//   3. overwrites the leaf with its explicit Q_w (n_w × s) by applying the reflectors to the
//      first s columns of the identity backwards (dorg2r), one workgroup reduction per
//      column.
//
// Each leaf is independent: no partials, no second stage. The host reads the g stacked R_w
// (its one host sync per block), factors the stack [R_0; …; R_{g−1}] = Q̂ R and uploads Q̂;
// ca_tsqr_apply forms Q = diag(Q_w)·Q̂. Rows of a leaf are read and written by the threads of
// one workgroup only; storageBarrier() orders them between the steps (the rows each thread
// touches shift with k).
//
// params: n, groups = g (≤ the workgroups launched), dst = the block's first pool vector,
// comp = s (≤ CA_MAX_S), slot = the stack's index in the cycle buffer.

// Row `row` of block columns j0 … j0+3 (0 past the block).
fn leaf_row4(j0: u32, s: u32, row: u32) -> vec4<Real> {
    var v = vec4<Real>(Real(0.0));
    for (var c = 0u; c < 4u; c = c + 1u) {
        if j0 + c < s {
            v[c] = pool_get(leaf_at(j0 + c, row));
        }
    }
    return v;
}

// Σ over the leaf's rows r > k of W[r, k]·W[r, j] for j = j0 … s−1, four per workgroup sum,
// into d[j] (uniform: every thread gets the sums).
fn below_products(k: u32, j0: u32, s: u32, r0: u32, r1: u32, ids: Ids) -> array<Real, 20> {
    var d: array<Real, 20>;
    for (var j = j0; j < s; j = j + 4u) {
        var acc = sum_zero();
        for (var r = r0 + k + 1u + ids.lid; r < r1; r = r + WG) {
            acc = sum_add(acc, pool_get(leaf_at(k, r)) * leaf_row4(j, s, r));
        }
        let t = sum_value(workgroup_total(acc, ids));
        d[j] = t.x;
        d[j + 1u] = t.y;
        d[j + 2u] = t.z;
        d[j + 3u] = t.w;
    }
    return d;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let w = ids.wid.x;
    if w >= params.groups {
        return;
    }
    let s = min(params.comp, CA_MAX_S);
    let r0 = leaf_row(w);
    let r1 = leaf_row(w + 1u);
    var tau: array<Real, CA_MAX_S>;

    // 1. Householder QR.
    for (var k = 0u; k < s; k = k + 1u) {
        storageBarrier();
        // The pivot row k, columns k … s−1 (x_k and the future row k of R).
        var p: array<Real, CA_MAX_S>;
        for (var j = k; j < s; j = j + 1u) {
            p[j] = pool_get(leaf_at(j, r0 + k));
        }
        storageBarrier();
        let d = below_products(k, k, s, r0, r1, ids);
        let alpha = p[k];
        let sigma = d[k];
        var beta = alpha;
        var t = Real(0.0);
        var scale = Real(0.0);
        if sigma > Real(0.0) {
            let nrm = sqrt(alpha * alpha + sigma);
            beta = select(nrm, -nrm, alpha >= Real(0.0));
            t = (beta - alpha) / beta;
            scale = Real(1.0) / (alpha - beta);
        }
        tau[k] = t;
        // τ·(v·W[:, j]) with v_k = 1, v_r = scale·x_r below.
        var tw: array<Real, CA_MAX_S>;
        for (var j = k + 1u; j < s; j = j + 1u) {
            tw[j] = t * (p[j] + scale * d[j]);
        }
        for (var r = r0 + k + 1u + ids.lid; r < r1; r = r + WG) {
            let v = scale * pool_get(leaf_at(k, r));
            pool_set(leaf_at(k, r), v);
            for (var j = k + 1u; j < s; j = j + 1u) {
                pool_set(leaf_at(j, r), pool_get(leaf_at(j, r)) - tw[j] * v);
            }
        }
        if ids.lid == 0u {
            pool_set(leaf_at(k, r0 + k), beta);
            for (var j = k + 1u; j < s; j = j + 1u) {
                pool_set(leaf_at(j, r0 + k), p[j] - tw[j]);
            }
        }
    }

    // 2. R_w into the stack.
    storageBarrier();
    let ss = s * s;
    let base = params.slot + w * ss;
    for (var e = ids.lid; e < ss; e = e + WG) {
        let l = e % s;
        let j = e / s;
        var v = Real(0.0);
        if l <= j {
            v = pool_get(leaf_at(j, r0 + l));
        }
        scalars[base + e] = v;
    }
    storageBarrier();

    // 3. Q_w = H_0 H_1 … H_{s−1} [I; 0], backwards (column k of Q replaces v_k).
    for (var kk = s; kk > 0u; kk = kk - 1u) {
        let k = kk - 1u;
        let t = tau[k];
        // Columns j > k hold H_{k+1} … H_{s−1} e_j, zero in rows ≤ k: v·Q[:, j] sums below k.
        let d = below_products(k, k + 1u, s, r0, r1, ids);
        for (var r = r0 + k + 1u + ids.lid; r < r1; r = r + WG) {
            let v = pool_get(leaf_at(k, r));
            for (var j = k + 1u; j < s; j = j + 1u) {
                pool_set(leaf_at(j, r), pool_get(leaf_at(j, r)) - t * d[j] * v);
            }
            pool_set(leaf_at(k, r), -t * v);
        }
        if ids.lid == 0u {
            pool_set(leaf_at(k, r0 + k), Real(1.0) - t);
            for (var j = k + 1u; j < s; j = j + 1u) {
                pool_set(leaf_at(j, r0 + k), -t * d[j]);
            }
            for (var l = 0u; l < k; l = l + 1u) {
                pool_set(leaf_at(k, r0 + l), Real(0.0));
            }
        }
        storageBarrier();
    }
}
