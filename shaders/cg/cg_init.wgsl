// cg_init: r = b − A·x, z = D⁻¹r (or r), p = z, and the first reduction stage of
// ⟨r,z⟩ and ⟨r,r⟩ into slot 0 of the partials. Shared by classical and pipelined CG.
// The loop over the rows of A is lib/residual.wgsl's (x and b at bindings 8 and 9).

@group(0) @binding(10) var<storage, read_write> r: array<Real>;
@group(0) @binding(11) var<storage, read_write> p: array<Real>;
@group(0) @binding(12) var<storage, read> dinv: array<Real>;

// Stores r and p = z for one row; returns its (⟨r,z⟩, ⟨r,r⟩) terms.
fn residual_row(row: u32, ri: Real) -> vec4<Real> {
    var zi = ri;
    if params.jacobi != 0u {
        zi = dinv[row] * ri;
    }
    r[row] = ri;
    p[row] = zi;
    return vec4<Real>(ri * zi, ri * ri, Real(0.0), Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    residual_partials(ids);
}
