// format_csr.wgsl: CSR, one thread per row ("CSR scalar"). Implements spmv_row.wgsl.

@group(0) @binding(20) var<uniform> mat_info: MatInfo;
@group(0) @binding(21) var<storage, read> mat_row_ptr: array<u32>;
@group(0) @binding(22) var<storage, read> mat_col_idx: array<u32>;
@group(0) @binding(23) var<storage, read> mat_values: array<Real>;

fn spmv_passes() -> u32 {
    return mat_info.passes;
}

fn spmv_pass(chunk: u32, lid: u32) -> SpmvRow {
    let row = chunk * WG + lid;
    var out = SpmvRow(row, Real(0.0), false);
    if row < mat_info.rows {
        var sum = Real(0.0);
        let end = mat_row_ptr[row + 1u];
        for (var k = mat_row_ptr[row]; k < end; k = k + 1u) {
            sum = sum + mat_values[k] * spmv_x(mat_col_idx[k]);
        }
        out.value = sum;
        out.valid = true;
    }
    return out;
}
