// spmv_row.wgsl: the interface every storage format implements (shaders/lib/format_*.wgsl),
// so that each solver kernel is written once and runs on every format.
//
// A format provides, for matrix binding set `mat_` (bindings 20–24; a kernel with two
// matrices, like BiCG's A and Aᵀ, gets a second copy renamed `matt_`/`spmvt_` at 25–29):
//
//   fn spmv_passes() -> u32                    row chunks of the matrix (one workgroup each)
//   fn spmv_pass(chunk: u32, lid: u32) -> SpmvRow
//
// `spmv_pass` computes one chunk of y = A·x with the whole workgroup and hands each thread at
// most one finished row (`valid`). Rows may come in any order (formats that sort rows, like
// SELL-C-σ and BCSR, return the original row index). It may use workgroup barriers, so it
// must be called in uniform control flow: kernels loop
//
//   for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk += params.groups) { ... }
//
// The kernel defines `fn spmv_x(col: u32) -> Real`, the entry `col` of the vector being
// multiplied (a buffer, a pool vector, or a direction formed on the fly).
//
// It also provides
//
//   fn spmv_row_of(chunk: u32, lid: u32) -> u32
//
// the row `spmv_pass(chunk, lid)` hands thread `lid` (SPMV_NO_ROW for none) without
// computing it, so a kernel can revisit the rows its product wrote (fused GMRES's inner
// products over its own rows, `gmres_scale_spmv_dots`).
//
// and `const spmv_rows_owned: bool`, true where thread `lid` of chunk c always gets row
// c·WG + lid (the row-per-thread formats), so a kernel can keep per-row values in registers.
//
// A format accumulates a row only through `row_zero`, `row_fma` and `row_add` into a
// `RowSum` (shaders/lib/row_sum.wgsl: Real, plain, for every kernel by default; the piece
// ds_rows.wgsl: double-single with exact products), so one row loop serves both.

const SPMV_NO_ROW: u32 = 0xffffffffu;

struct SpmvRow {
    row: u32,
    value: RowSum,
    valid: bool,
}

// The uniform every format binds first: sizes and the format's own extent.
struct MatInfo {
    rows: u32,
    cols: u32,
    // ELL: entries per row; DIA: diagonals; SELL: slots; BCSR: slots.
    width: u32,
    // Chunks of WG rows (or slots) covering the matrix.
    passes: u32,
    // CSR over two bindings (format_csr_split.wgsl): entries from `split` on are in the
    // second pair of arrays.
    split: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}
