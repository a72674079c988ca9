// gmres_basis_axpy: t −= Σ_{j = params.num … params.den − 1} c_j · v_j on vectors of the
// Krylov pool, c_j = scalars[params.comp + j] (the coefficients stay on the device), in
// increasing j. With one j it is the axpy of classical GMRES(m) with modified Gram–Schmidt
// (w −= R_{j,i} v_j) and of its residual update (r −= ξ_{i−1} v_{i−1}, Alg. 5 l.16); with the
// whole range it is the vector update of classical Gram–Schmidt (Alg. 5 l.11–13, a GEMV).
// t = pool vector `params.dst`. Tests the status word first.


@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let n = params.n;
    let t_off = params.dst * n;
    for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + params.groups * WG) {
        var t = pool_get(t_off + row);
        for (var j = params.num; j < params.den; j = j + 1u) {
            t = t - scalars[params.comp + j] * pool_get(j * n + row);
        }
        pool_set(t_off + row, t);
    }
}
