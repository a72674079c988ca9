// dist_gmres_orth: the first classical Gram–Schmidt pass's update of one device's rows and
// the second pass's inner products (CGS2):
//   w = w − Σ_{k=1..gm.nsub} h_k v_k      (h_k = hcoef[k] = ⟨v_k, w⟩ summed over devices)
// with the first reduction stage of ⟨w, w⟩ and ⟨v_k, w⟩ for k < gm.count. The second
// pass's update is dist_gmres_prepare's, fused with the normalisation.
// Library: lib/dist.wgsl, lib/dist_basis.wgsl. CPU twin: cpu::gmres (orthogonalize, CGS2).

@group(0) @binding(9) var<storage, read_write> w: array<Real>;
@group(0) @binding(23) var<storage, read> basis: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        w[i] = w[i] - dist_basis_combo(i);
    }
    dist_basis_dots(ids);
}
