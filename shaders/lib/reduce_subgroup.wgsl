// Workgroup reduction with subgroup operations: one subgroupAdd per subgroup, the per-
// subgroup sums through workgroup memory, then every subgroup adds those redundantly
// (so no thread diverges around a subgroup operation). Same interface as
// reduce_workgroup.wgsl.

struct Ids {
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_invocation_id) sg_lane: u32,
    @builtin(subgroup_size) sg_size: u32,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(num_subgroups) n_sg: u32,
}

var<workgroup> red_scratch: array<vec4<Real>, WG>;
var<workgroup> red_total: vec4<Real>;

fn workgroup_sum(v: vec4<Real>, ids: Ids) -> vec4<Real> {
    let s = subgroupAdd(v);
    if ids.sg_lane == 0u {
        red_scratch[ids.sg_id] = s;
    }
    workgroupBarrier();
    var t = vec4<Real>(Real(0.0));
    for (var i = ids.sg_lane; i < ids.n_sg; i = i + ids.sg_size) {
        t = t + red_scratch[i];
    }
    let total = subgroupAdd(t);
    if ids.lid == 0u {
        red_total = total;
    }
    // workgroupUniformLoad makes the result uniform (and is the barrier before reuse).
    return workgroupUniformLoad(&red_total);
}
