// xpay: y ← x + (scalars[num] / scalars[den]) · y (BLAS-1 style search-direction update).

@group(0) @binding(5) var<storage, read> x: array<Real>;
@group(0) @binding(6) var<storage, read_write> y: array<Real>;

var<workgroup> wg_coef: Real;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    if ids.lid == 0u {
        wg_coef = scalars[params.num] / scalars[params.den];
    }
    let a = workgroupUniformLoad(&wg_coef);
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
                let xv = xs[u];
                let yv = ys[u];
                y[j] = xv + a * yv;
            }
        }
    }
}
