// stream_update4: the memory traffic of update_cg without its reductions — four reads
// (x, r, p, q) and three writes per entry — as a bandwidth probe for `krylov bench --probe`.
// Grid-stride over n with `groups` workgroups of a possibly 2D grid.

struct ProbeParams {
    n: u32,
    groups: u32,
    a: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: ProbeParams;
@group(0) @binding(1) var<storage, read_write> x: array<Real>;
@group(0) @binding(2) var<storage, read_write> r: array<Real>;
@group(0) @binding(3) var<storage, read_write> p: array<Real>;
@group(0) @binding(4) var<storage, read> q: array<Real>;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let a = Real(params.a);
    let stride = params.groups * WG;
    for (var i = (wid.y * nwg.x + wid.x) * WG + lid; i < params.n; i = i + stride) {
        let xi = x[i];
        let ri = r[i];
        let pi = p[i];
        let qi = q[i];
        let rn = ri - a * qi;
        x[i] = xi + a * pi;
        r[i] = rn;
        p[i] = rn + a * pi;
    }
}
