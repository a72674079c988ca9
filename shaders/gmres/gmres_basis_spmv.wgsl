// gmres_basis_spmv: y = A·x on vectors of the Krylov pool (vector k at offset k·n): the
// plain SpMV launch of classical GMRES(m) (paper 000, Alg. 5 l.7), y = pool vector
// `params.dst`, x = pool vector `params.num`. Tests the status word first.


fn spmv_x(col: u32) -> Real {
    return pool_get(params.num * params.n + col);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let y_off = params.dst * params.n;
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let y = spmv_pass(chunk, ids.lid);
        if y.valid {
            pool_set(y_off + y.row, y.value);
        }
    }
}
