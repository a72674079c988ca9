// dist_gmres_prepare: one device's rows of the next basis vector and of what the product
// multiplies (t = gm.dest):
//   v_t = (w − Σ_{k=1..gm.nsub} c_k v_k) · hcoef[0]     (c_k = hcoef[k]: CGS2's second pass;
//                                                          hcoef[0] = 1/R_tt, or 1/ρ0 for v_0)
//   z   = D⁻¹ v_t (or v_t)                             (its sent entries: dist_gather next)
// Library: lib/dist.wgsl, lib/dist_basis.wgsl. CPU twin: cpu::gmres (l.4 and l.14).

@group(0) @binding(8) var<storage, read_write> z_ext: array<Real>;
@group(0) @binding(9) var<storage, read> w: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;
@group(0) @binding(23) var<storage, read_write> basis: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let scale = hcoef[0];
    let base = gm.dest * gm.n;
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        let v = (w[i] - dist_basis_combo(i)) * scale;
        basis[base + i] = v;
        var z = v;
        if dist.jacobi != 0u {
            z = dinv[i] * v;
        }
        z_ext[i] = z;
    }
}
