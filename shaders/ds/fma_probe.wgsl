// fma_probe: whether this device's `fma` rounds once (src/gpu/ds.rs). For each pair (a, b)
// it stores the error term of shaders/lib/ds.wgsl's two_prod_fma, fma(a, b, −a·b): the exact rounding error of the product when fma is fused, 0 or
// another value when the device evaluates it as a rounded product and a rounded sum. The host
// compares with the errors it knows and picks `two_prod` of shaders/lib/ds.wgsl. Compiled for
// f32 (the f64 build exists for the translation test only).

@group(0) @binding(0) var<storage, read> probe_in: array<vec2<Real>>;
@group(0) @binding(1) var<storage, read_write> probe_out: array<Real>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < arrayLength(&probe_out) {
        let a = probe_in[i].x;
        let b = probe_in[i].y;
        probe_out[i] = Real(two_prod_fma(f32(a), f32(b)).y);
    }
}
