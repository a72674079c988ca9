// residual.wgsl: r = b − A·x row by row, for the kernels that start a solve (cg_init,
// bicg_init, bicgstab_init; they also give the f64 true residual after the loop).
//
// It binds x (8) and b (9) and multiplies A by x (`spmv_x`). The kernel defines
//
//   fn residual_row(row: u32, ri: Real) -> vec4<Real>
//
// which stores what it derives from ri = (b − A·x)[row] and returns the row's terms of the
// inner products it needs, and calls `residual_partials(ids)` from uniform control flow: the
// loop of `spmv_partials.wgsl` (which a kernel built on this piece is built on too) with the
// first reduction stage of those terms into partials slot 0.

@group(0) @binding(8) var<storage, read> x: array<Real>;
@group(0) @binding(9) var<storage, read> b: array<Real>;

fn spmv_x(col: u32) -> Real {
    return x[col];
}

fn spmv_store(row: u32, value: Real) -> vec4<Real> {
    return residual_row(row, b[row] - value);
}

fn residual_partials(ids: Ids) {
    spmv_partials(0u, ids);
}
