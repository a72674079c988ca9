// cg_init: r = b − A·x, z = D⁻¹r (or r), p = z, and the first reduction stage of
// ⟨r,z⟩ and ⟨r,r⟩ into slot 0 of the partials. Shared by classical and pipelined CG.
// Grid-stride over row chunks of A (any format) with exactly `params.groups` workgroups.

@group(0) @binding(8) var<storage, read> x: array<Real>;
@group(0) @binding(9) var<storage, read> b: array<Real>;
@group(0) @binding(10) var<storage, read_write> r: array<Real>;
@group(0) @binding(11) var<storage, read_write> p: array<Real>;
@group(0) @binding(12) var<storage, read> dinv: array<Real>;

fn spmv_x(col: u32) -> Real {
    return x[col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    var acc = vec4<Real>(Real(0.0));
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let ax_row = spmv_pass(chunk, ids.lid);
        if ax_row.valid {
            let row = ax_row.row;
            let ri = b[row] - ax_row.value;
            var zi = ri;
            if params.jacobi != 0u {
                zi = dinv[row] * ri;
            }
            r[row] = ri;
            p[row] = zi;
            acc = acc + vec4<Real>(ri * zi, ri * ri, Real(0.0), Real(0.0));
        }
    }
    let t = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[ids.wid.x] = t;
    }
}
