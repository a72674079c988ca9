// format_sell.wgsl: SELL-C-σ: rows sorted by length within windows of σ, cut into slices of
// SELL_C slots (C = the adapter's subgroup size), each slice padded to its longest row and
// stored column-major (entry k of lane l at slice_ptr[s] + k·C + l). One thread per slot; the
// slot's original row comes from mat_perm (u32 max: a padding slot). Implements
// spmv_row.wgsl; `mat_info.width` = slots. Layout: src/matrix/sell.rs.

// Rows come in sorted order, not row c·WG + lid for thread lid (format_rows.wgsl).
const spmv_rows_owned: bool = false;

@group(0) @binding(20) var<uniform> mat_info: MatInfo;
@group(0) @binding(21) var<storage, read> mat_slice_ptr: array<u32>;
@group(0) @binding(22) var<storage, read> mat_col_idx: array<u32>;
@group(0) @binding(23) var<storage, read> mat_values: array<Real>;
@group(0) @binding(24) var<storage, read> mat_perm: array<u32>;

fn spmv_passes() -> u32 {
    return mat_info.passes;
}

fn spmv_pass(chunk: u32, lid: u32) -> SpmvRow {
    let slot = chunk * WG + lid;
    var out = SpmvRow(0u, row_zero(), false);
    if slot < mat_info.width {
        let row = mat_perm[slot];
        if row != 0xffffffffu {
            let slice = slot / SELL_C;
            let start = mat_slice_ptr[slice] + slot % SELL_C;
            let len = (mat_slice_ptr[slice + 1u] - mat_slice_ptr[slice]) / SELL_C;
            var sum = row_zero();
            for (var k = 0u; k < len; k = k + 1u) {
                let idx = start + k * SELL_C;
                sum = row_fma(sum, mat_values[idx], spmv_x(mat_col_idx[idx]));
            }
            out = SpmvRow(row, sum, true);
        }
    }
    return out;
}

fn spmv_row_of(chunk: u32, lid: u32) -> u32 {
    let slot = chunk * WG + lid;
    if slot < mat_info.width {
        return mat_perm[slot];
    }
    return SPMV_NO_ROW;
}
