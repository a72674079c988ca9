// format_dia.wgsl: DIA (paper 001 §3.2): diagonal d has offset mat_offsets[d] (column − row)
// and its values at d·rows + i for row i; columns outside [0, cols) are skipped, never wrapped.
// One thread per row, no column indices loaded at all; chunks from format_rows.wgsl.
// `mat_info.width` = number of diagonals. Layout: src/matrix/dia.rs.

@group(0) @binding(20) var<uniform> mat_info: MatInfo;
@group(0) @binding(21) var<storage, read> mat_offsets: array<i32>;
@group(0) @binding(22) var<storage, read> mat_values: array<Real>;

fn spmv_row_sum(row: u32) -> RowSum {
    var sum = row_zero();
    for (var d = 0u; d < mat_info.width; d = d + 1u) {
        let col = i32(row) + mat_offsets[d];
        if col >= 0 && u32(col) < mat_info.cols {
            sum = row_fma(sum, mat_values[d * mat_info.rows + row], spmv_x(u32(col)));
        }
    }
    return sum;
}
