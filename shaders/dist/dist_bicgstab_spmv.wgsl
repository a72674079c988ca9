// dist_bicgstab_spmv: one device's share of a BiCGStab product with a right Jacobi
// preconditioner (D⁻¹ over the owned entries and the halo, or none):
//   y = A_loc · (D⁻¹ ∘ [v; v_halo])   for rows dist.begin..dist.end
// with the first reduction stage of ⟨y, r̂⟩, ⟨y, y⟩ and ⟨y, v⟩ over those rows (v = p: α's
// denominator and its breakdown norm; v = s: ω = ⟨As, s⟩/⟨As, As⟩). Launched over the interior
// rows while the halo is in flight, then over the boundary rows.
// Library: lib/dist.wgsl, lib/dist_rows.wgsl. CPU twin: matrix::partition::LocalPart::mul_ext.

@group(0) @binding(8) var<storage, read> v_ext: array<Real>;
@group(0) @binding(9) var<storage, read_write> y: array<Real>;
@group(0) @binding(10) var<storage, read> dinv_ext: array<Real>;
@group(0) @binding(19) var<storage, read> rhat: array<Real>;

fn dist_x(c: u32) -> Real {
    if dist.jacobi != 0u {
        return dinv_ext[c] * v_ext[c];
    }
    return v_ext[c];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    var acc = vec4<Real>(Real(0.0));
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        let s = dist_row(i);
        y[i] = s;
        acc = acc + vec4<Real>(s * rhat[i], s * s, s * v_ext[i], Real(0.0));
    }
    dist_store(acc, ids);
}
