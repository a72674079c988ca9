// bicgstab_left_init: the start of left-preconditioned BiCGStab (Alg. 3 lines 2–4 of paper
// 000 on the operator M⁻¹A): r̂0 = z, r0* = r̂0, p0 = r̂0 from z = M⁻¹(b − A·x0) (bicgstab_init's
// r followed by the apply of M into z), and the first reduction stage of (⟨r̂,r0*⟩, ⟨r̂,r̂⟩)
// into partials slot 0: bicgstab_init's layout, so the setup finishes the same way.

@group(0) @binding(5) var<storage, read> z: array<Real>;
@group(0) @binding(10) var<storage, read_write> r: array<Real>;
@group(0) @binding(11) var<storage, read_write> rstar: array<Real>;
@group(0) @binding(12) var<storage, read_write> p: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    // The apply that wrote z skipped its work after a stop: so does this.
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    var acc = sum_zero();
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        let zi = z[i];
        r[i] = zi;
        rstar[i] = zi;
        p[i] = zi;
        acc = sum_add(acc, vec4<Real>(zi * zi, zi * zi, Real(0.0), Real(0.0)));
    }
    store_sum(0u, acc, ids);
}
