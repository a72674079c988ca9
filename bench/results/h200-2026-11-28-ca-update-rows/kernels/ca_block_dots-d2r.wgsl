// ca_block_dots: the first reduction stage of a block of inner products in ONE launch,
//
//   D[i, j] = ⟨pool[x0 + i], pool[y0 + j]⟩,   i < nx, j < ny,
//
// BOrth's Q_prevᵀW, a TSQR's Gram matrix WᵀW, a Gram–Schmidt column's projections and the
// restart's ‖r‖² (paper 002 §V: "the Gram matrix VᵀW for all pairs in one reduction").
//
// Work is split in tiles of 4 X columns × 4 Y columns (quads = ⌈nx/4⌉, quartets = ⌈ny/4⌉,
// tiles = quads·quartets): per row a tile loads 8 entries for 16 products, kept in four
// vec4 accumulators. The launch has tiles × groups workgroups: linear workgroup w works on
// tile w mod tiles over row chunk w div tiles (consecutive workgroups share a row chunk, so
// its rows come from the cache after the first tile reads them). The sum of ⟨X_i, Y_j⟩ for
// the four i of quad q goes to partials slot params.slot + q + quads·j, entry chunk, which is
// what ca_block_finish sums.
//
// params: num = x0, den = nx, dst = y0, comp = ny, slot = the first partials slot.


fn cb_at(col: u32, end: u32, row: u32) -> Real {
    if col < end {
        return pool_get(col * params.n + row);
    }
    return Real(0.0);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let quads = (params.den + 3u) / 4u;
    let quartets = (params.comp + 3u) / 4u;
    let tiles = quads * quartets;
    let w = ids.wid.y * ids.nwg.x + ids.wid.x;
    let chunk = w / tiles;
    // The spare workgroups of a grid split into two dimensions.
    if chunk >= params.groups {
        return;
    }
    let tile = w % tiles;
    let quad = tile % quads;
    let j0 = 4u * (tile / quads);
    let x_end = params.num + params.den;
    let y_end = params.dst + params.comp;
    let i0 = params.num + 4u * quad;
    let y0 = params.dst + j0;
    var a0 = sum_zero();
    var a1 = sum_zero();
    var a2 = sum_zero();
    var a3 = sum_zero();
    let stride = params.groups * WG;
    var row = chunk * WG + ids.lid;
    // Two rows a stride apart per step: sixteen loads before their products.
    for (; row + stride < n; row = row + 2u * stride) {
        let r1 = row + stride;
        let x = vec4<Real>(
            cb_at(i0, x_end, row),
            cb_at(i0 + 1u, x_end, row),
            cb_at(i0 + 2u, x_end, row),
            cb_at(i0 + 3u, x_end, row),
        );
        let z = vec4<Real>(
            cb_at(i0, x_end, r1),
            cb_at(i0 + 1u, x_end, r1),
            cb_at(i0 + 2u, x_end, r1),
            cb_at(i0 + 3u, x_end, r1),
        );
        let y = vec4<Real>(
            cb_at(y0, y_end, row),
            cb_at(y0 + 1u, y_end, row),
            cb_at(y0 + 2u, y_end, row),
            cb_at(y0 + 3u, y_end, row),
        );
        let v = vec4<Real>(
            cb_at(y0, y_end, r1),
            cb_at(y0 + 1u, y_end, r1),
            cb_at(y0 + 2u, y_end, r1),
            cb_at(y0 + 3u, y_end, r1),
        );
        a0 = sum_add(a0, x * y.x + z * v.x);
        a1 = sum_add(a1, x * y.y + z * v.y);
        a2 = sum_add(a2, x * y.z + z * v.z);
        a3 = sum_add(a3, x * y.w + z * v.w);
    }
    if row < n {
        let x = vec4<Real>(
            cb_at(i0, x_end, row),
            cb_at(i0 + 1u, x_end, row),
            cb_at(i0 + 2u, x_end, row),
            cb_at(i0 + 3u, x_end, row),
        );
        a0 = sum_add(a0, x * cb_at(y0, y_end, row));
        a1 = sum_add(a1, x * cb_at(y0 + 1u, y_end, row));
        a2 = sum_add(a2, x * cb_at(y0 + 2u, y_end, row));
        a3 = sum_add(a3, x * cb_at(y0 + 3u, y_end, row));
    }
    // Four reductions of the workgroup, in uniform control flow; slots of absent Y columns
    // (past ny) are not written.
    let t0 = workgroup_total(a0, ids);
    let t1 = workgroup_total(a1, ids);
    let t2 = workgroup_total(a2, ids);
    let t3 = workgroup_total(a3, ids);
    if ids.lid == 0u {
        let g = params.groups;
        let base = params.slot + quad + quads * j0;
        partial_store(base * g + chunk, t0);
        if j0 + 1u < params.comp {
            partial_store((base + quads) * g + chunk, t1);
        }
        if j0 + 2u < params.comp {
            partial_store((base + 2u * quads) * g + chunk, t2);
        }
        if j0 + 3u < params.comp {
            partial_store((base + 3u * quads) * g + chunk, t3);
        }
    }
}
