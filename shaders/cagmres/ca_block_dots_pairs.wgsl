// ca_block_dots_pairs: `ca_block_dots` (the same D = XᵀY in the same tiles and partials slots,
// `lib/ca_block_tile.wgsl`) with two rows a grid stride apart per step: sixteen loads before
// their products instead of eight. For long row loops (the host launches it where each
// thread has eight rows or more, n ≥ 8·groups·WG): 7–10 % less time per call at n = 1.2e7
// and 5e7 on an H200. With fewer rows per thread the one-row kernel is faster (at 1e6 this
// loop's kernel took 8 % longer even when it ran no pair), hence two kernels
// (BENCHMARKS.md, 2026-11-28).
//
// params: num = x0, den = nx, dst = y0, comp = ny, slot = the first partials slot.

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let t = cb_tile(ids);
    // The spare workgroups of a grid split into two dimensions.
    if t.chunk >= params.groups {
        return;
    }
    let n = params.n;
    let stride = params.groups * WG;
    var a0 = sum_zero();
    var a1 = sum_zero();
    var a2 = sum_zero();
    var a3 = sum_zero();
    var row = t.chunk * WG + ids.lid;
    for (; row + stride < n; row = row + 2u * stride) {
        let r1 = row + stride;
        let x = cb_x4(t, row);
        let z = cb_x4(t, r1);
        let y = cb_y4(t, row);
        let v = cb_y4(t, r1);
        a0 = sum_add(a0, x * y.x + z * v.x);
        a1 = sum_add(a1, x * y.y + z * v.y);
        a2 = sum_add(a2, x * y.z + z * v.z);
        a3 = sum_add(a3, x * y.w + z * v.w);
    }
    if row < n {
        let x = cb_x4(t, row);
        let y = cb_y4(t, row);
        a0 = sum_add(a0, x * y.x);
        a1 = sum_add(a1, x * y.y);
        a2 = sum_add(a2, x * y.z);
        a3 = sum_add(a3, x * y.w);
    }
    cb_store(t, a0, a1, a2, a3, ids);
}
