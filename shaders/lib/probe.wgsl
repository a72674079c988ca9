// probe.wgsl: what the stream_update4 bandwidth probes share (`krylov bench --probe-n`):
// their launch parameters, the vectors x, r, p (read_write) and q (read) at bindings 0–4,
// and the update of one entry, the memory traffic of update_cg without its reductions (four
// reads and three writes). The probes grid-stride over n with `groups` workgroups of a
// possibly 2D grid:
//
//   for (var i = probe_first(ids); i < params.n; i = i + params.groups * WG) { ... }

struct ProbeParams {
    n: u32,
    groups: u32,
    a: f32,
    _pad: u32,
}

// The entry point's built-ins.
struct ProbeIds {
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
}

@group(0) @binding(0) var<uniform> params: ProbeParams;
@group(0) @binding(1) var<storage, read_write> x: array<Real>;
@group(0) @binding(2) var<storage, read_write> r: array<Real>;
@group(0) @binding(3) var<storage, read_write> p: array<Real>;
@group(0) @binding(4) var<storage, read> q: array<Real>;

// This thread's first entry (workgroups numbered row by row over a 2D grid).
fn probe_first(ids: ProbeIds) -> u32 {
    return (ids.wid.y * ids.nwg.x + ids.wid.x) * WG + ids.lid;
}

// x += a·p, r −= a·q, p = r + a·p at entry i (all loads first); returns (new r, old p).
fn probe_update(i: u32, a: Real) -> vec2<Real> {
    let xi = x[i];
    let ri = r[i];
    let pi = p[i];
    let qi = q[i];
    let rn = ri - a * qi;
    x[i] = xi + a * pi;
    r[i] = rn;
    p[i] = rn + a * pi;
    return vec2<Real>(rn, pi);
}
