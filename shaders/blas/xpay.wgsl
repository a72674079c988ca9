// xpay: y ← x + (scalars[num] / scalars[den]) · y (BLAS-1 style search-direction update).
// x, y and the loop: lib/blas_update.wgsl.

fn combine(xv: Real, yv: Real, a: Real) -> Real {
    return xv + a * yv;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    update_y(ids, coefficient(ids, false));
}
