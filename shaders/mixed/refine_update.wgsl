// refine_update: x += scale·d of mixed-precision refinement in the outer precision (built
// with Real = f64), d the inner f32 solve's correction and scale = ‖r‖ of the residual it
// was normalised by.

@group(0) @binding(5) var<storage, read_write> x: array<Real>;
@group(0) @binding(6) var<storage, read> d: array<f32>;
@group(0) @binding(7) var<storage, read> scale: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let s = scale[0];
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        x[i] = x[i] + s * Real(d[i]);
    }
}
