// dist_gmres_residual: one device's rows of GMRES's restart residual (cpu/gmres.rs l.2):
//   w = b − A_loc · [x; x_halo]   for rows dist.begin..dist.end
// with the first reduction stage of ⟨w, w⟩ (ρ0²). Launched over the interior rows while x's
// halo is in flight, then over the boundary rows. The next dist_gmres_prepare scales w into v_0.
// Library: lib/dist.wgsl, lib/dist_rows.wgsl. CPU twin: matrix::partition::LocalPart::mul_ext.

@group(0) @binding(8) var<storage, read> x_ext: array<Real>;
@group(0) @binding(9) var<storage, read_write> w: array<Real>;
@group(0) @binding(24) var<storage, read> rhs: array<Real>;

fn dist_x(col: u32) -> Real {
    return x_ext[col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    var acc = vec4<Real>(Real(0.0));
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        let ri = rhs[i] - dist_row(i);
        w[i] = ri;
        acc = acc + vec4<Real>(ri * ri, Real(0.0), Real(0.0), Real(0.0));
    }
    dist_store(acc, ids);
}
