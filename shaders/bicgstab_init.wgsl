// bicgstab_init: r = b − A·x, r0* = r, p = r (Alg. 3/4 lines 1–4 of paper 000) and the
// first reduction stage of ⟨r,r0*⟩ and ⟨r,r⟩ into partials slot 0. Shared by classical and
// pipelined BiCGStab; also the f64 true residual ‖b − Ax‖² after the loop (it overwrites r,
// r0* and p, which a restart recomputes anyway). No status test: it must run after a stop.
// Grid-stride over rows with exactly `params.groups` workgroups.

@group(0) @binding(5) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(6) var<storage, read> col_idx: array<u32>;
@group(0) @binding(7) var<storage, read> values: array<Real>;
@group(0) @binding(8) var<storage, read> x: array<Real>;
@group(0) @binding(9) var<storage, read> b: array<Real>;
@group(0) @binding(10) var<storage, read_write> r: array<Real>;
@group(0) @binding(11) var<storage, read_write> rstar: array<Real>;
@group(0) @binding(12) var<storage, read_write> p: array<Real>;

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
        r[row] = ri;
        rstar[row] = ri;
        p[row] = ri;
        acc = acc + vec4<Real>(ri * ri, ri * ri, Real(0.0), Real(0.0));
    }
    let t = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[ids.wid.x] = t;
    }
}
