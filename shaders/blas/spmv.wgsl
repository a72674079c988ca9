// spmv: y = A·x for A in any storage format (the format library prepended by the host,
// see lib/spmv_row.wgsl): each workgroup takes row chunks in a grid-stride loop.
//
// `Real` (f32 or f64) and `WG` (threads per workgroup) come from the host prelude.

@group(0) @binding(0) var<storage, read> x: array<Real>;
@group(0) @binding(1) var<storage, read_write> y: array<Real>;

fn spmv_x(col: u32) -> Real {
    return x[col];
}

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    for (var chunk = wid.x; chunk < spmv_passes(); chunk = chunk + nwg.x) {
        let out = spmv_pass(chunk, lid);
        if out.valid {
            y[out.row] = out.value;
        }
    }
}
