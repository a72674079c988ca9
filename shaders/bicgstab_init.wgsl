// bicgstab_init: r = b − A·x, r0* = r, p = r (Alg. 3/4 lines 1–4 of paper 000) and the
// first reduction stage of ⟨r,r0*⟩ and ⟨r,r⟩ into partials slot 0. Shared by classical and
// pipelined BiCGStab; also the f64 true residual ‖b − Ax‖² after the loop (it overwrites r,
// r0* and p, which a restart recomputes anyway). No status test: it must run after a stop.
// Grid-stride over row chunks of A (any format) with exactly `params.groups` workgroups.

@group(0) @binding(8) var<storage, read> x: array<Real>;
@group(0) @binding(9) var<storage, read> b: array<Real>;
@group(0) @binding(10) var<storage, read_write> r: array<Real>;
@group(0) @binding(11) var<storage, read_write> rstar: array<Real>;
@group(0) @binding(12) var<storage, read_write> p: array<Real>;

fn spmv_x(col: u32) -> Real {
    return x[col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    var acc = vec4<Real>(Real(0.0));
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let spmv_out = spmv_pass(chunk, ids.lid);
        if spmv_out.valid {
            let row = spmv_out.row;
            let ax = spmv_out.value;
            let ri = b[row] - ax;
            r[row] = ri;
            rstar[row] = ri;
            p[row] = ri;
            acc = acc + vec4<Real>(ri * ri, ri * ri, Real(0.0), Real(0.0));
        }
    }
    let t = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[ids.wid.x] = t;
    }
}
