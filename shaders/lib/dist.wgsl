// The block of rows one device owns in a distributed solve (issue #19; host side
// `src/solvers/dist/`): its launch parameters and the per-workgroup partial sums the host adds
// up over workgroups and devices (`partials`, binding 1 of solver_state.wgsl, slot-major:
// entry `slot · dist.groups + workgroup`).

struct Dist {
    // Rows begin..end of the launch (local numbering: interior rows first, then boundary).
    begin: u32,
    end: u32,
    // Partials entries per slot (the most workgroups any launch of the block uses).
    groups: u32,
    slot: u32,
    // 1: Jacobi (dinv holds D⁻¹), 0: no preconditioner.
    jacobi: u32,
    // Matrix entries below `split` are in cols/vals, the rest in cols_hi/vals_hi.
    split: u32,
    // Entries of the send list (dist_gather).
    count: u32,
    // Slots between successive quads of a launch writing several (lib/dist_basis.wgsl).
    quad_stride: u32,
}

@group(0) @binding(15) var<uniform> dist: Dist;

fn dist_dinv_at(d: Real, ok: bool) -> Real {
    if ok {
        return d;
    }
    return Real(1.0);
}

// The workgroup's sum of `v` into this launch's slot.
fn dist_store(v: vec4<Real>, ids: Ids) {
    let total = workgroup_sum(v, ids);
    if ids.lid == 0u {
        partials[dist.slot * dist.groups + ids.wid.x] = total;
    }
}
