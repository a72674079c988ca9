// dist_cg_xr: classical CG's solution and residual update on one device (paper 000, Alg. 1
// l.6–8) with α = coef[0] from the host:
//   x += α·p,   r −= α·Ap
// and the first reduction stage of ⟨r, D⁻¹r⟩ and ⟨r, r⟩ (β's numerator and the residual).
// Library: lib/dist.wgsl.

@group(0) @binding(17) var<storage, read_write> x: array<Real>;
@group(0) @binding(18) var<storage, read_write> r: array<Real>;
@group(0) @binding(8) var<storage, read> p_ext: array<Real>;
@group(0) @binding(9) var<storage, read> ap: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;
@group(0) @binding(13) var<storage, read> coef: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let alpha = coef[0];
    var acc = vec4<Real>(Real(0.0));
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        x[i] = x[i] + alpha * p_ext[i];
        let ri = r[i] - alpha * ap[i];
        r[i] = ri;
        var zi = ri;
        if dist.jacobi != 0u {
            zi = dinv[i] * ri;
        }
        acc = acc + vec4<Real>(ri * zi, ri * ri, Real(0.0), Real(0.0));
    }
    dist_store(acc, ids);
}
