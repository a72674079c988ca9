// spmv_dot_bicgstab_s: kernel 3 of pipelined BiCGStab (paper 000 §3.2, Alg. 4 lines 10–12).
//
// As = A·D⁻¹s (Jacobi right preconditioning fused into the reads, ŝ = D⁻¹s never stored)
// fused with the first reduction stage of ⟨As,s⟩, ⟨As,As⟩ and ⟨As,r0*⟩ into slot 3. Slots
// 0–3 are contiguous, so `paper` mode reads all partial sums of the iteration (with ⟨s,s⟩ of
// slot 2) in one transfer right after this kernel.

@group(0) @binding(8) var<storage, read> s: array<Real>;
@group(0) @binding(9) var<storage, read_write> asv: array<Real>;
@group(0) @binding(10) var<storage, read> rstar: array<Real>;
@group(0) @binding(11) var<storage, read> dinv: array<Real>;

fn spmv_x(col: u32) -> Real {
    if params.jacobi != 0u {
        return dinv[col] * s[col];
    }
    return s[col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    var acc = vec4<Real>(Real(0.0));
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let spmv_out = spmv_pass(chunk, ids.lid);
        if spmv_out.valid {
            let row = spmv_out.row;
            let sum = spmv_out.value;
            asv[row] = sum;
            acc = acc + vec4<Real>(sum * s[row], sum * sum, sum * rstar[row], Real(0.0));
        }
    }
    let w = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[3u * params.groups + ids.wid.x] = w;
    }
}
