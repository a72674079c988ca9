// dist_spmv_dot: one device's share of pipelined CG's product and its inner products
// (the distributed twin of cg/spmv_dot_cg.wgsl, paper 000 Alg. 2 lines 13–15):
//   Ap = A_loc · [p; p_halo]   for rows dist.begin..dist.end
// and the first reduction stage of ⟨p,Ap⟩ and ⟨Ap,D⁻¹Ap⟩ over those rows. The host launches
// it twice per iteration: interior rows while the halo is in flight, boundary rows after it
// arrives; it adds the partials of both launches over workgroups and devices.
// Library: lib/dist.wgsl. CPU twin: matrix::partition::LocalPart::mul_ext.

@group(0) @binding(5) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(6) var<storage, read> cols: array<u32>;
@group(0) @binding(7) var<storage, read> vals: array<Real>;
@group(0) @binding(11) var<storage, read> cols_hi: array<u32>;
@group(0) @binding(12) var<storage, read> vals_hi: array<Real>;
@group(0) @binding(8) var<storage, read> p_ext: array<Real>;
@group(0) @binding(9) var<storage, read_write> ap: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;

// Row `i` of A_loc · p_ext: the entries below `dist.split` from the first pair of arrays, the
// rest from the second (a second loop only where the row crosses the split, so an unsplit
// matrix runs the plain CSR loop of format_csr.wgsl).
fn row_product(i: u32) -> Real {
    let b = row_ptr[i];
    let e = row_ptr[i + 1u];
    let split = dist.split;
    var s = Real(0.0);
    let e_lo = min(e, split);
    for (var k = b; k < e_lo; k = k + 1u) {
        s = s + vals[k] * p_ext[cols[k]];
    }
    if e > split {
        for (var k = max(b, split); k < e; k = k + 1u) {
            s = s + vals_hi[k - split] * p_ext[cols_hi[k - split]];
        }
    }
    return s;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    var acc = vec4<Real>(Real(0.0));
    let stride = ids.nwg.x * WG;
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
        let s = row_product(i);
        ap[i] = s;
        var d = Real(1.0);
        if dist.jacobi != 0u {
            d = dinv[i];
        }
        acc = acc + vec4<Real>(p_ext[i] * s, s * d * s, Real(0.0), Real(0.0));
    }
    dist_store(acc, ids);
}
