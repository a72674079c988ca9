// residual.wgsl: r = b − A·x row by row, for the kernels that start a solve (cg_init,
// bicg_init, bicgstab_init; they also give the f64 true residual after the loop).
//
// It binds x (8) and b (9) and multiplies A by x (`spmv_x`). The kernel defines
//
//   fn residual_row(row: u32, ri: Real) -> vec4<Real>
//
// which stores what it derives from ri = (b − A·x)[row] and returns the row's terms of the
// inner products it needs, and calls `residual_partials(ids)` from uniform control flow: a
// grid-stride loop over the row chunks of A (any format) with exactly `params.groups`
// workgroups, then the first reduction stage of those terms into partials slot 0.

@group(0) @binding(8) var<storage, read> x: array<Real>;
@group(0) @binding(9) var<storage, read> b: array<Real>;

fn spmv_x(col: u32) -> Real {
    return x[col];
}

fn residual_partials(ids: Ids) {
    var acc = vec4<Real>(Real(0.0));
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let ax_row = spmv_pass(chunk, ids.lid);
        if ax_row.valid {
            let row = ax_row.row;
            acc = acc + residual_row(row, b[row] - ax_row.value);
        }
    }
    let t = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[ids.wid.x] = t;
    }
}
