// dot: first reduction stage of ⟨x, y⟩ into partials slot `params.slot` (BLAS-1 style,
// used by the classical solvers; one inner product per launch).

@group(0) @binding(5) var<storage, read> x: array<Real>;
@group(0) @binding(6) var<storage, read> y: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    var acc = Real(0.0);
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        acc = acc + x[i] * y[i];
    }
    store_partials(params.slot, vec4<Real>(acc, Real(0.0), Real(0.0), Real(0.0)), ids);
}
