// spmv_dot_bicgstab_s: kernel 3 of pipelined BiCGStab (paper 000 §3.2, Alg. 4 lines 10–12).
//
// As = A·D⁻¹s (Jacobi right preconditioning fused into the reads, ŝ = D⁻¹s never stored)
// fused with the first reduction stage of ⟨As,s⟩, ⟨As,As⟩ and ⟨As,r0*⟩ into slot 3. Slots
// 0–3 are contiguous, so `paper` mode reads all partial sums of the iteration (with ⟨s,s⟩ of
// slot 2) in one transfer right after this kernel.

// s is `spmv_in` and As `spmv_out` of lib/bicgstab_spmv.wgsl.
fn spmv_terms(row: u32, sum: Real) -> vec4<Real> {
    return vec4<Real>(sum * spmv_in[row], sum * sum, sum * rstar[row], Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    spmv_partials(3u, ids);
}
