// ca_powers: one SpMV step of CA-GMRES's matrix powers kernel (paper 002 §IV; CPU twin
// `cpu::cagmres::powers::matrix_powers`) on vectors of the basis pool (vector k at k·n):
//
//   pool[dst] = c_A·(A·pool[src]) + c_s·pool[src] + c_p·pool[prev]
//
// with (c_A, c_s, c_p) = scalars[params.comp .. +3], written by the host once per cycle:
//   monomial step                         (1/σ, 0, 0)
//   Newton step, real shift θ             (1/σ, −θ/σ, 0)
//   second half of a pair a ± ib          (1/σ, −a/σ, b²/σ²)   (Hoemmen §7.3.2, real arithmetic)
//   restart residual r = b − A·x          (−1, 0, 1) with src = x, prev = b
//
// params: num = src, den = prev, dst = dst, comp = the coefficients' index. No status test:
// the host drives CA-GMRES block by block.

@group(0) @binding(5) var<storage, read_write> pool: array<Real>;

fn spmv_x(col: u32) -> Real {
    return pool[params.num * params.n + col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let c_a = scalars[params.comp];
    let c_s = scalars[params.comp + 1u];
    let c_p = scalars[params.comp + 2u];
    let src = params.num * n;
    let prev = params.den * n;
    let dst = params.dst * n;
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let y = spmv_pass(chunk, ids.lid);
        if y.valid {
            var v = c_a * y.value + c_s * pool[src + y.row];
            if c_p != Real(0.0) {
                v = v + c_p * pool[prev + y.row];
            }
            pool[dst + y.row] = v;
        }
    }
}
