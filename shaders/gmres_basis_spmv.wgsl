// gmres_basis_spmv: y = A·x on vectors of the Krylov pool (vector k at offset k·n): the
// plain SpMV launch of classical GMRES(m) (paper 000, Alg. 5 l.7), y = pool vector
// `params.dst`, x = pool vector `params.num`. Tests the status word first.

@group(0) @binding(5) var<storage, read_write> pool: array<Real>;
@group(0) @binding(6) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(7) var<storage, read> col_idx: array<u32>;
@group(0) @binding(8) var<storage, read> values: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let n = params.n;
    let x_off = params.num * n;
    let y_off = params.dst * n;
    for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + params.groups * WG) {
        var sum = Real(0.0);
        let end = row_ptr[row + 1u];
        for (var k = row_ptr[row]; k < end; k = k + 1u) {
            sum = sum + values[k] * pool[x_off + col_idx[k]];
        }
        pool[y_off + row] = sum;
    }
}
