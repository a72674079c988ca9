// dist_gmres_prepare: one device's rows of the next basis vector and of what the product
// multiplies (t = gm.dest):
//   v_t = (w − Σ_{k=1..gm.nsub} c_k v_k) · hcoef[0]     (c_k = hcoef[k]: CGS2's second pass;
//                                                          hcoef[0] = 1/R_tt, or 1/ρ0 for v_0)
//   z   = D⁻¹ v_t (or v_t)                             (its sent entries: dist_gather next)
// Library: lib/dist.wgsl, lib/dist_basis.wgsl, lib/dist_pool.wgsl. CPU twin: cpu::gmres (l.4 and l.14).

@group(0) @binding(8) var<storage, read_write> z_ext: array<Real>;
@group(0) @binding(9) var<storage, read> w: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let scale = hcoef[0];
    let base = gm.dest * gm.n;
    let stride = ids.nwg.x * WG;
    // Two rows a grid stride apart per trip, loads before stores (the pool is read_write);
    // past the block's end, row i again, not stored.
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + 2u * stride) {
        let i1 = i + stride;
        let ok1 = i1 < dist.end;
        let j = select(i, i1, ok1);
        let s = dist_basis_combo2(i, j);
        let v0 = (w[i] - s.x) * scale;
        let v1 = (w[j] - s.y) * scale;
        var z0 = v0;
        var z1 = v1;
        if dist.jacobi != 0u {
            z0 = dinv[i] * v0;
            z1 = dinv[j] * v1;
        }
        pool_set(base + i, v0);
        z_ext[i] = z0;
        if ok1 {
            pool_set(base + j, v1);
            z_ext[j] = z1;
        }
    }
}
