// stream_triad: y = a·x + y over vec4 lanes, the bandwidth probe of `krylov bench`
// (12 bytes per f32 entry: read x, read y, write y). Grid-stride over `n4` vec4 entries.

struct StreamParams {
    n4: u32,
    groups: u32,
    a: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: StreamParams;
@group(0) @binding(1) var<storage, read> x: array<vec4<Real>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<Real>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let a = Real(params.a);
    for (var i = wid.x * WG + lid; i < params.n4; i = i + params.groups * WG) {
        y[i] = a * x[i] + y[i];
    }
}
