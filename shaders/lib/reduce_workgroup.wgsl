// Workgroup reduction through workgroup memory (a tree of WG/2, WG/4, ... adds).
// Used when the adapter has no subgroup operations. Defines the same interface as
// reduce_subgroup.wgsl: `struct Ids` (the entry point's built-ins) and `workgroup_sum`.

struct Ids {
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
}

var<workgroup> red_scratch: array<vec4<Real>, WG>;
var<workgroup> red_total: vec4<Real>;

// Sum of `v` over the workgroup, returned to every thread as a uniform value. Must be called from uniform
// control flow by all threads of the workgroup.
fn workgroup_sum(v: vec4<Real>, ids: Ids) -> vec4<Real> {
    red_scratch[ids.lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if ids.lid < s {
            red_scratch[ids.lid] = red_scratch[ids.lid] + red_scratch[ids.lid + s];
        }
        workgroupBarrier();
    }
    if ids.lid == 0u {
        red_total = red_scratch[0];
    }
    // workgroupUniformLoad makes the result uniform (and is the barrier before reuse).
    return workgroupUniformLoad(&red_total);
}

// `workgroup_sum` of two components (the subgroup version's interface; here the same tree).
fn workgroup_sum2(v: vec2<Real>, ids: Ids) -> vec2<Real> {
    return workgroup_sum(vec4<Real>(v, Real(0.0), Real(0.0)), ids).xy;
}

// reduce_subgroup.wgsl's batched-partial interface without subgroups: the whole workgroup is
// one "subgroup" (its tree sum; uniform control flow, as workgroup_sum), led by thread 0.
fn sg_sum4(v: vec4<Real>, ids: Ids) -> vec4<Real> {
    return workgroup_sum(v, ids);
}
fn sg_leader(ids: Ids) -> bool {
    return ids.lid == 0u;
}
fn sg_index(ids: Ids) -> u32 {
    return 0u;
}
fn sg_count(ids: Ids) -> u32 {
    return 1u;
}
