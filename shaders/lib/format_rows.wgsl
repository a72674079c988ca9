// format_rows.wgsl: the spmv_row.wgsl interface for the formats with one thread per row in
// the original order (CSR, ELL, DIA). Each of them defines `mat_info` and
//   fn spmv_row_sum(row: u32) -> RowSum    (row `row` of A times the vector)
// and gets its row chunks from here: chunk c is rows c·WG .. c·WG + WG − 1.

// Thread `lid` of chunk c gets row c·WG + lid: a kernel may keep what it derives for its rows
// in its own registers (cg_workgroup); SELL-C-σ and BCSR hand rows out in their own order.
const spmv_rows_owned: bool = true;

fn spmv_passes() -> u32 {
    return mat_info.passes;
}

fn spmv_pass(chunk: u32, lid: u32) -> SpmvRow {
    let row = chunk * WG + lid;
    if row < mat_info.rows {
        return SpmvRow(row, spmv_row_sum(row), true);
    }
    return SpmvRow(row, row_zero(), false);
}

fn spmv_row_of(chunk: u32, lid: u32) -> u32 {
    let row = chunk * WG + lid;
    if row < mat_info.rows {
        return row;
    }
    return SPMV_NO_ROW;
}
