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
// share one pass over t.


fn gm_basis_at(j: u32, end: u32, row: u32) -> Real {
    if j < end {
        return pool_get(j * params.n + row);
    }
    return Real(0.0);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let n = params.n;
    let t_off = params.dst * n;
    let end = params.den;
    for (var j = params.num; j < end; j = j + 8u) {
        var a0 = sum_zero();
        var a1 = sum_zero();
        let wide = j + 4u < end;
        for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + params.groups * WG) {
            let t = pool_get(t_off + row);
            a0 = sum_add(a0, t * vec4<Real>(
                gm_basis_at(j, end, row),
                gm_basis_at(j + 1u, end, row),
                gm_basis_at(j + 2u, end, row),
                gm_basis_at(j + 3u, end, row),
            ));
            if wide {
                a1 = sum_add(a1, t * vec4<Real>(
                    gm_basis_at(j + 4u, end, row),
                    gm_basis_at(j + 5u, end, row),
                    gm_basis_at(j + 6u, end, row),
                    gm_basis_at(j + 7u, end, row),
                ));
            }
        }
        let slot = params.slot + (j - params.num) / 4u;
        store_sum(slot, a0, ids);
        if wide {
            store_sum(slot + 1u, a1, ids);
        }
    }
}
