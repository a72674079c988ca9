// gmres_own_dots.wgsl (on gmres_pool.wgsl and a format library): the first stage of the inner
// products of a vector w a GMRES product just wrote with basis vectors v_j, over the rows this
// workgroup's product wrote (chunks wid, wid + groups, …: the only rows of w it may read
// without a launch boundary, after a `storageBarrier`). Shared by fused GMRES's
// `gmres_scale_spmv_dots` (w = A v_{i−1}) and p(1)-GMRES's `gmres_p1_step` (w = u_i).

fn gm_basis_at(j: u32, end: u32, row: u32) -> Real {
    if j < end {
        return pool_get(j * params.n + row);
    }
    return Real(0.0);
}

// First stage of ⟨v_j, w⟩ (w = pool entries from `w_off`) for j = j0 … min(j0 + 8, end) − 1,
// into slots `slot` and `slot + 1` (four per slot, the layout `gmres_basis_dots` writes).
fn gm_dots_own_rows(w_off: u32, j0: u32, end: u32, slot: u32, ids: Ids) {
    var a0 = sum_zero();
    var a1 = sum_zero();
    let wide = j0 + 4u < end;
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let row = spmv_row_of(chunk, ids.lid);
        if row != SPMV_NO_ROW {
            let t = pool_get(w_off + row);
            a0 = sum_add(a0, t * vec4<Real>(
                gm_basis_at(j0, end, row),
                gm_basis_at(j0 + 1u, end, row),
                gm_basis_at(j0 + 2u, end, row),
                gm_basis_at(j0 + 3u, end, row),
            ));
            if wide {
                a1 = sum_add(a1, t * vec4<Real>(
                    gm_basis_at(j0 + 4u, end, row),
                    gm_basis_at(j0 + 5u, end, row),
                    gm_basis_at(j0 + 6u, end, row),
                    gm_basis_at(j0 + 7u, end, row),
                ));
            }
        }
    }
    store_sum(slot, a0, ids);
    if wide {
        store_sum(slot + 1u, a1, ids);
    }
}
