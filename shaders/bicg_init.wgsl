// bicg_init: BiCG setup (paper 001 §3.1, "Compute r0 ← b − A·x0, r̃0 = r0"), shared by the
// classical and pipelined variants and by the f64 true-residual check.
//
//   r = b − A·x,  r̃ = r,  z = D⁻¹r (Jacobi) or r,
// and the first reduction stage of (⟨z,r̃⟩, ⟨z,z⟩, ⟨r̃,r̃⟩, ⟨r,r⟩) = (ρ0, and the norms its
// breakdown test needs, and ‖r0‖²) packed in one vec4 per workgroup into partials slot 0.
// Workgroup 0 sets scalars[1] (ρ_old) to 0: the pipelined direction kernel reads that as
// "first iteration, p = z". No status test: this also runs after a stop (true residual).

@group(0) @binding(8) var<storage, read> x: array<Real>;
@group(0) @binding(9) var<storage, read> b: array<Real>;
@group(0) @binding(10) var<storage, read_write> r: array<Real>;
@group(0) @binding(11) var<storage, read_write> rt: array<Real>;
@group(0) @binding(12) var<storage, read> dinv: array<Real>;

fn spmv_x(col: u32) -> Real {
    return x[col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    var acc = vec4<Real>(Real(0.0));
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let spmv_out = spmv_pass(chunk, ids.lid);
        if spmv_out.valid {
            let row = spmv_out.row;
            let ax = spmv_out.value;
            let ri = b[row] - ax;
            r[row] = ri;
            rt[row] = ri;
            var zi = ri;
            if params.jacobi != 0u {
                zi = dinv[row] * ri;
            }
            acc = acc + vec4<Real>(zi * ri, zi * zi, ri * ri, ri * ri);
        }
    }
    let t = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[ids.wid.x] = t;
    }
    if is_leader(ids) {
        scalars[1] = Real(0.0);
    }
}
