// refine_residual_ds: the outer residual of mixed-precision refinement in double-single, for
// devices without f64 (lib/ds.wgsl): r_i = b_i − Σ_j a_ij·x_j with A (CSR), x and b as
// (hi, lo) f32 pairs, each product a_ij·x_j in double-single (ds_mul) and the row sum
// accumulated in double-single, so the cancellation b − Ax keeps ~48 bits. Stores the inner
// solve's right-hand side r·hint rounded to f32 (r's hi part, scaled by the power of two
// `hint` near 1/‖r‖: exact, and no underflow) and the first reduction stage of ‖r·hint‖²
// (in f32: the norm only decides when to stop, to f32 accuracy) into partials slot 0.
//
// One thread per row (grid-stride); CSR only: this runs once per outer iteration.

@group(0) @binding(5) var<storage, read> rows: array<u32>;
@group(0) @binding(6) var<storage, read> cols: array<u32>;
@group(0) @binding(7) var<storage, read> vals: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(9) var<storage, read> b: array<vec2<f32>>;
@group(0) @binding(10) var<storage, read_write> r32: array<f32>;
@group(0) @binding(11) var<storage, read> hint: array<f32>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let h = hint[0];
    var acc = Real(0.0);
    for (var row = ids.wid.x * WG + ids.lid; row < params.n; row = row + params.groups * WG) {
        var r = b[row];
        for (var k = rows[row]; k < rows[row + 1u]; k = k + 1u) {
            r = ds_sub(r, ds_mul(vals[k], x[cols[k]]));
        }
        let rs = r.x * h;
        r32[row] = rs;
        // Real is f32 wherever this runs (double-single is for devices without f64); the
        // conversion keeps the kernel valid in an f64 build too.
        acc = acc + Real(rs) * Real(rs);
    }
    store_partials(0u, vec4<Real>(acc, Real(0.0), Real(0.0), Real(0.0)), ids);
}
