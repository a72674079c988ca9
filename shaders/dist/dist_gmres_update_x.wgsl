// dist_gmres_update_x: the end of a GMRES cycle on one device's rows (cpu/gmres.rs l.22,
// right-preconditioned):
//   x = x + D⁻¹ Σ_{k<gm.count} η_{k+1} v_k      (η = hcoef[1 ..= count], from R η = ξ)
// (x's sent entries are gathered next for the restart residual).
// Library: lib/dist.wgsl, lib/dist_basis.wgsl, lib/dist_pool.wgsl. CPU twin: cpu::gmres.

@group(0) @binding(8) var<storage, read_write> x_ext: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;
// Not used here; declared for lib/dist_basis.wgsl's inner products, which name it.
@group(0) @binding(9) var<storage, read> w: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        var s = Real(0.0);
        for (var k = 0u; k < gm.count; k = k + 1u) {
            s = s + hcoef[k + 1u] * pool_get(k * gm.n + i);
        }
        if dist.jacobi != 0u {
            s = dinv[i] * s;
        }
        x_ext[i] = x_ext[i] + s;
    }
}
