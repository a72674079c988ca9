// dist_ca_mpk_load: the start of a distributed matrix powers block (paper 002 Fig. 4's
// set-up) on one device: the block's start vector q = pool[src] into slot 0 of the extended
// vectors z (owned rows), and the entries other devices' deep halos read packed for one
// readback:
//   z[i]    = pool[src·n + i]              i < n
//   send[q] = pool[src·n + send_idx[q]]    q < count
// The host copies slices of `send` into the other devices' z (slot 0, past their owned rows;
// solvers::dist::mpk's exchange); dist_ca_mpk_step then runs the block's steps.
// Library: lib/dist_ca.wgsl, lib/dist_pool_read.wgsl. CPU twin:
// solvers::dist::mpk::ExtBlock::powers (z0).

@group(0) @binding(25) var<storage, read_write> z: array<Real>;
@group(0) @binding(26) var<storage, read> send_idx: array<u32>;
@group(0) @binding(27) var<storage, read_write> send: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let stride = ids.nwg.x * WG;
    let base = mpk.src * mpk.n;
    for (var i = ids.wid.x * WG + ids.lid; i < mpk.n; i = i + stride) {
        z[i] = pool_get(base + i);
    }
    for (var q = ids.wid.x * WG + ids.lid; q < mpk.count; q = q + stride) {
        send[q] = pool_get(base + send_idx[q]);
    }
}
