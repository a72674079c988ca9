// dist_bicgstab_p: BiCGStab's new direction on one device (Alg. 3 l.17) with β = coef[1],
// ω = coef[2] from the host:
//   p = r + β·(p − ω·Ap)
// (its sent entries are gathered next by dist_gather). Library: lib/dist.wgsl.

@group(0) @binding(23) var<storage, read_write> p_ext: array<Real>;
@group(0) @binding(17) var<storage, read> r: array<Real>;
@group(0) @binding(9) var<storage, read> ap: array<Real>;
@group(0) @binding(13) var<storage, read> coef: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let beta = coef[1];
    let omega = coef[2];
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        p_ext[i] = r[i] + beta * (p_ext[i] - omega * ap[i]);
    }
}
