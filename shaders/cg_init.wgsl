// cg_init: r = b − A·x, z = D⁻¹r (or r), p = z, and the first reduction stage of
// ⟨r,z⟩ and ⟨r,r⟩ into slot 0 of the partials. Shared by classical and pipelined CG.
// Grid-stride over rows with exactly `params.groups` workgroups.

@group(0) @binding(5) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(6) var<storage, read> col_idx: array<u32>;
@group(0) @binding(7) var<storage, read> values: array<Real>;
@group(0) @binding(8) var<storage, read> x: array<Real>;
@group(0) @binding(9) var<storage, read> b: array<Real>;
@group(0) @binding(10) var<storage, read_write> r: array<Real>;
@group(0) @binding(11) var<storage, read_write> p: array<Real>;
@group(0) @binding(12) var<storage, read> dinv: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    var acc = vec4<Real>(Real(0.0));
    for (var row = ids.wid.x * WG + ids.lid; row < params.n; row = row + params.groups * WG) {
        var ax = Real(0.0);
        let end = row_ptr[row + 1u];
        for (var k = row_ptr[row]; k < end; k = k + 1u) {
            ax = ax + values[k] * x[col_idx[k]];
        }
        let ri = b[row] - ax;
        var zi = ri;
        if params.jacobi != 0u {
            zi = dinv[row] * ri;
        }
        r[row] = ri;
        p[row] = zi;
        acc = acc + vec4<Real>(ri * zi, ri * ri, Real(0.0), Real(0.0));
    }
    let t = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[ids.wid.x] = t;
    }
}
