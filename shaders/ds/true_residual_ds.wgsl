// true_residual_ds: the true residual of an f32 solve on the GPU, ‖b − A·x‖² in double-single
// (the guard of src/solvers/driver.rs: no download of x). Every product a_ij·x_j is exact and
// each row is summed in double-single (the row loop of any storage format with the piece
// ds_rows.wgsl), r_i = b_i − (A·x)_i and r_i² are formed and summed in double-single, and each
// workgroup's sum goes as (hi, lo, 0, 0) into partials[params.slot · groups + workgroup]; the
// host adds the pairs in f64. x and b are only read: nothing the solver keeps is written (the
// host binds its own partials buffer). x starts at element params.num of its buffer and b at
// params.den (GMRES keeps both in its pool; 0 elsewhere). Launch exactly `params.groups`
// workgroups.

@group(0) @binding(8) var<storage, read> x: array<Real>;
@group(0) @binding(9) var<storage, read> b: array<Real>;

fn spmv_x(col: u32) -> Real {
    return x[params.num + col];
}

var<workgroup> trd_scratch: array<vec2<f32>, WG>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    var acc = vec2<f32>(0.0);
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let out = spmv_pass(chunk, ids.lid);
        if out.valid {
            let ri = ds_add_f32(ds_neg(out.value), f32(b[params.den + out.row]));
            acc = ds_add(acc, ds_mul(ri, ri));
        }
    }
    // The workgroup's sum, a tree of double-single additions.
    trd_scratch[ids.lid] = acc;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if ids.lid < s {
            trd_scratch[ids.lid] = ds_add(trd_scratch[ids.lid], trd_scratch[ids.lid + s]);
        }
        workgroupBarrier();
    }
    if ids.lid == 0u {
        let t = trd_scratch[0];
        partials[params.slot * params.groups + ids.wid.x] =
            vec4<Real>(Real(t.x), Real(t.y), Real(0.0), Real(0.0));
    }
}
