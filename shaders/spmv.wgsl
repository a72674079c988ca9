// spmv_csr: y = A·x for A in CSR, one thread per row ("CSR scalar").
//
// `Real` (f32 or f64) and `WG` (threads per workgroup) come from the host prelude.
// The grid may be 2D when the row count needs more than 65535 workgroups: the linear
// workgroup index is wid.y * nwg.x + wid.x.

struct Params {
    n_rows: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> col_idx: array<u32>;
@group(0) @binding(3) var<storage, read> values: array<Real>;
@group(0) @binding(4) var<storage, read> x: array<Real>;
@group(0) @binding(5) var<storage, read_write> y: array<Real>;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let row = (wid.y * nwg.x + wid.x) * WG + lid;
    if row >= params.n_rows {
        return;
    }
    var sum = Real(0.0);
    let end = row_ptr[row + 1u];
    for (var k = row_ptr[row]; k < end; k = k + 1u) {
        sum = sum + values[k] * x[col_idx[k]];
    }
    y[row] = sum;
}
