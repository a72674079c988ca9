// bicgstab_spmv.wgsl: the product of the pipelined BiCGStab kernels spmv_dot_bicgstab_p
// (Ap = A·D⁻¹p) and spmv_dot_bicgstab_s (As = A·D⁻¹s), with Jacobi right preconditioning
// fused into the reads (D⁻¹v is never stored). Binds the input vector (8: p or s), the
// product (9: Ap or As), r0* (10) and D⁻¹ (11). Built on `spmv_partials.wgsl`: the kernel
// defines
//
//   fn spmv_terms(row: u32, sum: Real) -> vec4<Real>
//
// the row's terms of the inner products of the product's entry `sum`.

@group(0) @binding(8) var<storage, read> spmv_in: array<Real>;
@group(0) @binding(9) var<storage, read_write> spmv_out: array<Real>;
@group(0) @binding(10) var<storage, read> rstar: array<Real>;
@group(0) @binding(11) var<storage, read> dinv: array<Real>;

fn spmv_x(col: u32) -> Real {
    if params.jacobi != 0u {
        return dinv[col] * spmv_in[col];
    }
    return spmv_in[col];
}

fn spmv_store(row: u32, sum: Real) -> vec4<Real> {
    spmv_out[row] = sum;
    return spmv_terms(row, sum);
}
