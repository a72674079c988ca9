// format_bcsr.wgsl: BCSR with BCSR_N×BCSR_N blocks in the multiple-block-row (MBR) mapping of
// paper 003 §3.3–3.6. A workgroup (chunk) owns BCSR_BY block rows; in step t each of them
// processes BCSR_BX blocks, one thread per block element, so the WG threads of a step load
// WG consecutive values (block reordering, §3.4). Block rows are sorted by length and padded
// per chunk to the same number of steps (§3.4–3.5); mat_block_row maps a slot back to its
// block row (u32 max: padding). Per-thread sums are reduced over the BCSR_BX·BCSR_N columns
// of each row in workgroup memory. Implements spmv_row.wgsl. Layout: src/matrix/bcsr.rs.

// Rows come in sorted order, not row c·WG + lid for thread lid (format_rows.wgsl).
const spmv_rows_owned: bool = false;

@group(0) @binding(20) var<uniform> mat_info: MatInfo;
@group(0) @binding(21) var<storage, read> mat_pass_ptr: array<u32>;
@group(0) @binding(22) var<storage, read> mat_block_col: array<u32>;
@group(0) @binding(23) var<storage, read> mat_values: array<Real>;
@group(0) @binding(24) var<storage, read> mat_block_row: array<u32>;

var<workgroup> mat_partial: array<RowSum, WG>;

fn spmv_passes() -> u32 {
    return mat_info.passes;
}

fn spmv_pass(chunk: u32, lid: u32) -> SpmvRow {
    let nn = BCSR_N * BCSR_N;
    let per_slot = BCSR_BX * nn;
    let j = lid / per_slot;
    let within = lid % per_slot;
    let q = within / nn;
    let e = within % nn;
    let r = e / BCSR_N;
    let c = e % BCSR_N;
    let start = mat_pass_ptr[chunk];
    let steps = (mat_pass_ptr[chunk + 1u] - start) / (BCSR_BY * BCSR_BX);
    var acc = row_zero();
    for (var t = 0u; t < steps; t = t + 1u) {
        let blk = start + (t * BCSR_BY + j) * BCSR_BX + q;
        let col = mat_block_col[blk] * BCSR_N + c;
        if col < mat_info.cols {
            acc = row_fma(acc, mat_values[blk * nn + e], spmv_x(col));
        }
    }
    // The previous chunk's readers are done before the scratch is overwritten.
    workgroupBarrier();
    mat_partial[lid] = acc;
    workgroupBarrier();
    var out = SpmvRow(0u, row_zero(), false);
    if q == 0u && c == 0u {
        let br = mat_block_row[chunk * BCSR_BY + j];
        let row = br * BCSR_N + r;
        if br != 0xffffffffu && row < mat_info.rows {
            var sum = row_zero();
            let base = j * per_slot + r * BCSR_N;
            for (var qq = 0u; qq < BCSR_BX; qq = qq + 1u) {
                for (var cc = 0u; cc < BCSR_N; cc = cc + 1u) {
                    sum = row_add(sum, mat_partial[base + qq * nn + cc]);
                }
            }
            out = SpmvRow(row, sum, true);
        }
    }
    return out;
}

// The thread of `spmv_pass` that hands out a row: the first element of its block row's slot.
fn spmv_row_of(chunk: u32, lid: u32) -> u32 {
    let nn = BCSR_N * BCSR_N;
    let per_slot = BCSR_BX * nn;
    let j = lid / per_slot;
    let within = lid % per_slot;
    let e = within % nn;
    if within / nn != 0u || e % BCSR_N != 0u || j >= BCSR_BY {
        return SPMV_NO_ROW;
    }
    let br = mat_block_row[chunk * BCSR_BY + j];
    let row = br * BCSR_N + e / BCSR_N;
    if br == 0xffffffffu || row >= mat_info.rows {
        return SPMV_NO_ROW;
    }
    return row;
}
