// stream_update4_status: stream_update4 plus the solver kernels' status test — thread 0
// reads an atomic status word, the workgroup shares it through workgroupUniformLoad — to
// measure what that preamble costs (a `krylov bench --probe-n` probe). Parameters, vectors
// and the entry update: lib/probe.wgsl.

@group(0) @binding(5) var<storage, read_write> state: array<atomic<u32>, 4>;

var<workgroup> wg_status: u32;

@compute @workgroup_size(WG)
fn main(ids: ProbeIds) {
    if ids.lid == 0u {
        wg_status = atomicLoad(&state[0]);
    }
    if workgroupUniformLoad(&wg_status) != 0u {
        return;
    }
    let a = Real(params.a);
    let stride = params.groups * WG;
    for (var i = probe_first(ids); i < params.n; i = i + stride) {
        _ = probe_update(i, a);
    }
}
