// ca_block_dots_staged: `ca_block_dots`'s first reduction stage of
//
//   D[i, j] = ⟨pool[x0 + i], pool[y0 + j]⟩,   i < nx, j < ny,
//
// (the same 4 × 4 tiles, partials slots and `ca_block_finish`), with every column read from
// memory ONCE per launch. `ca_block_dots` launches a workgroup per (tile, row chunk), so a
// column is read by every tile that uses it and only the cache stands between those reads
// and memory: on an H200 its launches ran at 35–40 % of the bandwidth their unique bytes
// need (BENCHMARKS.md, 2026-11-28). Here one workgroup per row chunk (params.groups of them,
// a grid stride over chunks) stages the chunk's rows of all nx + ny columns in workgroup
// memory, vec4s of four consecutive rows, then its threads form the tiles from the staged
// rows: thread lid works on tile lid mod tiles over every parts-th vec4 of rows
// (parts = WG div tiles), sixteen 4-row dot products per eight workgroup loads. At the end
// the parts of each tile are summed in workgroup memory (a tree per accumulator) and the
// tile's first part stores the workgroup's partial sums where `ca_block_dots` would.
//
// The host launches it where the staged rows hold at least CS_MIN_ROW4 vec4s per column
// (4·(⌈nx/4⌉ + ⌈ny/4⌉) ≤ CS_STAGE4 / CS_MIN_ROW4 columns), tiles ≤ WG and WG ≤ 256 (the
// tree's array of WG sums), and `ca_block_dots` otherwise (`CaSystem::record_dots`).
//
// params: num = x0, den = nx, dst = y0, comp = ny, slot = the first partials slot,
// groups = the launch's workgroups (partials per slot).

// vec4s of staged rows: 6 KiB in f32, 12 KiB in f64 (with the tree's WG sums and the
// reduction library's scratch, within the 32 KiB of workgroup memory lavapipe allows).
const CS_STAGE4: u32 = 384u;

var<workgroup> cs_stage: array<vec4<Real>, CS_STAGE4>;
var<workgroup> cs_tree: array<Sum, WG>;

// Column c of the stage (X columns padded to 4·⌈nx/4⌉, then Y's), rows row .. row + 3 of the
// pool (0 for a padding column or past n).
fn cs_load(c: u32, xcols: u32, row: u32) -> vec4<Real> {
    var col = 0u;
    if c < xcols {
        if c >= params.den {
            return vec4<Real>(Real(0.0));
        }
        col = params.num + c;
    } else {
        if c - xcols >= params.comp {
            return vec4<Real>(Real(0.0));
        }
        col = params.dst + c - xcols;
    }
    let n = params.n;
    let base = col * n + row;
    if row + 3u < n {
        return vec4<Real>(pool_get(base), pool_get(base + 1u), pool_get(base + 2u), pool_get(base + 3u));
    }
    var v = vec4<Real>(Real(0.0));
    for (var k = 0u; k < 4u; k = k + 1u) {
        if row + k < n {
            v[k] = pool_get(base + k);
        }
    }
    return v;
}

// The sum over the parts of each tile of one accumulator, left in cs_tree[tile] (uniform
// control flow: every thread calls it).
fn cs_tree_sum(a: Sum, lid: u32, tiles: u32, parts: u32) {
    cs_tree[lid] = a;
    workgroupBarrier();
    var live = parts;
    while live > 1u {
        let half = (live + 1u) / 2u;
        if lid < tiles * (live - half) {
            cs_tree[lid] = sum_merge(cs_tree[lid], cs_tree[lid + tiles * half]);
        }
        workgroupBarrier();
        live = half;
    }
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let quads = (params.den + 3u) / 4u;
    let quartets = (params.comp + 3u) / 4u;
    let tiles = quads * quartets;
    let xcols = 4u * quads;
    let cols = xcols + 4u * quartets;
    // vec4s of rows per column in a chunk.
    let row4 = CS_STAGE4 / cols;
    let chunk_rows = 4u * row4;
    let parts = WG / tiles;
    let lid = ids.lid;
    let tile = lid % tiles;
    let part = lid / tiles;
    let quad = tile % quads;
    let j0 = 4u * (tile / quads);
    let w = ids.wid.y * ids.nwg.x + ids.wid.x;
    // Spare workgroups of a grid split into two dimensions (uniform: the whole workgroup).
    if w >= params.groups {
        return;
    }
    var a0 = sum_zero();
    var a1 = sum_zero();
    var a2 = sum_zero();
    var a3 = sum_zero();
    let xb = 4u * quad * row4;
    let yb = (xcols + j0) * row4;
    for (var row0 = w * chunk_rows; row0 < n; row0 = row0 + params.groups * chunk_rows) {
        for (var k = lid; k < cols * row4; k = k + WG) {
            cs_stage[k] = cs_load(k / row4, xcols, row0 + 4u * (k % row4));
        }
        workgroupBarrier();
        if part < parts {
            for (var q = part; q < row4; q = q + parts) {
                let x0 = cs_stage[xb + q];
                let x1 = cs_stage[xb + row4 + q];
                let x2 = cs_stage[xb + 2u * row4 + q];
                let x3 = cs_stage[xb + 3u * row4 + q];
                let y0 = cs_stage[yb + q];
                let y1 = cs_stage[yb + row4 + q];
                let y2 = cs_stage[yb + 2u * row4 + q];
                let y3 = cs_stage[yb + 3u * row4 + q];
                a0 = sum_add(a0, vec4<Real>(dot(x0, y0), dot(x1, y0), dot(x2, y0), dot(x3, y0)));
                a1 = sum_add(a1, vec4<Real>(dot(x0, y1), dot(x1, y1), dot(x2, y1), dot(x3, y1)));
                a2 = sum_add(a2, vec4<Real>(dot(x0, y2), dot(x1, y2), dot(x2, y2), dot(x3, y2)));
                a3 = sum_add(a3, vec4<Real>(dot(x0, y3), dot(x1, y3), dot(x2, y3), dot(x3, y3)));
            }
        }
        workgroupBarrier();
    }
    // Threads past parts·tiles hold empty sums the trees never read. Between trees no
    // barrier: a tree's first store is each thread's own entry, read by others only after it.
    let g = params.groups;
    let base = params.slot + quad + quads * j0;
    let first = lid < tiles;
    cs_tree_sum(a0, lid, tiles, parts);
    if first {
        partial_store(base * g + w, cs_tree[lid]);
    }
    cs_tree_sum(a1, lid, tiles, parts);
    if first && j0 + 1u < params.comp {
        partial_store((base + quads) * g + w, cs_tree[lid]);
    }
    cs_tree_sum(a2, lid, tiles, parts);
    if first && j0 + 2u < params.comp {
        partial_store((base + 2u * quads) * g + w, cs_tree[lid]);
    }
    cs_tree_sum(a3, lid, tiles, parts);
    if first && j0 + 3u < params.comp {
        partial_store((base + 3u * quads) * g + w, cs_tree[lid]);
    }
}
