// dist_update_cg: one device's share of pipelined CG's update (the distributed twin of
// cg/update_cg.wgsl, paper 000 Alg. 2 lines 10–12, 16–17) with α and β the host computed from
// the inner products summed over every device (coef[0] = α, coef[1] = β):
//   x += αp,  r −= αAp,  z = D⁻¹r,  p = z + βp
// and the first reduction stage of the new ⟨r,z⟩ and ⟨r,r⟩ over the device's rows.
// Library: lib/dist.wgsl.

@group(0) @binding(17) var<storage, read_write> x: array<Real>;
@group(0) @binding(18) var<storage, read_write> r: array<Real>;
@group(0) @binding(8) var<storage, read_write> p_ext: array<Real>;
@group(0) @binding(9) var<storage, read> ap: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;
@group(0) @binding(13) var<storage, read> coef: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let alpha = coef[0];
    let beta = coef[1];
    var acc = vec4<Real>(Real(0.0));
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        let pi = p_ext[i];
        let ri = r[i] - alpha * ap[i];
        var zi = ri;
        if dist.jacobi != 0u {
            zi = dinv[i] * ri;
        }
        x[i] = x[i] + alpha * pi;
        r[i] = ri;
        p_ext[i] = zi + beta * pi;
        acc = acc + vec4<Real>(ri * zi, ri * ri, Real(0.0), Real(0.0));
    }
    dist_store(acc, ids);
}
