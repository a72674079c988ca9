// blas_update.wgsl: what the BLAS-1 updates y ← f(x, y) share (axpy, xpay): x at binding 5,
// y at 6, the coefficient a = scalars[num] / scalars[den] (it stays on the device) and the
// grid-stride loop over the entries. The kernel defines
//
//   fn combine(xv: Real, yv: Real, a: Real) -> Real      (the new y entry)
//
// and calls `update_y(ids, coefficient(ids, negate))` from uniform control flow.

@group(0) @binding(5) var<storage, read> x: array<Real>;
@group(0) @binding(6) var<storage, read_write> y: array<Real>;

var<workgroup> wg_coef: Real;

// scalars[num] / scalars[den], negated if `negate`, uniform across the workgroup.
fn coefficient(ids: Ids, negate: bool) -> Real {
    if ids.lid == 0u {
        var a = scalars[params.num] / scalars[params.den];
        if negate {
            a = -a;
        }
        wg_coef = a;
    }
    return workgroupUniformLoad(&wg_coef);
}

fn update_y(ids: Ids, a: Real) {
    // Four entries per thread and trip, loads before stores (y is read_write: a store would
    // otherwise hold back the next loads).
    let stride = params.groups * WG;
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + 4u * stride) {
        var xs = vec4<Real>(Real(0.0));
        var ys = vec4<Real>(Real(0.0));
        for (var u = 0u; u < 4u; u = u + 1u) {
            let j = i + u * stride;
            if j < params.n {
                xs[u] = x[j];
                ys[u] = y[j];
            }
        }
        for (var u = 0u; u < 4u; u = u + 1u) {
            let j = i + u * stride;
            if j < params.n {
                y[j] = combine(xs[u], ys[u], a);
            }
        }
    }
}
