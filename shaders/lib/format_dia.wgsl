// format_dia.wgsl: DIA (paper 001 §3.2): diagonal d has offset mat_offsets[d] (column − row)
// and its values at d·rows + i for row i; columns outside [0, cols) are skipped, never wrapped.
// One thread per row; no column indices are loaded at all. Implements spmv_row.wgsl;
// `mat_info.width` = number of diagonals. Layout: src/matrix/dia.rs.

@group(0) @binding(20) var<uniform> mat_info: MatInfo;
@group(0) @binding(21) var<storage, read> mat_offsets: array<i32>;
@group(0) @binding(22) var<storage, read> mat_values: array<Real>;

fn spmv_passes() -> u32 {
    return mat_info.passes;
}

fn spmv_pass(chunk: u32, lid: u32) -> SpmvRow {
    let row = chunk * WG + lid;
    var out = SpmvRow(row, Real(0.0), false);
    if row < mat_info.rows {
        var sum = Real(0.0);
        for (var d = 0u; d < mat_info.width; d = d + 1u) {
            let col = i32(row) + mat_offsets[d];
            if col >= 0 && u32(col) < mat_info.cols {
                sum = sum + mat_values[d * mat_info.rows + row] * spmv_x(u32(col));
            }
        }
        out.value = sum;
        out.valid = true;
    }
    return out;
}
