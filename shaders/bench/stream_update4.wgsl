// stream_update4: the memory traffic of update_cg without its reductions — four reads
// (x, r, p, q) and three writes per entry — as a bandwidth probe for `krylov bench --probe`.
// Parameters, vectors and the entry update: lib/probe.wgsl.

@compute @workgroup_size(WG)
fn main(ids: ProbeIds) {
    let a = Real(params.a);
    let stride = params.groups * WG;
    for (var i = probe_first(ids); i < params.n; i = i + stride) {
        _ = probe_update(i, a);
    }
}
