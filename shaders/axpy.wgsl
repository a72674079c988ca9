// axpy: y ← y ± (scalars[num] / scalars[den]) · x (BLAS-1 style; the coefficient stays on
// the device, FLAG_NEGATE selects the sign).

@group(0) @binding(5) var<storage, read> x: array<Real>;
@group(0) @binding(6) var<storage, read_write> y: array<Real>;

var<workgroup> wg_coef: Real;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    if ids.lid == 0u {
        var a = scalars[params.num] / scalars[params.den];
        if (params.flags & FLAG_NEGATE) != 0u {
            a = -a;
        }
        wg_coef = a;
    }
    let a = workgroupUniformLoad(&wg_coef);
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        y[i] = y[i] + a * x[i];
    }
}
