// dist_gmres_spmv_dots: one device's share of GMRES's product and the first Gram–Schmidt
// pass's inner products (simpler GMRES, cpu/gmres.rs; CGS fused into the product):
//   w = A_loc · [z; z_halo]   for rows dist.begin..dist.end,   z = D⁻¹ v_{i−1} (or v_{i−1})
// with the first reduction stage of ⟨w, w⟩ and ⟨v_k, w⟩ for k < gm.count (= i). Launched over
// the interior rows while the halo is in flight, then over the boundary rows (interleaved
// slots: dist.quad_stride = 2).
// Library: lib/dist.wgsl, lib/dist_rows.wgsl, lib/dist_basis.wgsl, lib/dist_pool.wgsl.
// CPU twin: matrix::partition::LocalPart::mul_ext and cpu::gmres.

@group(0) @binding(8) var<storage, read> z_ext: array<Real>;
@group(0) @binding(9) var<storage, read_write> w: array<Real>;

fn dist_x(col: u32) -> Real {
    return z_ext[col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        w[i] = dist_row(i);
    }
    dist_basis_dots(ids);
}
