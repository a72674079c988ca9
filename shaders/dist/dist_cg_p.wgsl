// dist_cg_p: classical CG's new direction on one device (Alg. 1 l.10) with β = coef[1]:
//   p = D⁻¹r + β·p
// (its sent entries are gathered next by dist_gather). Library: lib/dist.wgsl.

@group(0) @binding(18) var<storage, read> r: array<Real>;
@group(0) @binding(8) var<storage, read_write> p_ext: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;
@group(0) @binding(13) var<storage, read> coef: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let beta = coef[1];
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        var zi = r[i];
        if dist.jacobi != 0u {
            zi = dinv[i] * zi;
        }
        p_ext[i] = zi + beta * p_ext[i];
    }
}
