// reliable_replace: the residual replacement of mixed CG with reliable updates, run between
// update_cg and spmv_dot_cg of an iteration (Real = f32): r := r32 (b − A·x_hi computed in the
// outer precision and rounded), p += D⁻¹(r32 − r) so that p = z + β·p_prev holds for the new z
// as it held for the recursive one, and the first reduction stage of ⟨r,z⟩, ⟨r,r⟩ into slot 0
// (what update_cg left there for spmv_dot_cg). CG then continues as if its recurrences had
// produced the true residual.

@group(0) @binding(5) var<storage, read_write> r: array<Real>;
@group(0) @binding(6) var<storage, read_write> p: array<Real>;
@group(0) @binding(7) var<storage, read> r32: array<f32>;
@group(0) @binding(8) var<storage, read> dinv: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    var acc = sum_zero();
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        let rn = Real(r32[i]);
        var d = Real(1.0);
        if params.jacobi != 0u {
            d = dinv[i];
        }
        p[i] = p[i] + d * (rn - r[i]);
        r[i] = rn;
        acc = sum_add(acc, vec4<Real>(rn * d * rn, rn * rn, Real(0.0), Real(0.0)));
    }
    store_sum(0u, acc, ids);
}
