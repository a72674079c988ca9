// dist_spmv_dot: one device's share of pipelined CG's product and its inner products
// (the distributed twin of cg/spmv_dot_cg.wgsl, paper 000 Alg. 2 lines 13–15):
//   Ap = A_loc · [p; p_halo]   for rows dist.begin..dist.end
// and the first reduction stage of ⟨p,Ap⟩ and ⟨Ap,D⁻¹Ap⟩ over those rows. The host launches
// it twice per iteration: interior rows while the halo is in flight, boundary rows after it
// arrives; it adds the partials of both launches over workgroups and devices.
// Library: lib/dist.wgsl, lib/dist_rows.wgsl. CPU twin: matrix::partition::LocalPart::mul_ext.

@group(0) @binding(8) var<storage, read> p_ext: array<Real>;
@group(0) @binding(9) var<storage, read_write> ap: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;

fn dist_x(col: u32) -> Real {
    return p_ext[col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    var acc = vec4<Real>(Real(0.0));
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        let s = dist_row(i);
        ap[i] = s;
        var d = Real(1.0);
        if dist.jacobi != 0u {
            d = dinv[i];
        }
        acc = acc + vec4<Real>(p_ext[i] * s, s * d * s, Real(0.0), Real(0.0));
    }
    dist_store(acc, ids);
}
