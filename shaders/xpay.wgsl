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
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        y[i] = x[i] + a * y[i];
    }
}
