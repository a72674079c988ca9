// stream_update4_reduce: stream_update4 plus the solver kernels' epilogue — a workgroup
// reduction of (⟨r,r⟩, ⟨r,p⟩) through workgroup memory and one partial per workgroup — to
// measure what that costs (a `krylov bench --probe-n` probe).

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
@group(0) @binding(5) var<storage, read_write> out: array<vec4<Real>>;

var<workgroup> scratch: array<vec4<Real>, WG>;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let a = Real(params.a);
    let stride = params.groups * WG;
    var acc = vec4<Real>(Real(0.0));
    for (var i = (wid.y * nwg.x + wid.x) * WG + lid; i < params.n; i = i + stride) {
        let xi = x[i];
        let ri = r[i];
        let pi = p[i];
        let qi = q[i];
        let rn = ri - a * qi;
        x[i] = xi + a * pi;
        r[i] = rn;
        p[i] = rn + a * pi;
        acc = acc + vec4<Real>(rn * rn, rn * pi, Real(0.0), Real(0.0));
    }
    scratch[lid] = acc;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if lid < s {
            scratch[lid] = scratch[lid] + scratch[lid + s];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        out[wid.y * nwg.x + wid.x] = scratch[0];
    }
}
