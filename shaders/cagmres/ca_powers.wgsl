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
// Right preconditioning multiplies A·M⁻¹: with Jacobi (params.jacobi) the SpMV reads
// D⁻¹·pool[src] on the fly; with a factored M (flag CA_VIN) it reads M⁻¹·pool[src] from
// `vin`, where the host's triangular solves left it (the shift term keeps pool[src]).
//
// params: num = src, den = prev, dst = dst, comp = the coefficients' index, flags. No status
// test: the host drives CA-GMRES block by block.

const CA_VIN: u32 = 16u;

@group(0) @binding(6) var<storage, read> vin: array<Real>;
@group(0) @binding(11) var<storage, read> dinv: array<Real>;

fn spmv_x(col: u32) -> Real {
    if (params.flags & CA_VIN) != 0u {
        return vin[col];
    }
    let v = pool_get(params.num * params.n + col);
    if params.jacobi != 0u {
        return dinv[col] * v;
    }
    return v;
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
            var v = c_a * y.value + c_s * pool_get(src + y.row);
            if c_p != Real(0.0) {
                v = v + c_p * pool_get(prev + y.row);
            }
            pool_set(dst + y.row, v);
        }
    }
}
