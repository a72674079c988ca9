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

// One entry per subgroup (subgroups have at least 4 lanes: WG / 4 entries), or WG entries
// where sum_compensated.wgsl's tree uses it lane by lane: RED_SCRATCH, set by the host.
var<workgroup> red_scratch: array<vec4<Real>, RED_SCRATCH>;
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

// `workgroup_sum` of two components (cg_workgroup's per-iteration sums): one subgroupAdd of a
// vec2 per subgroup, then the first subgroup alone adds the per-subgroup sums. A subgroupAdd
// costs one shuffle per component, bit width and step in every subgroup that runs it (a
// vec4<f64> over 32 subgroups of 32: 1280 shuffles), so a kernel that reduces every
// iteration pays for the components it uses, and the second stage once (on an H200 this
// took an iteration of cg_workgroup at 1000 rows from 3.2 to 2.85 µs; a serial sum by
// thread 0 cost 1.5 µs more).
fn workgroup_sum2(v: vec2<Real>, ids: Ids) -> vec2<Real> {
    let s = subgroupAdd(v);
    if ids.sg_lane == 0u {
        red_scratch[ids.sg_id] = vec4<Real>(s, Real(0.0), Real(0.0));
    }
    workgroupBarrier();
    if ids.sg_id == 0u {
        var t = vec2<Real>(Real(0.0));
        for (var i = ids.sg_lane; i < ids.n_sg; i = i + ids.sg_size) {
            t = t + red_scratch[i].xy;
        }
        let total = subgroupAdd(t);
        if ids.lid == 0u {
            red_total = vec4<Real>(total, Real(0.0), Real(0.0));
        }
    }
    return workgroupUniformLoad(&red_total).xy;
}

// Partial sums one subgroup at a time (batched reductions: several sums' subgroup totals
// through workgroup memory behind ONE barrier, as gmres_workgroup's Gram–Schmidt does):
// `sg_sum4` is this subgroup's total (valid in its leader), `sg_index` / `sg_count` number the
// subgroups. reduce_workgroup.wgsl defines the same with the whole workgroup as one "subgroup".
fn sg_sum4(v: vec4<Real>, ids: Ids) -> vec4<Real> {
    return subgroupAdd(v);
}
fn sg_leader(ids: Ids) -> bool {
    return ids.sg_lane == 0u;
}
fn sg_index(ids: Ids) -> u32 {
    return ids.sg_id;
}
fn sg_count(ids: Ids) -> u32 {
    return ids.n_sg;
}
