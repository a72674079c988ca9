// ca_block_tile: the tile of a ca_block_dots launch (`ca_block_dots`, one row per step, and
// `ca_block_dots_pairs`, two rows per step), on a pool's `pool_get`:
//
//   D[i, j] = ⟨pool[x0 + i], pool[y0 + j]⟩,   i < nx, j < ny,
//
// in tiles of 4 X columns × 4 Y columns (quads = ⌈nx/4⌉, quartets = ⌈ny/4⌉, tiles =
// quads·quartets): per row a tile loads 8 entries for 16 products, kept in four vec4
// accumulators. The launch has tiles × groups workgroups: linear workgroup w works on tile
// w mod tiles over row chunk w div tiles (consecutive workgroups share a row chunk, so its
// rows come from the cache after the first tile reads them). The sum of ⟨X_i, Y_j⟩ for the
// four i of quad q goes to partials slot params.slot + q + quads·j, entry chunk, which is
// what ca_block_finish sums.
//
// params: num = x0, den = nx, dst = y0, comp = ny, slot = the first partials slot.

struct CbTile {
    // Row chunk (≥ params.groups: a spare workgroup of a grid split into two dimensions).
    chunk: u32,
    quad: u32,
    quads: u32,
    // The tile's first Y column, relative to y0.
    j0: u32,
    // Pool indices of the tile's first X and Y columns, and the ends of X and Y.
    i0: u32,
    y0: u32,
    x_end: u32,
    y_end: u32,
}

fn cb_tile(ids: Ids) -> CbTile {
    let quads = (params.den + 3u) / 4u;
    let quartets = (params.comp + 3u) / 4u;
    let tiles = quads * quartets;
    let w = ids.wid.y * ids.nwg.x + ids.wid.x;
    let tile = w % tiles;
    let quad = tile % quads;
    let j0 = 4u * (tile / quads);
    return CbTile(
        w / tiles,
        quad,
        quads,
        j0,
        params.num + 4u * quad,
        params.dst + j0,
        params.num + params.den,
        params.dst + params.comp,
    );
}

fn cb_at(col: u32, end: u32, row: u32) -> Real {
    if col < end {
        return pool_get(col * params.n + row);
    }
    return Real(0.0);
}

// The tile's four X entries of `row`.
fn cb_x4(t: CbTile, row: u32) -> vec4<Real> {
    return vec4<Real>(
        cb_at(t.i0, t.x_end, row),
        cb_at(t.i0 + 1u, t.x_end, row),
        cb_at(t.i0 + 2u, t.x_end, row),
        cb_at(t.i0 + 3u, t.x_end, row),
    );
}

// The tile's four Y entries of `row` (0 past ny).
fn cb_y4(t: CbTile, row: u32) -> vec4<Real> {
    return vec4<Real>(
        cb_at(t.y0, t.y_end, row),
        cb_at(t.y0 + 1u, t.y_end, row),
        cb_at(t.y0 + 2u, t.y_end, row),
        cb_at(t.y0 + 3u, t.y_end, row),
    );
}

// Four reductions of the workgroup, in uniform control flow, into the tile's partials slots;
// slots of absent Y columns (past ny) are not written.
fn cb_store(t: CbTile, a0: Sum, a1: Sum, a2: Sum, a3: Sum, ids: Ids) {
    let t0 = workgroup_total(a0, ids);
    let t1 = workgroup_total(a1, ids);
    let t2 = workgroup_total(a2, ids);
    let t3 = workgroup_total(a3, ids);
    if ids.lid == 0u {
        let g = params.groups;
        let base = params.slot + t.quad + t.quads * t.j0;
        partial_store(base * g + t.chunk, t0);
        if t.j0 + 1u < params.comp {
            partial_store((base + t.quads) * g + t.chunk, t1);
        }
        if t.j0 + 2u < params.comp {
            partial_store((base + 2u * t.quads) * g + t.chunk, t2);
        }
        if t.j0 + 3u < params.comp {
            partial_store((base + 3u * t.quads) * g + t.chunk, t3);
        }
    }
}
