// dist_gmres_orth: the first classical Gram–Schmidt pass's update of one device's rows and
// the second pass's inner products (CGS2):
//   w = w − Σ_{k=1..gm.nsub} h_k v_k      (h_k = hcoef[k] = ⟨v_k, w⟩ summed over devices)
// with the first reduction stage of ⟨w, w⟩ and ⟨v_k, w⟩ for k < gm.count. The second
// pass's update is dist_gmres_prepare's, fused with the normalisation.
// Library: lib/dist.wgsl, lib/dist_basis.wgsl, lib/dist_pool.wgsl. CPU twin: cpu::gmres (orthogonalize, CGS2).

@group(0) @binding(9) var<storage, read_write> w: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    // Two rows a grid stride apart per trip, loads before stores (w is read_write: a store
    // holds back the loads after it); past the block's end, row i again, not stored.
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + 2u * stride) {
        let i1 = i + stride;
        let ok1 = i1 < dist.end;
        let j = select(i, i1, ok1);
        let s = dist_basis_combo2(i, j);
        let w0 = w[i];
        let w1 = w[j];
        w[i] = w0 - s.x;
        if ok1 {
            w[j] = w1 - s.y;
        }
    }
    dist_basis_dots(ids);
}
