// gmres_basis_scale: y = x / scalars[params.den] on vectors of the Krylov pool — the
// normalisation launch of classical GMRES(m) (v_0 = r/ρ0, Alg. 5 l.4; v_i = w/R_{i,i}, l.14),
// y = pool vector `params.dst`, x = pool vector `params.num`. Tests the status word first.


var<workgroup> gm_den: Real;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    if ids.lid == 0u {
        gm_den = scalars[params.den];
    }
    let d = workgroupUniformLoad(&gm_den);
    let n = params.n;
    let x_off = params.num * n;
    let y_off = params.dst * n;
    for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + params.groups * WG) {
        pool_set(y_off + row, pool_get(x_off + row) / d);
    }
}
