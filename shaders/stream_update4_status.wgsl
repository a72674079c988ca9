// stream_update4_status: stream_update4 plus the solver kernels' status test — thread 0
// reads an atomic status word, the workgroup shares it through workgroupUniformLoad — to
// measure what that preamble costs (a `krylov bench --probe-n` probe).

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
@group(0) @binding(5) var<storage, read_write> state: array<atomic<u32>, 4>;

var<workgroup> wg_status: u32;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    if lid == 0u {
        wg_status = atomicLoad(&state[0]);
    }
    if workgroupUniformLoad(&wg_status) != 0u {
        return;
    }
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
