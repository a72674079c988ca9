// ca_block_dots: the first reduction stage of a block of inner products in ONE launch,
//
//   D[i, j] = ⟨pool[x0 + i], pool[y0 + j]⟩,   i < nx, j < ny,
//
// BOrth's Q_prevᵀW, a TSQR's Gram matrix WᵀW, a Gram–Schmidt column's projections and the
// restart's ‖r‖² (paper 002 §V: "the Gram matrix VᵀW for all pairs in one reduction").
// Tiles of 4 × 4 products over row chunks (`lib/ca_block_tile.wgsl`), one row per step.
// Where each thread has eight rows or more the host launches `ca_block_dots_pairs` instead.
//
// params: num = x0, den = nx, dst = y0, comp = ny, slot = the first partials slot.

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let t = cb_tile(ids);
    // The spare workgroups of a grid split into two dimensions.
    if t.chunk >= params.groups {
        return;
    }
    var a0 = sum_zero();
    var a1 = sum_zero();
    var a2 = sum_zero();
    var a3 = sum_zero();
    for (var row = t.chunk * WG + ids.lid; row < params.n; row = row + params.groups * WG) {
        let x = cb_x4(t, row);
        a0 = sum_add(a0, x * cb_at(t.y0, t.y_end, row));
        a1 = sum_add(a1, x * cb_at(t.y0 + 1u, t.y_end, row));
        a2 = sum_add(a2, x * cb_at(t.y0 + 2u, t.y_end, row));
        a3 = sum_add(a3, x * cb_at(t.y0 + 3u, t.y_end, row));
    }
    cb_store(t, a0, a1, a2, a3, ids);
}
