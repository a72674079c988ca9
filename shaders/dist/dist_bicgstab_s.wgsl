// dist_bicgstab_s: BiCGStab's half step on one device (classical BiCGStab, paper 000 Alg. 3
// l.9) with α = coef[0] from the host:
//   s = r − α·Ap
// and the first reduction stage of ⟨s, s⟩ (the early exit and ω's breakdown norm).
// Library: lib/dist.wgsl.

@group(0) @binding(17) var<storage, read> r: array<Real>;
@group(0) @binding(9) var<storage, read> ap: array<Real>;
@group(0) @binding(8) var<storage, read_write> s_ext: array<Real>;
@group(0) @binding(13) var<storage, read> coef: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let alpha = coef[0];
    var acc = vec4<Real>(Real(0.0));
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        let si = r[i] - alpha * ap[i];
        s_ext[i] = si;
        acc = acc + vec4<Real>(si * si, Real(0.0), Real(0.0), Real(0.0));
    }
    dist_store(acc, ids);
}
