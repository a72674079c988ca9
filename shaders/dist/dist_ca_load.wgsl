// dist_ca_load: the vector one device's block of a distributed CA-GMRES product multiplies,
// from the block's pool (solvers::cagmres::system, vector k at k·n):
//   v_ext[i] = D⁻¹_ii · pool[src·n + i]   (CA_DIST_DINV; else pool[src·n + i])
// for rows dist.begin..dist.end; its sent entries are gathered next (dist_gather), the
// halo filled by the host, and dist_ca_powers multiplies [v; v_halo]. A matrix powers step
// loads a basis vector with D⁻¹ (right Jacobi: the cycles run on A·D⁻¹), the restart loads
// x without.
// Library: lib/dist.wgsl, lib/dist_ca.wgsl, lib/dist_pool_read.wgsl. CPU twin:
// cpu::cagmres::powers::matrix_powers_with's operand.

const CA_DIST_DINV: u32 = 1u;

@group(0) @binding(8) var<storage, read_write> v_ext: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let stride = ids.nwg.x * WG;
    let base = ca.src * ca.n;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        var v = pool_get(base + i);
        if (ca.flags & CA_DIST_DINV) != 0u {
            v = dinv[i] * v;
        }
        v_ext[i] = v;
    }
}
