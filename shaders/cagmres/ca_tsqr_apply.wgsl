// ca_tsqr_apply: the last step of CA-GMRES's CAQR (after ca_tsqr_leaf and the host's QR of
// the stacked leaf factors [R_0; …; R_{g−1}] = Q̂ R): Q = diag(Q_0, …, Q_{g−1})·Q̂ in place,
// row by row. Workgroup w takes leaf w (shaders/lib/ca_leaf.wgsl); row r of the leaf becomes
//
//   Q[r, j] = Σ_l Q_w[r, l]·Q̂_w[l, j],   Q̂_w = rows w·s … w·s + s−1 of Q̂,
//
// with Q̂_w in the cycle buffer at slot + w·s² (column-major s × s, as the host wrote it).
// No sums.
//
// params: n, groups = g, dst = the block's first pool vector, comp = s (≤ CA_MAX_S),
// slot = the stack's index in the cycle buffer.

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let w = ids.wid.x;
    if w >= params.groups {
        return;
    }
    let s = min(params.comp, CA_MAX_S);
    let qh = params.slot + w * s * s;
    for (var r = leaf_row(w) + ids.lid; r < leaf_row(w + 1u); r = r + WG) {
        var q: array<Real, CA_MAX_S>;
        for (var l = 0u; l < s; l = l + 1u) {
            q[l] = pool_get(leaf_at(l, r));
        }
        for (var j = 0u; j < s; j = j + 1u) {
            var v = Real(0.0);
            for (var l = 0u; l < s; l = l + 1u) {
                v = v + q[l] * scalars[qh + l + s * j];
            }
            pool_set(leaf_at(j, r), v);
        }
    }
}
