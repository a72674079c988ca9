// bicgstab_init: r = b − A·x, r0* = r, p = r (Alg. 3/4 lines 1–4 of paper 000) and the
// first reduction stage of ⟨r,r0*⟩ and ⟨r,r⟩ into partials slot 0. Shared by classical and
// pipelined BiCGStab; also the f64 true residual ‖b − Ax‖² after the loop (it overwrites r,
// r0* and p, which a restart recomputes anyway). No status test: it must run after a stop.
// The loop over the rows of A is lib/residual.wgsl's (x and b at bindings 8 and 9).

@group(0) @binding(10) var<storage, read_write> r: array<Real>;
@group(0) @binding(11) var<storage, read_write> rstar: array<Real>;
@group(0) @binding(12) var<storage, read_write> p: array<Real>;

// Stores r, r0* and p for one row; returns its (⟨r,r0*⟩, ⟨r,r⟩) terms.
fn residual_row(row: u32, ri: Real) -> vec4<Real> {
    r[row] = ri;
    rstar[row] = ri;
    p[row] = ri;
    return vec4<Real>(ri * ri, ri * ri, Real(0.0), Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    residual_partials(ids);
}
