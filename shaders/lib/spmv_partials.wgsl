// spmv_partials.wgsl: y = A·x (A any format, x = `spmv_x`) fused with the first reduction stage
// of per-row terms. The kernel defines
//
//   fn spmv_store(row: u32, value: Real) -> vec4<Real>
//
// which stores value = (A·x)[row] (and what it derives from it) and returns the row's terms
// of the inner products it needs, and calls `spmv_partials(slot, ids)` from uniform control
// flow: a grid-stride loop over the row chunks of A with exactly `params.groups` workgroups,
// then the workgroup's sum of the terms into partials slot `slot`.

fn spmv_partials(slot: u32, ids: Ids) {
    var acc = sum_zero();
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let out = spmv_pass(chunk, ids.lid);
        if out.valid {
            acc = sum_add(acc, spmv_store(out.row, out.value));
        }
    }
    store_sum(slot, acc, ids);
}
