// format_csr.wgsl: CSR, one thread per row ("CSR scalar"); chunks from format_rows.wgsl.

@group(0) @binding(20) var<uniform> mat_info: MatInfo;
@group(0) @binding(21) var<storage, read> mat_row_ptr: array<u32>;
@group(0) @binding(22) var<storage, read> mat_col_idx: array<u32>;
@group(0) @binding(23) var<storage, read> mat_values: array<Real>;

fn spmv_row_sum(row: u32) -> RowSum {
    var sum = row_zero();
    let end = mat_row_ptr[row + 1u];
    for (var k = mat_row_ptr[row]; k < end; k = k + 1u) {
        sum = row_fma(sum, mat_values[k], spmv_x(mat_col_idx[k]));
    }
    return sum;
}
