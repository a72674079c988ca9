// bicg_init: BiCG setup (paper 001 §3.1, "Compute r0 ← b − A·x0, r̃0 = r0"), shared by the
// classical and pipelined variants and by the f64 true-residual check.
//
//   r = b − A·x,  r̃ = r,  z = D⁻¹r (Jacobi) or r,
// and the first reduction stage of (⟨z,r̃⟩, ⟨z,z⟩, ⟨r̃,r̃⟩, ⟨r,r⟩) = (ρ0, and the norms its
// breakdown test needs, and ‖r0‖²) packed in one vec4 per workgroup into partials slot 0.
// Workgroup 0 sets scalars[1] (ρ_old) to 0: the pipelined direction kernel reads that as
// "first iteration, p = z". No status test: this also runs after a stop (true residual).
// The loop over the rows of A is lib/residual.wgsl's (x and b at bindings 8 and 9).

@group(0) @binding(10) var<storage, read_write> r: array<Real>;
@group(0) @binding(11) var<storage, read_write> rt: array<Real>;
@group(0) @binding(12) var<storage, read> dinv: array<Real>;

// Stores r and r̃ for one row; returns its (⟨z,r̃⟩, ⟨z,z⟩, ⟨r̃,r̃⟩, ⟨r,r⟩) terms.
fn residual_row(row: u32, ri: Real) -> vec4<Real> {
    r[row] = ri;
    rt[row] = ri;
    var zi = ri;
    if params.jacobi != 0u {
        zi = dinv[row] * ri;
    }
    return vec4<Real>(zi * ri, zi * zi, ri * ri, ri * ri);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    residual_partials(ids);
    if is_leader(ids) {
        scalars[1] = Real(0.0);
    }
}
