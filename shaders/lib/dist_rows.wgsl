// dist_rows.wgsl: the row product of one device's block of A (CSR in local numbering, halo
// columns after the owned ones) for the distributed products dist_spmv_dot and
// dist_bicgstab_spmv. Entries below `dist.split` are in cols/vals, the rest in
// cols_hi/vals_hi (a block larger than one storage binding); an unsplit block runs the plain
// CSR loop of format_csr.wgsl. The kernel defines `fn dist_x(col: u32) -> Real`, the entry
// of the vector (with its halo) being multiplied. On lib/dist.wgsl.

@group(0) @binding(5) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(6) var<storage, read> cols: array<u32>;
@group(0) @binding(7) var<storage, read> vals: array<Real>;
@group(0) @binding(11) var<storage, read> cols_hi: array<u32>;
@group(0) @binding(12) var<storage, read> vals_hi: array<Real>;

fn dist_row(i: u32) -> Real {
    let b = row_ptr[i];
    let e = row_ptr[i + 1u];
    let split = dist.split;
    var s = Real(0.0);
    let e_lo = min(e, split);
    for (var k = b; k < e_lo; k = k + 1u) {
        s = s + vals[k] * dist_x(cols[k]);
    }
    if e > split {
        for (var k = max(b, split); k < e; k = k + 1u) {
            s = s + vals_hi[k - split] * dist_x(cols_hi[k - split]);
        }
    }
    return s;
}
