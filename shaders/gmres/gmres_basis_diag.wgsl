// gmres_basis_diag: z = D⁻¹·v on vectors of the Krylov pool — the Jacobi (right)
// preconditioner applied as its own launch by classical GMRES(m) before its SpMV
// (z = pool vector `params.dst`, v = pool vector `params.num`). Pipelined GMRES fuses it
// into gmres_normalize / gmres_residual instead.

@group(0) @binding(11) var<storage, read> dinv: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let n = params.n;
    let v_off = params.num * n;
    let z_off = params.dst * n;
    for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + params.groups * WG) {
        pool_set(z_off + row, dinv[row] * pool_get(v_off + row));
    }
}
