// diag_scale: z = D⁻¹ ∘ r, the Jacobi preconditioner applied as its own launch (classical
// solvers; the pipelined ones fuse it into their update kernel).

@group(0) @binding(5) var<storage, read> dinv: array<Real>;
@group(0) @binding(6) var<storage, read> r: array<Real>;
@group(0) @binding(7) var<storage, read_write> z: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        z[i] = dinv[i] * r[i];
    }
}
