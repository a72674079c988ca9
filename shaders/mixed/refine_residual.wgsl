// refine_residual: the outer residual of mixed-precision refinement in the outer precision
// (built with Real = f64 on a device with SHADER_F64): r = b − A·x row by row
// (lib/residual.wgsl), stored as the inner f32 solve's right-hand side r·hint rounded to f32
// (`hint` a power of two near 1/‖r‖, so the scaling is exact and nothing underflows), with
// the first reduction stage of ‖r‖² into partials slot 0. x and b stay in Real.

@group(0) @binding(10) var<storage, read_write> r32: array<f32>;
@group(0) @binding(11) var<storage, read> hint: array<Real>;

fn residual_row(row: u32, ri: Real) -> vec4<Real> {
    r32[row] = f32(ri * hint[0]);
    return vec4<Real>(ri * ri, Real(0.0), Real(0.0), Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    residual_partials(ids);
}
