// dist_bicgstab_xr: BiCGStab's solution and residual update on one device (Alg. 3 l.13–15)
// with α = coef[0], ω = coef[2] from the host, right-preconditioned (p̂ = D⁻¹p, ŝ = D⁻¹s):
//   x += α·p̂ + ω·ŝ,   r = s − ω·As
// and the first reduction stage of ⟨r, r⟩ and ⟨r, r̂⟩ (β's numerator).
// Library: lib/dist.wgsl.

@group(0) @binding(20) var<storage, read_write> x: array<Real>;
@group(0) @binding(17) var<storage, read_write> r: array<Real>;
@group(0) @binding(21) var<storage, read> s_ext: array<Real>;
@group(0) @binding(22) var<storage, read> as_: array<Real>;
@group(0) @binding(23) var<storage, read> p_ext: array<Real>;
@group(0) @binding(10) var<storage, read> dinv_ext: array<Real>;
@group(0) @binding(19) var<storage, read> rhat: array<Real>;
@group(0) @binding(13) var<storage, read> coef: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let alpha = coef[0];
    let omega = coef[2];
    var acc = vec4<Real>(Real(0.0));
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        var d = Real(1.0);
        if dist.jacobi != 0u {
            d = dinv_ext[i];
        }
        let si = s_ext[i];
        x[i] = x[i] + alpha * (d * p_ext[i]) + omega * (d * si);
        let ri = si - omega * as_[i];
        r[i] = ri;
        acc = acc + vec4<Real>(ri * ri, ri * rhat[i], Real(0.0), Real(0.0));
    }
    dist_store(acc, ids);
}
