// gmres_update_x: the solution update at the end of a GMRES(m) cycle, in one kernel
// (paper 000, Alg. 5 l.22 / Alg. 6 l.21), both variants:
//
//   x += D⁻¹ (η_r·r + Σ_{i=1..k} η_i·v_{i−1})      (D⁻¹ only with Jacobi right preconditioning)
//
// The coefficients are uploaded by the host after its triangular solve R η = ξ, into the
// cycle buffer (`scalars`) at `params.comp`: [k, η_r, η_1, …, η_k]. Pipelined GMRES has
// η_r = 0 (its r is never updated); classical GMRES writes the update with its updated
// residual (η_r = η_1/ρ0, η_1 → 0, η_i → η̃_i). The basis v_0 … v_{k−1} is vectors 0 … k−1 of
// the pool, r is vector `params.num`, x is vector `params.dst`.
//
// With a factored M (ILU(0)/IC(0)) the update is x += M⁻¹u, u = η_r·r + Σ η_i·v_{i−1}: a
// first launch with GM_FLAG_STORE writes u into pool vector `dst` (= z) instead of adding it,
// the host records z = M⁻¹z (triangular solves), and a second launch adds z to x (k = 0,
// η_r = 1, `num` = z).
//
// No status test: this applies the previous cycle, whatever stopped it.

const GM_FLAG_STORE: u32 = 1u;

@group(0) @binding(11) var<storage, read> dinv: array<Real>;

var<workgroup> gm_k: Real;
var<workgroup> gm_eta_r: Real;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let base = params.comp;
    if ids.lid == 0u {
        gm_k = scalars[base];
        gm_eta_r = scalars[base + 1u];
    }
    let k = u32(workgroupUniformLoad(&gm_k));
    let eta_r = workgroupUniformLoad(&gm_eta_r);
    let r_off = params.num * n;
    let x_off = params.dst * n;
    for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + params.groups * WG) {
        var s = eta_r * pool_get(r_off + row);
        for (var i = 1u; i <= k; i = i + 1u) {
            s = s + scalars[base + 1u + i] * pool_get((i - 1u) * n + row);
        }
        if params.jacobi != 0u {
            s = dinv[row] * s;
        }
        if (params.flags & GM_FLAG_STORE) != 0u {
            pool_set(x_off + row, s);
        } else {
            pool_set(x_off + row, pool_get(x_off + row) + s);
        }
    }
}
