// dot: first reduction stage of ⟨x, y⟩ into partials slot `params.slot` (BLAS-1 style,
// used by the classical solvers; one inner product per launch).

@group(0) @binding(5) var<storage, read> x: array<Real>;
@group(0) @binding(6) var<storage, read> y: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    var acc = sum_zero();
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        acc = sum_add_x(acc, x[i] * y[i]);
    }
    store_sum(params.slot, acc, ids);
}
