// dist_gather: the entries of p other devices read (their halo), packed for one readback:
//   send[k] = p_ext[send_idx[k]]   for k < dist.count
// The host copies slices of `send` into the readers' halos (matrix::partition::Exchange).

@group(0) @binding(8) var<storage, read> p_ext: array<Real>;
@group(0) @binding(14) var<storage, read> send_idx: array<u32>;
@group(0) @binding(16) var<storage, read_write> send: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let stride = ids.nwg.x * WG;
    for (var k = ids.wid.x * WG + ids.lid; k < dist.count; k = k + stride) {
        send[k] = p_ext[send_idx[k]];
    }
}
