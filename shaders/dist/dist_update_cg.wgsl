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

struct Entry {
    x: Real,
    r: Real,
    p: Real,
    ap: Real,
    dinv: Real,
}

fn load_entry(i: u32) -> Entry {
    var e = Entry(x[i], r[i], p_ext[i], ap[i], Real(1.0));
    if dist.jacobi != 0u {
        e.dinv = dinv[i];
    }
    return e;
}

// x += αp, r −= αAp, z = D⁻¹r, p = z + βp; returns this entry's (⟨r,z⟩, ⟨r,r⟩) terms.
fn update_entry(i: u32, e: Entry, alpha: Real, beta: Real) -> vec4<Real> {
    let ri = e.r - alpha * e.ap;
    let zi = e.dinv * ri;
    x[i] = e.x + alpha * e.p;
    r[i] = ri;
    p_ext[i] = zi + beta * e.p;
    return vec4<Real>(ri * zi, ri * ri, Real(0.0), Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let alpha = coef[0];
    let beta = coef[1];
    // Four entries per thread and loop trip, all loads before any store (as update_cg): x, r
    // and p are read_write bindings the compiler must assume may alias, so a store would
    // otherwise hold back the next loads and leave one load in flight per thread.
    let stride = ids.nwg.x * WG;
    var acc = vec4<Real>(Real(0.0));
    for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + 4u * stride) {
        let i1 = i + stride;
        let i2 = i1 + stride;
        let i3 = i2 + stride;
        let e0 = load_entry(i);
        var e1 = e0;
        var e2 = e0;
        var e3 = e0;
        if i1 < dist.end {
            e1 = load_entry(i1);
        }
        if i2 < dist.end {
            e2 = load_entry(i2);
        }
        if i3 < dist.end {
            e3 = load_entry(i3);
        }
        acc = acc + update_entry(i, e0, alpha, beta);
        if i1 < dist.end {
            acc = acc + update_entry(i1, e1, alpha, beta);
        }
        if i2 < dist.end {
            acc = acc + update_entry(i2, e2, alpha, beta);
        }
        if i3 < dist.end {
            acc = acc + update_entry(i3, e3, alpha, beta);
        }
    }
    dist_store(acc, ids);
}
