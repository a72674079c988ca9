// ca_block_dots: the first reduction stage of a block of inner products in ONE launch,
//
//   D[i, j] = ⟨pool[x0 + i], pool[y0 + j]⟩,   i < nx, j < ny,
//
// BOrth's Q_prevᵀW, a TSQR's Gram matrix WᵀW, a Gram–Schmidt column's projections and the
// restart's ‖r‖² (paper 002 §V: "the Gram matrix VᵀW for all pairs in one reduction").
//
// The launch has tiles × groups workgroups, tiles = ⌈nx/4⌉·ny: linear workgroup w works on
// tile t = w mod tiles (the four inner products i = 4(t mod ⌈nx/4⌉) + 0…3 with j = t div
// ⌈nx/4⌉) over row chunk w div tiles, and stores its sum in partials slot params.slot + t
// (component i mod 4), entry chunk. Consecutive workgroups share a row chunk and differ in
// tile, so the chunk's rows of X and Y come from the cache after the first tile reads them.
// ca_block_finish sums the slots.
//
// params: num = x0, den = nx, dst = y0, comp = ny, slot = the first partials slot.

@group(0) @binding(5) var<storage, read> pool: array<Real>;

fn cb_at(col: u32, end: u32, row: u32) -> Real {
    if col < end {
        return pool[col * params.n + row];
    }
    return Real(0.0);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let quads = (params.den + 3u) / 4u;
    let tiles = quads * params.comp;
    let w = ids.wid.y * ids.nwg.x + ids.wid.x;
    let chunk = w / tiles;
    // The spare workgroups of a grid split into two dimensions.
    if chunk >= params.groups {
        return;
    }
    let tile = w % tiles;
    let end = params.num + params.den;
    let i0 = params.num + 4u * (tile % quads);
    let y_off = (params.dst + tile / quads) * n;
    var acc = sum_zero();
    for (var row = chunk * WG + ids.lid; row < n; row = row + params.groups * WG) {
        let t = pool[y_off + row];
        acc = sum_add(acc, t * vec4<Real>(
            cb_at(i0, end, row),
            cb_at(i0 + 1u, end, row),
            cb_at(i0 + 2u, end, row),
            cb_at(i0 + 3u, end, row),
        ));
    }
    let total = workgroup_total(acc, ids);
    if ids.lid == 0u {
        partial_store((params.slot + tile) * params.groups + chunk, total);
    }
}
