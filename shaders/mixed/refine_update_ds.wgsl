// refine_update_ds: x += scale·d of mixed-precision refinement in double-single (lib/ds.wgsl),
// x and scale = ‖r‖ as (hi, lo) f32 pairs, d the inner f32 solve's correction.

@group(0) @binding(5) var<storage, read_write> x: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read> d: array<f32>;
@group(0) @binding(7) var<storage, read> scale: array<vec2<f32>>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let s = scale[0];
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        x[i] = ds_add(x[i], ds_mul_f32(s, d[i]));
    }
}
