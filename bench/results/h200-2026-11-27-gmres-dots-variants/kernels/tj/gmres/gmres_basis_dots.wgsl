// gmres_basis_dots: first reduction stage of the inner products ⟨v_j, t⟩ for all j in
// [params.num, params.den) at once, t = pool vector `params.dst` (paper 000 §3.3: "fuse
// multiple inner products into the same kernel").
//
// Kernel 2 of pipelined GMRES (⟨v_j, v_i⟩ for j = 1 … i−2, classical Gram–Schmidt), the
// inner products of classical GMRES (one at a time for MGS, ⟨v_j, w⟩ for all j for CGS), the
// re-orthogonalisation pass of CGS2, and the Gram matrix VᵀV behind `orthogonality_loss`.
//
// Inner product number q = j − params.num goes to partials slot params.slot + q/4,
// component q%4 (zero in the unused components of the last slot). Eight inner products
// (a chunk) share one pass over t.
//
// The chunks run side by side: with g ≥ C workgroups for C chunks, workgroup w takes chunk
// w mod C over every (g/C)-th block of rows and writes zero partial sums for the other
// chunks at its index, so each slot still holds g partials (what the second stage sums)
// while each workgroup sweeps the rows once, not C times, and different workgroups read
// different basis vectors at the same time. With fewer workgroups than chunks, workgroup w
// sweeps all rows for chunks w, w + g, ….



// Experiment tj: every workgroup sweeps its rows once (two rows a grid stride apart per
// thread, as gmres_gs_update) and loops over all j for those rows; each ⟨v_j, t⟩ term goes
// through subgroupAdd into a per-(j, subgroup) accumulator in workgroup memory.
const TJ_MAX_Q: u32 = 64u;
const TJ_MAX_SG: u32 = 16u;
var<workgroup> tj_acc: array<Real, 2048>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let count = params.den - min(params.num, params.den);
    if count == 0u {
        return;
    }
    let n = params.n;
    let g = params.groups;
    let w = ids.wid.x;
    let nsg = ids.n_sg;
    for (var k = ids.lid; k < 2048u; k = k + WG) {
        tj_acc[k] = Real(0.0);
    }
    workgroupBarrier();
    let t_off = params.dst * n;
    let stride = g * WG;
    for (var base = w * WG; base < n; base = base + 2u * stride) {
        let row = base + ids.lid;
        let ok0 = row < n;
        let r0 = min(row, n - 1u);
        let row1 = base + stride + ids.lid;
        let ok1 = row1 < n;
        let r1 = min(row1, n - 1u);
        var t0 = pool_get(t_off + r0);
        var t1 = pool_get(t_off + r1);
        if !ok0 {
            t0 = Real(0.0);
        }
        if !ok1 {
            t1 = Real(0.0);
        }
        for (var q = 0u; q < count; q = q + 1u) {
            let j = params.num + q;
            let x = t0 * pool_get(j * n + r0) + t1 * pool_get(j * n + r1);
            let s = subgroupAdd(x);
            if ids.sg_lane == 0u {
                tj_acc[q * nsg + ids.sg_id] = tj_acc[q * nsg + ids.sg_id] + s;
            }
        }
    }
    workgroupBarrier();
    let quads = (count + 3u) / 4u;
    for (var k = ids.lid; k < quads; k = k + WG) {
        var v = vec4<Real>(Real(0.0));
        for (var c = 0u; c < 4u; c = c + 1u) {
            let q = 4u * k + c;
            if q < count {
                var s = Real(0.0);
                for (var sg = 0u; sg < nsg; sg = sg + 1u) {
                    s = s + tj_acc[q * nsg + sg];
                }
                v[c] = s;
            }
        }
        partial_store((params.slot + k) * g + w, sum_of(v));
    }
}
