// axpy: y ← y ± (scalars[num] / scalars[den]) · x (BLAS-1 style; the coefficient stays on
// the device, FLAG_NEGATE selects the sign). x, y and the loop: lib/blas_update.wgsl.

fn combine(xv: Real, yv: Real, a: Real) -> Real {
    return yv + a * xv;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    update_y(ids, coefficient(ids, (params.flags & FLAG_NEGATE) != 0u));
}
