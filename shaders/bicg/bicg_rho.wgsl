// bicg_rho: the first reduction stage of (⟨z,r̃⟩, ⟨z,z⟩, ⟨r̃,r̃⟩, ⟨r,r⟩) into partials slot 0
// for concurrent BiCG with a factored M (paper 004 §3: the A- and Aᵀ-recurrences side by
// side). It runs between the stacked apply [z; z̃] = [M⁻¹r; M⁻ᵀr̃] and bicg_direction_spmv,
// which finishes these sums (ρ = ⟨z,r̃⟩ for β and the breakdown test, ‖r‖ for the history):
// the slot bicg_update fills itself when z is D⁻¹r formed on the fly.
//
// rr = [r; r̃] and zz = [z; z̃], 2n entries each (params.n = n).

@group(0) @binding(5) var<storage, read> rr: array<Real>;
@group(0) @binding(6) var<storage, read> zz: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    var acc = sum_zero();
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        let zi = zz[i];
        let ri = rr[i];
        let rti = rr[params.n + i];
        acc = sum_add(acc, vec4<Real>(zi * rti, zi * zi, rti * rti, ri * ri));
    }
    store_sum(0u, acc, ids);
}
