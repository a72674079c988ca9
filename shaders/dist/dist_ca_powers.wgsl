// dist_ca_powers: one step of CA-GMRES's matrix powers on one device's rows (the
// distributed twin of cagmres/ca_powers.wgsl):
//   pool[dst] = c_A · (A_loc · [v; v_halo]) + c_s · pool[src] + c_p · pool[prev]
// for rows dist.begin..dist.end, v = dist_ca_load's (D⁻¹) pool[src], with the first
// reduction stage of ‖pool[dst]‖² (the restart residual's ρ²: (c_A, c_s, c_p) = (−1, 0, 1),
// src = x, prev = b; a powers step's launches are recorded without a reduction, its sums
// unused). (c_A, c_s, c_p) = coef[0..3], written by the host before the phase. Launched over
// the interior rows while the halo is in flight, then over the boundary rows.
// Library: lib/dist.wgsl, lib/dist_rows.wgsl, lib/dist_ca.wgsl, lib/dist_pool.wgsl.
// CPU twin: cpu::cagmres::powers::matrix_powers_with and matrix::partition::LocalPart::mul_ext.

@group(0) @binding(8) var<storage, read> v_ext: array<Real>;
@group(0) @binding(13) var<storage, read> coef: array<Real>;

fn dist_x(col: u32) -> Real {
    return v_ext[col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let c_a = coef[0];
    let c_s = coef[1];
    let c_p = coef[2];
    let n = ca.n;
    var acc = vec4<Real>(Real(0.0));
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        var v = c_a * dist_row(i);
        if c_s != Real(0.0) {
            v = v + c_s * pool_get(ca.src * n + i);
        }
        if c_p != Real(0.0) {
            v = v + c_p * pool_get(ca.prev * n + i);
        }
        pool_set(ca.dst * n + i, v);
        acc = acc + vec4<Real>(v * v, Real(0.0), Real(0.0), Real(0.0));
    }
    dist_store(acc, ids);
}
