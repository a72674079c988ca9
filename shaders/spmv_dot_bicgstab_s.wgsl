// spmv_dot_bicgstab_s: kernel 3 of pipelined BiCGStab (paper 000 §3.2, Alg. 4 lines 10–12).
//
// As = A·D⁻¹s (Jacobi right preconditioning fused into the reads, ŝ = D⁻¹s never stored)
// fused with the first reduction stage of ⟨As,s⟩, ⟨As,As⟩ and ⟨As,r0*⟩ into slot 3. Slots
// 0–3 are contiguous, so `paper` mode reads all partial sums of the iteration (with ⟨s,s⟩ of
// slot 2) in one transfer right after this kernel.

@group(0) @binding(5) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(6) var<storage, read> col_idx: array<u32>;
@group(0) @binding(7) var<storage, read> values: array<Real>;
@group(0) @binding(8) var<storage, read> s: array<Real>;
@group(0) @binding(9) var<storage, read_write> asv: array<Real>;
@group(0) @binding(10) var<storage, read> rstar: array<Real>;
@group(0) @binding(11) var<storage, read> dinv: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let jacobi = params.jacobi != 0u;
    var acc = vec4<Real>(Real(0.0));
    for (var row = ids.wid.x * WG + ids.lid; row < params.n; row = row + params.groups * WG) {
        var sum = Real(0.0);
        let end = row_ptr[row + 1u];
        for (var k = row_ptr[row]; k < end; k = k + 1u) {
            let c = col_idx[k];
            var v = s[c];
            if jacobi {
                v = dinv[c] * v;
            }
            sum = sum + values[k] * v;
        }
        asv[row] = sum;
        acc = acc + vec4<Real>(sum * s[row], sum * sum, sum * rstar[row], Real(0.0));
    }
    let w = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[3u * params.groups + ids.wid.x] = w;
    }
}
