// stream_update4_reduce: stream_update4 plus the solver kernels' epilogue — a workgroup
// reduction of (⟨r,r⟩, ⟨r,p⟩) through workgroup memory and one partial per workgroup — to
// measure what that costs (a `krylov bench --probe-n` probe). Parameters, vectors and the
// entry update: lib/probe.wgsl.

@group(0) @binding(5) var<storage, read_write> out: array<vec4<Real>>;

var<workgroup> scratch: array<vec4<Real>, WG>;

@compute @workgroup_size(WG)
fn main(ids: ProbeIds) {
    let a = Real(params.a);
    let stride = params.groups * WG;
    var acc = vec4<Real>(Real(0.0));
    for (var i = probe_first(ids); i < params.n; i = i + stride) {
        let rp = probe_update(i, a);
        acc = acc + vec4<Real>(rp.x * rp.x, rp.x * rp.y, Real(0.0), Real(0.0));
    }
    let lid = ids.lid;
    scratch[lid] = acc;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if lid < s {
            scratch[lid] = scratch[lid] + scratch[lid + s];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        out[ids.wid.y * ids.nwg.x + ids.wid.x] = scratch[0];
    }
}
