// format_ell.wgsl: ELLPACK, column-major (entry k of row i at k·rows + i, padding has value 0
// and a valid column): one thread per row, consecutive threads load adjacent words; chunks
// from format_rows.wgsl. `mat_info.width` = entries per row. Layout: src/matrix/ell.rs.

@group(0) @binding(20) var<uniform> mat_info: MatInfo;
@group(0) @binding(21) var<storage, read> mat_col_idx: array<u32>;
@group(0) @binding(22) var<storage, read> mat_values: array<Real>;

fn spmv_row_sum(row: u32) -> RowSum {
    var sum = row_zero();
    for (var k = 0u; k < mat_info.width; k = k + 1u) {
        let idx = k * mat_info.rows + row;
        sum = row_fma(sum, mat_values[idx], spmv_x(mat_col_idx[idx]));
    }
    return sum;
}
