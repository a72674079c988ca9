// format_csr_split.wgsl: CSR whose column indices and values are too large for one storage
// binding (issue #16: no size refused): entries 0 .. split − 1 are bound at 22/23, entries
// split .. nnz − 1 at 40/41 (`mat_info.split`). A row may straddle the split; its entries are
// summed in the same order as format_csr.wgsl, so the results are those of one binding.
// One thread per row; chunks from format_rows.wgsl.

@group(0) @binding(20) var<uniform> mat_info: MatInfo;
@group(0) @binding(21) var<storage, read> mat_row_ptr: array<u32>;
@group(0) @binding(22) var<storage, read> mat_col_idx: array<u32>;
@group(0) @binding(23) var<storage, read> mat_values: array<Real>;
@group(0) @binding(40) var<storage, read> mat_col_idx_hi: array<u32>;
@group(0) @binding(41) var<storage, read> mat_values_hi: array<Real>;

fn spmv_row_sum(row: u32) -> RowSum {
    var sum = row_zero();
    let split = mat_info.split;
    let start = mat_row_ptr[row];
    let end = mat_row_ptr[row + 1u];
    for (var k = start; k < min(end, split); k = k + 1u) {
        sum = row_fma(sum, mat_values[k], spmv_x(mat_col_idx[k]));
    }
    for (var k = max(start, split); k < end; k = k + 1u) {
        sum = row_fma(sum, mat_values_hi[k - split], spmv_x(mat_col_idx_hi[k - split]));
    }
    return sum;
}
